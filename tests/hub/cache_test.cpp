// sparkdoc's cache of fetched headers: where it is, a revision complete only once its folder is
// in place with its marker, an older fetch replaced whole, and links refused, not followed.
#include "hub/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sparkdoc::hub {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class Cache : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("hub_cache_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    id_ = *parse_model_id("org/name");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
  ModelId id_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CacheMarkerText, RoundTripsAndToleratesJunk) {
  CacheMarker m{
      "https://huggingface.co", "abc", "2026-12-01T00:00:00Z", 14, 1234567, 61'234'567'890};
  EXPECT_EQ(parse_cache_marker(render_cache_marker(m)), m);
  EXPECT_FALSE(parse_cache_marker("not json"));
  EXPECT_FALSE(parse_cache_marker("[1]"));
  auto wrong = parse_cache_marker(R"({"endpoint": 5, "shards": -1, "commit": "c"})");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->endpoint, "");
  EXPECT_EQ(wrong->shards, 0u);
  EXPECT_EQ(wrong->commit, "c");
}

TEST_F(Cache, ARevisionIsCompleteOnlyOnceCommitted) {
  auto cache = ModelCache::open(root_.string(), id_);
  ASSERT_TRUE(cache) << cache.error().message;
  EXPECT_EQ(cache->path(), (root_ / "hub" / "models--org--name").string());
  EXPECT_FALSE(cache->complete("main"));
  std::string staged;
  {
    auto staging = cache->stage("main");
    ASSERT_TRUE(staging) << staging.error().message;
    staged = staging->path();
    ASSERT_TRUE(staging->write("config.json", "{}"));
    EXPECT_FALSE(cache->complete("main"));
    // Dropped without commit: nothing stays.
  }
  EXPECT_FALSE(fs::exists(staged));
  auto staging = cache->stage("main");
  ASSERT_TRUE(staging);
  ASSERT_TRUE(staging->write("config.json", "{\"a\":1}"));
  auto dir = cache->commit(*staging, "main", CacheMarker{"http://e", "c1", "t", 1, 2, 3});
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(cache->complete("main"), dir.value());
  EXPECT_EQ(slurp(fs::path(*dir) / "config.json"), "{\"a\":1}");
  EXPECT_EQ(cache->marker("main")->commit, "c1");
  EXPECT_TRUE(fs::is_regular_file(fs::path(*dir) / ".complete"));
}

TEST_F(Cache, AnOlderFetchIsReplacedWhole) {
  auto cache = ModelCache::open(root_.string(), id_);
  ASSERT_TRUE(cache);
  for (std::string round : {"first", "second"}) {
    auto staging = cache->stage("main");
    ASSERT_TRUE(staging);
    ASSERT_TRUE(staging->write(round + ".safetensors", round));
    ASSERT_TRUE(cache->commit(*staging, "main", CacheMarker{"e", round, "t", 1, 1, 1}));
  }
  const fs::path main = root_ / "hub" / "models--org--name" / "main";
  EXPECT_FALSE(fs::exists(main / "first.safetensors"));
  EXPECT_TRUE(fs::exists(main / "second.safetensors"));
  EXPECT_EQ(cache->marker("main")->commit, "second");
  // Nothing is left beside the revision: no staging folder, no old copy.
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(main.parent_path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
}

TEST_F(Cache, ALinkInTheCacheIsRefusedNotFollowed) {
  fs::create_directories(root_ / "elsewhere");
  fs::create_directories(root_ / "cache");
  fs::create_directory_symlink(root_ / "elsewhere", root_ / "cache" / "hub");
  auto cache = ModelCache::open((root_ / "cache").string(), id_);
  ASSERT_FALSE(cache);
  EXPECT_THAT(cache.error().message, HasSubstr("is a symbolic link, not a folder"));
  EXPECT_THAT(cache.error().message, HasSubstr("SPARKDOC_CACHE"));
  EXPECT_TRUE(fs::is_empty(root_ / "elsewhere"));
}

TEST_F(Cache, AFileAtTheMarkerNameMustBeAFile) {
  auto cache = ModelCache::open(root_.string(), id_);
  ASSERT_TRUE(cache);
  const fs::path main = root_ / "hub" / "models--org--name" / "main";
  fs::create_directories(main);
  fs::create_symlink("/etc/hostname", main / ".complete");
  EXPECT_FALSE(cache->complete("main"));
}

}  // namespace
}  // namespace sparkdoc::hub
