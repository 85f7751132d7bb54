// The loader model: glibc's search order over a fixture tree, and the ld.so.cache parser over
// built tables and this machine's own cache.
#include "elf/loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "elf/ld_cache.h"

namespace sparkdoc::elf {
namespace {

namespace fs = std::filesystem;

// A new-format cache holding `entries` (flags, soname, path).
std::string new_cache(const std::vector<LdCacheEntry>& entries) {
  std::string header(48, '\0');
  std::memcpy(header.data(), "glibc-ld.so.cache1.1", 20);
  std::string table;
  std::string strings;
  size_t strings_at = 48 + entries.size() * 24;
  for (const LdCacheEntry& e : entries) {
    uint32_t key = static_cast<uint32_t>(strings_at + strings.size());
    strings += e.soname + '\0';
    uint32_t value = static_cast<uint32_t>(strings_at + strings.size());
    strings += e.path + '\0';
    char entry[24] = {};
    std::memcpy(entry, &e.flags, 4);
    std::memcpy(entry + 4, &key, 4);
    std::memcpy(entry + 8, &value, 4);
    std::memcpy(entry + 16, &e.hwcap, 8);
    table.append(entry, 24);
  }
  uint32_t count = static_cast<uint32_t>(entries.size());
  uint32_t length = static_cast<uint32_t>(strings.size());
  std::memcpy(header.data() + 20, &count, 4);
  std::memcpy(header.data() + 24, &length, 4);
  return header + table + strings;
}

TEST(LdCache, ParsesTheNewFormat) {
  std::vector<LdCacheEntry> entries = {
      {kLdCacheAArch64, "libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13", 0},
      {kLdCacheX86_64, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", 0}};
  auto parsed = parse_ld_cache(new_cache(entries));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(*parsed, entries);
}

TEST(LdCache, ReadsAnOldHeaderFollowedByANewTable) {
  std::string old(16, '\0');
  std::memcpy(old.data(), "ld.so-1.7.0", 11);  // no old entries
  std::vector<LdCacheEntry> entries = {{kLdCacheX86_64, "libz.so.1", "/usr/lib/libz.so.1", 0}};
  auto parsed = parse_ld_cache(old + new_cache(entries));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(*parsed, entries);
}

TEST(LdCache, MalformedTablesAreErrorsNeverCrashes) {
  std::string good = new_cache({{kLdCacheX86_64, "libz.so.1", "/usr/lib/libz.so.1", 0}});
  for (size_t n = 0; n < good.size(); ++n) {
    auto parsed = parse_ld_cache(good.substr(0, n));
    if (n < good.size()) {
      EXPECT_FALSE(parsed && !parsed->empty() && n < 48) << n;
    }
  }
  EXPECT_FALSE(parse_ld_cache("garbage"));
  std::string huge = good;
  uint32_t count = 0xffffffff;
  std::memcpy(huge.data() + 20, &count, 4);
  EXPECT_FALSE(parse_ld_cache(huge));
  std::string outside = good;
  uint32_t key = 1u << 30;
  std::memcpy(outside.data() + 48 + 4, &key, 4);
  auto parsed = parse_ld_cache(outside);
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message, ::testing::HasSubstr("outside the file"));
}

TEST(LdCache, ReadsThisMachinesCacheWhenThereIsOne) {
  auto entries = read_ld_cache(Root());
  if (!entries && entries.error().why == Why::kAbsent) GTEST_SKIP() << "no /etc/ld.so.cache";
  ASSERT_TRUE(entries) << entries.error().message;
  bool libc = false;
  for (const auto& e : *entries) libc |= e.soname == "libc.so.6";
  EXPECT_TRUE(libc);
}

// A machine tree: /site/pkg/ext.so needs libs found by each rule in turn.
class Loader : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "sparkdoc-loader-" + std::to_string(::getpid());
    fs::remove_all(root_);
    for (const char* file : {"/site/pkg/libs/librp.so.1", "/site/pkg/libs/libboth.so.1",
                             "/runpath/librun.so.1", "/runpath/libboth.so.1", "/llp/libboth.so.1",
                             "/llp/libllp.so.1", "/cached/libcache.so.1",
                             "/usr/lib/x86_64-linux-gnu/libdefault.so.1",
                             "/cached/libstale-target.so.1"}) {
      fs::create_directories(fs::path(root_ + file).parent_path());
      std::ofstream(root_ + file) << "x";
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  LoaderModel model(std::string llp = "/llp") {
    LibrarySearch o;
    o.root = Root(root_);
    o.ld_library_path = std::move(llp);
    o.ld_cache = {{kLdCacheX86_64, "libcache.so.1", "/cached/libcache.so.1", 0},
                  {kLdCacheAArch64, "libarm.so.1", "/cached/libcache.so.1", 0},
                  {kLdCacheX86_64, "libstale.so.1", "/cached/gone.so.1", 0}};
    o.ld_cache_flags = kLdCacheX86_64;
    o.default_dirs = default_directories("x86_64-linux-gnu");
    o.loaded = {{"libcudart.so.13", "/site/nvidia/cu13/lib/libcudart.so.13"}};
    return LoaderModel(std::move(o));
  }

  std::string root_;
};

TEST_F(Loader, FollowsGlibcsOrder) {
  auto m = model();
  DynamicInfo rpath;
  rpath.rpath = {"$ORIGIN/libs"};
  DynamicInfo runpath;
  runpath.runpath = {"/runpath"};
  const std::string ext = "/site/pkg/ext.so";

  EXPECT_EQ(m.find(ext, rpath, "libcudart.so.13").via, FoundVia::kLoaded);
  auto rp = m.find(ext, rpath, "librp.so.1");
  EXPECT_EQ(rp.via, FoundVia::kRpath);
  EXPECT_EQ(rp.path, "/site/pkg/libs/librp.so.1");
  // DT_RPATH comes before LD_LIBRARY_PATH, DT_RUNPATH after it.
  EXPECT_EQ(m.find(ext, rpath, "libboth.so.1").path, "/site/pkg/libs/libboth.so.1");
  EXPECT_EQ(m.find(ext, runpath, "libboth.so.1").path, "/llp/libboth.so.1");
  EXPECT_EQ(m.find(ext, runpath, "librun.so.1").via, FoundVia::kRunpath);
  EXPECT_EQ(m.find(ext, rpath, "libcache.so.1").via, FoundVia::kLdCache);
  EXPECT_EQ(m.find(ext, rpath, "libarm.so.1").via, FoundVia::kNotFound) << "other arch";
  EXPECT_EQ(m.find(ext, rpath, "libstale.so.1").via, FoundVia::kNotFound) << "stale entry";
  EXPECT_EQ(m.find(ext, rpath, "libdefault.so.1").via, FoundVia::kDefaultDir);
  auto missing = m.find(ext, rpath, "libcudart.so.12");
  EXPECT_EQ(missing.via, FoundVia::kNotFound);
  EXPECT_FALSE(missing.path);
}

TEST_F(Loader, RunpathSwitchesOffRpathIncludingTheLoadersChain) {
  auto m = model("");
  DynamicInfo both;
  both.rpath = {"$ORIGIN/libs"};
  both.runpath = {"/runpath"};
  EXPECT_EQ(m.find("/site/pkg/ext.so", both, "librp.so.1").via, FoundVia::kNotFound);
  DynamicInfo none;
  EXPECT_EQ(m.find("/site/x/ext.so", none, "librp.so.1", {{"/site/pkg/libs"}}).via,
            FoundVia::kRpath);
  EXPECT_EQ(m.find("/site/x/ext.so", both, "librp.so.1", {{"/site/pkg/libs"}}).via,
            FoundVia::kNotFound);
}

TEST(ExpandOrigin, BothSpellingsAndNormalisation) {
  EXPECT_THAT(expand_origin({"$ORIGIN/../../nvidia/cu13/lib", "${ORIGIN}", "/abs/$LIB"},
                            "/venv/site/torch/lib"),
              ::testing::ElementsAre("/venv/site/nvidia/cu13/lib", "/venv/site/torch/lib",
                                     "/abs/$LIB"));
}

}  // namespace
}  // namespace sparkdoc::elf
