#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "safetensors/header.h"
#include "safetensors_writer.h"

namespace sparkdoc::safetensors {
namespace {

namespace fs = std::filesystem;
using testing::header_bytes;
using testing::header_json;
using testing::WriteTensor;

// A whole file (header + zero data) in memory.
std::string file_of(const std::string& json, uint64_t data_bytes) {
  return header_bytes(json) + std::string(data_bytes, '\0');
}

Result<Header> parse_file(const std::string& bytes, const HeaderOptions& o = {}) {
  return parse_header(bytes, bytes.size(), "m.safetensors", o);
}

// Raw JSON with a declared data size, for hand-made (malformed) headers.
Result<Header> parse_json(const std::string& json, uint64_t data_bytes,
                          const HeaderOptions& o = {}) {
  return parse_file(file_of(json, data_bytes), o);
}

std::string error_of(const Result<Header>& r) { return r ? std::string("(parsed)") : r.error().message; }

TEST(SafetensorsHeader, ParsesTensorsInOffsetOrderWithMetadata) {
  auto [json, data] = header_json({{"b", "F32", {2, 3}}, {"a", "BF16", {4}}, {"c", "I64", {}}},
                                  {{"format", "pt"}, {"author", "x"}});
  auto h = parse_json(json, data);
  ASSERT_TRUE(h) << h.error().message;
  ASSERT_EQ(h->tensors.size(), 3u);
  EXPECT_EQ(h->tensors[0].name, "b");
  EXPECT_EQ(h->tensors[0].begin, 0u);
  EXPECT_EQ(h->tensors[0].end, 24u);
  EXPECT_EQ(h->tensors[1].name, "a");
  EXPECT_EQ(h->tensors[2].numel(), 1u);  // shape [] is a scalar
  EXPECT_EQ(h->data_bytes, 24u + 8u + 8u);
  EXPECT_TRUE(h->data_present());
  EXPECT_EQ(h->data_start() % 8, 0u);
  ASSERT_EQ(h->metadata.size(), 2u);
  EXPECT_EQ(h->metadata[0].first, "author");
  ASSERT_NE(h->find("a"), nullptr);
  EXPECT_EQ(h->find("a")->dtype, Dtype::kBF16);
  EXPECT_EQ(h->find("zz"), nullptr);
}

// Names travel as C strings through the C ABI to Python: one with a NUL would collide with
// every other name sharing its prefix, so it is refused.
TEST(SafetensorsHeader, ANameWithANulIsRefused) {
  auto r = parse_json(R"({"a\u0000x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                      R"("a\u0000y":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                      2);
  ASSERT_FALSE(r);
  EXPECT_THAT(error_of(r), ::testing::HasSubstr("tensor 'a?x': the name holds a NUL character"));
  EXPECT_TRUE(parse_json(R"({"a\u0001x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1));
}

TEST(SafetensorsHeader, KnowsEveryDtypeOfTheFormat) {
  std::vector<WriteTensor> ts;
  for (Dtype d : all_dtypes()) ts.push_back({std::string(dtype_name(d)), std::string(dtype_name(d)), {8}});
  auto [json, data] = header_json(ts);
  auto h = parse_json(json, data);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->tensors.size(), 22u);
  EXPECT_EQ(h->find("F4")->byte_size(), 4u);
  EXPECT_EQ(h->find("F6_E2M3")->byte_size(), 6u);
  EXPECT_EQ(h->find("F8_E8M0")->byte_size(), 8u);
  EXPECT_EQ(h->find("F8_E4M3FNUZ")->byte_size(), 8u);
  EXPECT_EQ(h->find("C64")->byte_size(), 64u);
  for (Dtype d : all_dtypes()) EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
  EXPECT_FALSE(dtype_from_name("bf16"));
}

TEST(SafetensorsHeader, SubByteTensorsMustEndOnAByte) {
  auto ok = parse_json(R"({"w":{"dtype":"F4","shape":[3,2],"data_offsets":[0,3]}})", 3);
  EXPECT_TRUE(ok) << error_of(ok);
  auto f6 = parse_json(R"({"w":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]}})", 3);
  EXPECT_TRUE(f6) << error_of(f6);
  auto odd = parse_json(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2);
  ASSERT_FALSE(odd);
  EXPECT_NE(odd.error().message.find("tensor 'w'"), std::string::npos);
  EXPECT_NE(odd.error().message.find("not a whole number of bytes"), std::string::npos);
  auto f6odd = parse_json(R"({"w":{"dtype":"F6_E2M3","shape":[3],"data_offsets":[0,3]}})", 3);
  EXPECT_FALSE(f6odd);
  // 2^62 elements of 32 bits fit 64 bits as a count but not as bits: an overflow, said so
  // (issue 21 item 11), not "not a whole number of bytes".
  auto huge = parse_json(R"({"w":{"dtype":"F32","shape":[4611686018427387904],)"
                         R"("data_offsets":[0,4]}})",
                         4);
  ASSERT_FALSE(huge);
  EXPECT_NE(error_of(huge).find("overflows 64 bits"), std::string::npos) << error_of(huge);
}

TEST(SafetensorsHeader, EmptyTensorsAndEmptyHeaderAreValid) {
  auto h = parse_json(
      R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})",
      2);
  ASSERT_TRUE(h) << error_of(h);
  EXPECT_EQ(h->tensors[0].name, "e");
  auto empty = parse_json("{}", 0);
  ASSERT_TRUE(empty) << error_of(empty);
  EXPECT_TRUE(empty->tensors.empty());
}

TEST(SafetensorsHeader, RejectsBadLengthPrefix) {
  EXPECT_FALSE(parse_header(std::string("\x01\x00", 2), 2, "m"));
  std::string huge(8, '\0');
  uint64_t n = kMaxHeaderBytes + 1;
  for (int i = 0; i < 8; ++i) huge[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  auto r = parse_header(huge, huge.size(), "m");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("exceeds the format's limit"), std::string::npos);
  std::string past = header_bytes("{}");
  past[0] = 100;
  auto r2 = parse_header(past, past.size(), "m");
  ASSERT_FALSE(r2);
  EXPECT_NE(r2.error().message.find("runs past the end"), std::string::npos);
}

TEST(SafetensorsHeader, RejectsMalformedJson) {
  EXPECT_FALSE(parse_json(" {}", 0));                        // must begin with '{'
  EXPECT_FALSE(parse_json("[]", 0));
  EXPECT_FALSE(parse_json("{,}", 0));
  EXPECT_FALSE(parse_json(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},})", 4));
  EXPECT_FALSE(parse_json("{} x", 0));                       // bytes after the object
  EXPECT_TRUE(parse_json("{}   \n", 0));                     // whitespace padding is fine
  EXPECT_FALSE(parse_json("{\"a\xff\":1}", 0));               // not UTF-8
  EXPECT_FALSE(parse_json("{\"\xc0\x80\":1}", 0));            // overlong NUL
  EXPECT_FALSE(parse_json("{\"\xed\xa0\x80\":1}", 0));        // encoded surrogate
  EXPECT_FALSE(parse_json(R"({"a\ud800":{}})", 0));          // lone surrogate escape
  EXPECT_FALSE(parse_json(R"({"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}})", 4));
  EXPECT_FALSE(parse_json(R"({"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})", 4));
  EXPECT_FALSE(parse_json(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4));
  EXPECT_FALSE(parse_json(R"({"a":{"dtype":"F32","shape":[1e2],"data_offsets":[0,400]}})", 400));
  EXPECT_FALSE(parse_json(R"({"a":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,4]}})", 4));
  EXPECT_FALSE(parse_json(std::string(100, '{') + std::string(100, '}'), 0));
}

TEST(SafetensorsHeader, DecodesEscapedNames) {
  auto h = parse_json(
      R"({"caf\u00e9.\ud83d\ude00":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  ASSERT_TRUE(h) << error_of(h);
  EXPECT_EQ(h->tensors[0].name, "caf\xc3\xa9.\xf0\x9f\x98\x80");
}

TEST(SafetensorsHeader, RejectsDuplicates) {
  auto dup = parse_json(
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
      2);
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("tensor 'a': named twice"), std::string::npos);
  EXPECT_FALSE(parse_json(
      R"({"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1));
  EXPECT_FALSE(parse_json(R"({"__metadata__":{},"__metadata__":{}})", 0));
  EXPECT_FALSE(parse_json(R"({"__metadata__":{"k":"a","k":"b"}})", 0));
}

TEST(SafetensorsHeader, MetadataIsAStringMap) {
  EXPECT_TRUE(parse_json(R"({"__metadata__":null})", 0));
  auto num = parse_json(R"({"__metadata__":{"k":1}})", 0);
  ASSERT_FALSE(num);
  EXPECT_NE(num.error().message.find("must be a string"), std::string::npos);
  EXPECT_FALSE(parse_json(R"({"__metadata__":["a"]})", 0));
  EXPECT_FALSE(parse_json(R"({"__metadata__":{"k":{"x":"y"}}})", 0));
}

TEST(SafetensorsHeader, RejectsBadTensorEntries) {
  auto unknown = parse_json(R"({"w":{"dtype":"F12","shape":[1],"data_offsets":[0,1]}})", 1);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "m.safetensors: tensor 'w': unknown dtype 'F12'");
  EXPECT_FALSE(parse_json(R"({"w":{"shape":[1],"data_offsets":[0,1]}})", 1));
  EXPECT_FALSE(parse_json(R"({"w":{"dtype":"U8","data_offsets":[0,1]}})", 1));
  EXPECT_FALSE(parse_json(R"({"w":{"dtype":"U8","shape":[1]}})", 1));
  EXPECT_FALSE(parse_json(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})", 1));
  EXPECT_FALSE(parse_json(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}})", 1));
  EXPECT_FALSE(parse_json(R"({"w":[1]})", 0));
  EXPECT_FALSE(parse_json(R"({"w":{"dtype":8,"shape":[1],"data_offsets":[0,1]}})", 1));
  // Unknown members are skipped, as the reference does.
  EXPECT_TRUE(parse_json(R"({"w":{"dtype":"U8","extra":{"a":[1,true,null]},"shape":[1],"data_offsets":[0,1]}})", 1));
  auto overflow = parse_json(
      R"({"w":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,1]}})", 1);
  ASSERT_FALSE(overflow);
  EXPECT_NE(overflow.error().message.find("overflows"), std::string::npos);
  auto size = parse_json(R"({"w":{"dtype":"BF16","shape":[3,4],"data_offsets":[0,10]}})", 10);
  ASSERT_FALSE(size);
  EXPECT_EQ(size.error().message,
            "m.safetensors: tensor 'w': shape [3, 4] of BF16 needs 24 bytes but data_offsets "
            "[0, 10] hold 10");
}

TEST(SafetensorsHeader, OffsetsMustTileTheDataFromZero) {
  auto gap = parse_json(
      R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})",
      6);
  ASSERT_FALSE(gap);
  EXPECT_NE(gap.error().message.find("tensor 'b': begins at byte 4, leaving a gap of 2 bytes "
                                     "after tensor 'a'"),
            std::string::npos);
  auto late = parse_json(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})", 4);
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().message.find("from the start of the data"), std::string::npos);
  auto overlap = parse_json(
      R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
      4);
  ASSERT_FALSE(overlap);
  EXPECT_NE(overlap.error().message.find("overlap tensor 'a'"), std::string::npos);
}

TEST(SafetensorsHeader, FileSizeMustMatchUnlessHeaderOnly) {
  auto [json, data] = header_json({{"w", "BF16", {16, 16}}});
  std::string full = file_of(json, data);
  EXPECT_TRUE(parse_file(full));
  std::string cut = full.substr(0, full.size() - 10);
  auto r = parse_file(cut);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("truncated by 10 bytes"), std::string::npos);
  HeaderOptions header_only{SizeCheck::kHeaderOnly};
  auto h = parse_file(cut, header_only);
  ASSERT_TRUE(h) << error_of(h);
  EXPECT_FALSE(h->data_present());
  EXPECT_TRUE(parse_file(header_bytes(json), header_only));
  std::string longer = full + "xx";
  auto trailing = parse_file(longer, header_only);
  ASSERT_FALSE(trailing);
  EXPECT_NE(trailing.error().message.find("2 trailing bytes"), std::string::npos);
}

TEST(SafetensorsHeader, ReadsOnlyTheHeaderOfAFile) {
  fs::path dir = fs::path(::testing::TempDir()) / "st_header";
  fs::create_directories(dir);
  std::vector<WriteTensor> ts{{"x", "F32", {1024, 1024}}, {"y", "F8_E4M3", {7}}};
  testing::write_safetensors(dir / "sparse.safetensors", ts, testing::DataMode::kSparse);
  auto h = read_header((dir / "sparse.safetensors").string());
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->data_bytes, 4u * 1024 * 1024 + 7);
  EXPECT_TRUE(h->data_present());
  testing::write_safetensors(dir / "head.safetensors", ts, testing::DataMode::kHeaderOnly);
  auto strict = read_header((dir / "head.safetensors").string());
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.error().message.find((dir / "head.safetensors").string()), std::string::npos);
  EXPECT_TRUE(read_header((dir / "head.safetensors").string(), {SizeCheck::kHeaderOnly}));
  auto missing = read_header((dir / "nope.safetensors").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().why, Why::kAbsent);
  EXPECT_FALSE(read_header(dir.string()));
  std::ofstream(dir / "tiny.safetensors") << "abc";
  EXPECT_FALSE(read_header((dir / "tiny.safetensors").string()));
}

}  // namespace
}  // namespace sparkdoc::safetensors
