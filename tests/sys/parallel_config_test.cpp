#include "sys/parallel_config.h"

#include <gtest/gtest.h>

#include "printers.h"
#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

ParallelConfigHit hit(unsigned line, std::string key, std::string value) {
  return ParallelConfigHit{"", line, std::move(key), std::move(value)};
}

TEST(FindParallelKeys, EveryWritingStyle) {
  auto hits = find_parallel_keys(
      "tensor_parallel_size: 2\n"
      "tp_size=4\n"
      "  \"tensor_model_parallel_size\": 8,\n"
      "vllm serve m --tensor-parallel-size 2 --port 8000\n"
      "vllm serve m --tensor-parallel-size=4\n"
      "TP_SIZE=\"2\"\n"
      "tp_degree = 2  # toml\n"
      "tensor_parallel: 2\n");
  std::vector<ParallelConfigHit> want = {
      hit(1, "tensor_parallel_size", "2"),
      hit(2, "tp_size", "4"),
      hit(3, "tensor_model_parallel_size", "8"),
      hit(4, "tensor-parallel-size", "2"),
      hit(5, "tensor-parallel-size", "4"),
      hit(6, "TP_SIZE", "2"),
      hit(7, "tp_degree", "2"),
      hit(8, "tensor_parallel", "2"),
  };
  EXPECT_EQ(hits, want);
}

TEST(FindParallelKeys, ValuesAsWritten) {
  auto hits = find_parallel_keys(
      "tensor_parallel_size: ${TP}\n--tensor-parallel-size \"$TP_SIZE\" \\\ntp_size: null\n");
  std::vector<ParallelConfigHit> want = {hit(1, "tensor_parallel_size", "${TP}"),
                                         hit(2, "tensor-parallel-size", "$TP_SIZE"),
                                         hit(3, "tp_size", "null")};
  EXPECT_EQ(hits, want);
}

TEST(FindParallelKeys, NotMatches) {
  EXPECT_TRUE(find_parallel_keys("max_tp_size: 4\n").empty());  // part of a longer key
  EXPECT_TRUE(find_parallel_keys("tp_sizes: [1, 2]\n").empty());
  EXPECT_TRUE(find_parallel_keys("tensor_parallel_size:\n").empty());   // no value
  EXPECT_TRUE(find_parallel_keys("tensor_parallel_size 2\n").empty());  // not a flag
  EXPECT_TRUE(find_parallel_keys("--tensor-parallel-size --port 8000\n").empty());
  EXPECT_TRUE(find_parallel_keys("--tensor-parallel-size\n").empty());
  EXPECT_TRUE(find_parallel_keys("use tensor parallelism\n").empty());
  EXPECT_TRUE(find_parallel_keys("").empty());
  EXPECT_TRUE(find_parallel_keys("tp_size: \"2").empty());  // unterminated quote
}

TEST(FindParallelKeys, NestedBlockGivesInnerKey) {
  auto hits = find_parallel_keys("  \"tensor_parallel\": {\"tp_size\": 2},\n");
  std::vector<ParallelConfigHit> want = {hit(1, "tp_size", "2")};
  EXPECT_EQ(hits, want);
}

TEST(FindParallelKeys, CommentedOutSettingsAreNotInForce) {
  EXPECT_TRUE(find_parallel_keys("# tensor_parallel_size: 4\n").empty());
  EXPECT_TRUE(find_parallel_keys("   #--tensor-parallel-size 2\n").empty());
  EXPECT_TRUE(find_parallel_keys("; tp_size = 2\n").empty());
  EXPECT_TRUE(find_parallel_keys("model: m  # was tensor_parallel_size: 2\n").empty());
  auto hits = find_parallel_keys("tp_size: 1  # tp_size: 2 on two nodes\n");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].value, "1");
}

TEST(FindParallelKeys, TwoOnOneLineAndCrlf) {
  auto hits = find_parallel_keys("a --tensor-parallel-size 2 b --tp_size=2\r\ntp_size: 1\r\n");
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[1].key, "tp_size");
  EXPECT_EQ(hits[2].value, "1");
}

TEST(ScanParallelConfigs, DepthSkipsAndLimits) {
  testing::TempTree tree;
  tree.write("serve.sh", "vllm serve m --tensor-parallel-size 2\n");
  tree.write("configs/lora.yaml", "x: 1\ntensor_parallel_size: 2\n");
  tree.write("configs/deep/too_deep.yaml", "tp_size: 8\n");
  tree.write(".hidden/x.yaml", "tp_size: 8\n");
  tree.write("node_modules/x.json", "{\"tp_size\": 8}\n");
  tree.write("__pycache__/x.cfg", "tp_size=8\n");
  tree.write("myenv/pyvenv.cfg", "home = /usr/bin\n");
  tree.write("myenv/x.cfg", "tp_size=8\n");
  tree.write("conda/conda-meta/history", "");
  tree.write("conda/x.ini", "tp_size=8\n");
  tree.write("notes.txt", "tp_size: 8\n");
  tree.write(".env", "TP_SIZE=2\n");
  tree.write("big.yaml", std::string((1 << 20) + 1, '#'));
  tree.symlink(tree.path() + "/configs", "linked");
  auto scan = scan_parallel_configs(tree.path());
  ASSERT_TRUE(scan) << scan.error().message;
  EXPECT_EQ(scan->directory, tree.path());
  EXPECT_EQ(scan->files_scanned, 3u);
  std::vector<ParallelConfigHit> want = {
      ParallelConfigHit{".env", 1, "TP_SIZE", "2"},
      ParallelConfigHit{"serve.sh", 1, "tensor-parallel-size", "2"},
      ParallelConfigHit{"configs/lora.yaml", 2, "tensor_parallel_size", "2"},
  };
  EXPECT_EQ(scan->hits, want);
}

TEST(ScanParallelConfigs, StopsAt200Files) {
  testing::TempTree tree;
  for (int i = 0; i < 250; ++i)
    tree.write("c" + std::to_string(1000 + i) + ".yaml", "tp_size: 2\n");
  auto scan = scan_parallel_configs(tree.path());
  ASSERT_TRUE(scan);
  EXPECT_EQ(scan->files_scanned, 200u);
  EXPECT_EQ(scan->hits.size(), 200u);
  EXPECT_EQ(scan->hits.front().file, "c1000.yaml");
}

TEST(ScanParallelConfigs, MissingDirectoryIsAbsent) {
  auto scan = scan_parallel_configs("/nonexistent-sparkdoc-dir");
  ASSERT_FALSE(scan);
  EXPECT_EQ(scan.error().why, Why::kAbsent);
}

}  // namespace
}  // namespace sparkdoc::sys
