#include "elf/sections.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "elf_image.h"

namespace sparkdoc::elf {
namespace {

using testing::ElfImage;
using testing::ElfImageSpec;

const SectionInfo* find(const std::vector<SectionInfo>& sections, const std::string& name) {
  auto it = std::find_if(sections.begin(), sections.end(),
                         [&](const SectionInfo& s) { return s.name == name; });
  return it == sections.end() ? nullptr : &*it;
}

TEST(ReadSections, BuiltLibraryHasDynamicAndText) {
  auto sections = read_sections(ELF_CONSUMER_RPATH);
  ASSERT_TRUE(sections) << sections.error().message;
  const SectionInfo* dynamic = find(*sections, ".dynamic");
  ASSERT_NE(dynamic, nullptr);
  EXPECT_EQ(dynamic->type, 6u);
  EXPECT_GT(dynamic->size_bytes, 0u);
  const SectionInfo* text = find(*sections, ".text");
  ASSERT_NE(text, nullptr);
  EXPECT_TRUE(text->flags & 0x4) << "SHF_EXECINSTR";
}

TEST(ParseSections, HandBuiltImagesInEveryByteOrder) {
  for (bool is_64 : {false, true}) {
    for (bool big_endian : {false, true}) {
      ElfImageSpec spec;
      spec.is_64 = is_64;
      spec.big_endian = big_endian;
      spec.strings = {{1, "libcudart.so.13"}};
      std::string image = ElfImage::build(spec);
      auto sections = parse_sections(image.data(), image.size());
      ASSERT_TRUE(sections) << sections.error().message;
      ASSERT_EQ(sections->size(), 3u);
      EXPECT_EQ((*sections)[0].name, ".dynstr");
      EXPECT_EQ((*sections)[1].name, ".dynamic");
      EXPECT_EQ((*sections)[1].type, 6u);
      EXPECT_EQ((*sections)[2].name, ".shstrtab");
      const SectionInfo& dynstr = (*sections)[0];
      EXPECT_EQ(image.substr(dynstr.file_offset + 1, 15), "libcudart.so.13");
    }
  }
}

TEST(ParseSections, NoSectionHeadersGivesAnEmptyList) {
  ElfImageSpec spec;
  spec.with_section_headers = false;
  std::string image = ElfImage::build(spec);
  auto sections = parse_sections(image.data(), image.size());
  ASSERT_TRUE(sections) << sections.error().message;
  EXPECT_TRUE(sections->empty());
}

TEST(ParseSections, GarbageIsAnError) {
  std::string garbage(1000, 'x');
  EXPECT_FALSE(parse_sections(garbage.data(), garbage.size()));
  EXPECT_FALSE(read_sections("/nonexistent/libtorch_python.so"));
}

}  // namespace
}  // namespace sparkdoc::elf
