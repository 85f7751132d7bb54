#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "safetensors/checkpoint.h"
#include "safetensors_writer.h"

namespace sparkdoc::safetensors {
namespace {

namespace fs = std::filesystem;
using testing::DataMode;
using testing::write_index;
using testing::write_safetensors;
using testing::WriteTensor;

fs::path fresh(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / ("st_ck_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::pair<std::string, std::vector<WriteTensor>>> two_shards() {
  return {{"model-00001-of-00002.safetensors",
           {{"model.embed_tokens.weight", "BF16", {100, 8}}, {"model.norm.weight", "F32", {8}}}},
          {"model-00002-of-00002.safetensors", {{"lm_head.weight", "BF16", {100, 8}}}}};
}

void write_model(const fs::path& dir, DataMode mode = DataMode::kSparse) {
  uint64_t total = 0;
  for (const auto& [file, ts] : two_shards()) {
    write_safetensors(dir / file, ts, mode);
    total += testing::header_json(ts).second;
  }
  write_index(dir / "model.safetensors.index.json", two_shards(), total);
}

TEST(SafetensorsCheckpoint, OpensAShardedFolderThroughItsIndex) {
  fs::path dir = fresh("sharded");
  write_model(dir);
  auto ck = open_checkpoint(dir.string());
  ASSERT_TRUE(ck) << ck.error().message;
  ASSERT_EQ(ck->shards.size(), 2u);
  EXPECT_EQ(ck->tensors.size(), 3u);
  EXPECT_TRUE(ck->index_path);
  EXPECT_TRUE(ck->notes.empty());
  const auto* lm = ck->find("lm_head.weight");
  ASSERT_NE(lm, nullptr);
  EXPECT_EQ(lm->shard, 1u);
  EXPECT_EQ(lm->offset % 8, 0u);
  EXPECT_EQ(lm->offset, ck->shards[1].header_bytes + 8);
  EXPECT_EQ(lm->numel(), 800u);
  EXPECT_EQ(ck->data_bytes(), 1600u + 32 + 1600);
  // The index file itself is also an entry point.
  auto by_index = open_checkpoint((dir / "model.safetensors.index.json").string());
  ASSERT_TRUE(by_index) << by_index.error().message;
  EXPECT_EQ(by_index->tensors.size(), 3u);
}

TEST(SafetensorsCheckpoint, HeaderOnlyShardsNeedTheHeaderOnlyMode) {
  fs::path dir = fresh("headonly");
  write_model(dir, DataMode::kHeaderOnly);
  auto strict = open_checkpoint(dir.string());
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.error().message.find("truncated"), std::string::npos);
  auto ck = open_checkpoint(dir.string(), {SizeCheck::kHeaderOnly});
  ASSERT_TRUE(ck) << ck.error().message;
  EXPECT_FALSE(ck->shards[0].data_present);
}

TEST(SafetensorsCheckpoint, IndexAndShardsMustAgree) {
  fs::path dir = fresh("disagree");
  write_model(dir);
  auto shards = two_shards();
  shards[1].second.push_back({"extra.weight", "BF16", {2}});
  write_safetensors(dir / shards[1].first, shards[1].second);
  auto r = open_checkpoint(dir.string());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("tensor 'extra.weight' is in the shard but not in the index"),
            std::string::npos);

  write_model(dir);
  auto listed = two_shards();
  listed[0].second.push_back({"ghost.weight", "BF16", {2}});
  write_index(dir / "model.safetensors.index.json", listed, 0);
  auto ghost = open_checkpoint(dir.string());
  ASSERT_FALSE(ghost);
  EXPECT_NE(ghost.error().message.find("'ghost.weight': listed in shard"), std::string::npos);

  write_model(dir);
  auto moved = two_shards();
  std::swap(moved[0].second[1], moved[1].second[0]);
  write_index(dir / "model.safetensors.index.json", moved, 0);
  EXPECT_FALSE(open_checkpoint(dir.string()));

  write_model(dir);
  write_index(dir / "model.safetensors.index.json", two_shards(), 1);
  auto note = open_checkpoint(dir.string());
  ASSERT_TRUE(note);
  ASSERT_EQ(note->notes.size(), 1u);
  EXPECT_NE(note->notes[0].find("total_size is 1"), std::string::npos);
}

TEST(SafetensorsCheckpoint, RejectsATensorInTwoShards) {
  fs::path dir = fresh("twice");
  write_safetensors(dir / "a.safetensors", {{"w", "BF16", {2}}});
  write_safetensors(dir / "b.safetensors", {{"w", "BF16", {2}}});
  auto r = open_checkpoint(dir.string());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("tensor 'w' is in two shards"), std::string::npos);
}

TEST(SafetensorsCheckpoint, SingleFileAndFolderWithoutIndex) {
  fs::path dir = fresh("single");
  write_safetensors(dir / "model.safetensors", {{"w", "BF16", {4, 4}}});
  auto ck = open_checkpoint(dir.string());
  ASSERT_TRUE(ck) << ck.error().message;
  EXPECT_EQ(ck->shards.size(), 1u);
  EXPECT_FALSE(ck->index_path);
  auto file = open_checkpoint((dir / "model.safetensors").string());
  ASSERT_TRUE(file);
  EXPECT_EQ(file->dir, dir.string());

  fs::path loose = fresh("loose");
  write_safetensors(loose / "x-1.safetensors", {{"a", "BF16", {2}}});
  write_safetensors(loose / "x-2.safetensors", {{"b", "BF16", {2}}});
  auto both = open_checkpoint(loose.string());
  ASSERT_TRUE(both) << both.error().message;
  EXPECT_EQ(both->tensors.size(), 2u);
  EXPECT_EQ(both->notes.size(), 1u);

  fs::path none = fresh("none");
  auto r = open_checkpoint(none.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().why, Why::kAbsent);
  EXPECT_FALSE(open_checkpoint((none / "missing").string()));
}

TEST(SafetensorsCheckpoint, ResolvesAHuggingFaceCacheEntry) {
  fs::path root = fresh("cache");
  fs::path entry = root / "models--org--tiny";
  fs::create_directories(entry / "snapshots" / "abc123");
  fs::create_directories(entry / "refs");
  write_model(entry / "snapshots" / "abc123");
  // Only snapshot: taken without refs/main.
  std::string how;
  auto dir = resolve_model_dir(entry.string(), &how);
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(*dir, (entry / "snapshots" / "abc123").string());
  EXPECT_NE(how.find("the only one"), std::string::npos);
  fs::create_directories(entry / "snapshots" / "def456");
  auto ambiguous = resolve_model_dir(entry.string());
  ASSERT_FALSE(ambiguous);
  EXPECT_NE(ambiguous.error().message.find("2 snapshots"), std::string::npos);
  std::ofstream(entry / "refs" / "main") << "abc123\n";
  auto ck = open_checkpoint(entry.string());
  ASSERT_TRUE(ck) << ck.error().message;
  EXPECT_NE(ck->resolved_from.find("refs/main"), std::string::npos);
  EXPECT_EQ(ck->tensors.size(), 3u);
}

}  // namespace
}  // namespace sparkdoc::safetensors
