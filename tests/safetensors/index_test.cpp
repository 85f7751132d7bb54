#include <gtest/gtest.h>

#include "safetensors/index.h"

namespace sparkdoc::safetensors {
namespace {

TEST(SafetensorsIndex, ParsesWeightMapAndTotalSize) {
  auto i = parse_index(R"({"metadata":{"total_size":123,"format":"pt"},
    "weight_map":{"b":"model-00002-of-00002.safetensors","a":"model-00001-of-00002.safetensors",
    "c":"model-00001-of-00002.safetensors"}})");
  ASSERT_TRUE(i) << i.error().message;
  EXPECT_EQ(i->total_size, 123u);
  ASSERT_EQ(i->weight_map.size(), 3u);
  EXPECT_EQ(i->weight_map[0].first, "a");
  ASSERT_EQ(i->shards.size(), 2u);
  EXPECT_EQ(*i->shard_of("b"), "model-00002-of-00002.safetensors");
  EXPECT_EQ(i->shard_of("z"), nullptr);
}

TEST(SafetensorsIndex, ToleratesAFloatTotalSizeAndExtraKeys) {
  auto i = parse_index(R"({"metadata":{"total_size":1.5e3},"x":[1],"weight_map":{"a":"s"}})");
  ASSERT_TRUE(i) << i.error().message;
  EXPECT_FALSE(i->total_size);
  EXPECT_TRUE(parse_index(R"({"metadata":null,"weight_map":{}})"));
}

TEST(SafetensorsIndex, RejectsWhatCannotBeTrusted) {
  auto dup = parse_index(R"({"weight_map":{"a":"s1","a":"s2"}})", "idx.json");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message, "idx.json: tensor 'a' is listed twice in weight_map");
  EXPECT_FALSE(parse_index(R"({"weight_map":{"a":"../etc/passwd"}})"));
  EXPECT_FALSE(parse_index(R"({"weight_map":{"a":"/abs.safetensors"}})"));
  EXPECT_FALSE(parse_index(R"({"weight_map":{"a":"sub//x"}})"));
  EXPECT_TRUE(parse_index(R"({"weight_map":{"a":"sub/x.safetensors"}})"));
  EXPECT_FALSE(parse_index(R"({"weight_map":{"a":1}})"));
  EXPECT_FALSE(parse_index(R"({"metadata":{}})"));
  EXPECT_FALSE(parse_index(R"({"weight_map":{}} trailing)"));
  EXPECT_FALSE(parse_index(R"({"weight_map":{},"weight_map":{}})"));
  EXPECT_FALSE(parse_index("{\"weight_map\":{\"\xff\":\"s\"}}"));
}

}  // namespace
}  // namespace sparkdoc::safetensors
