// What the ELF dynamic section says about a shared object. The native-code audit (fatbin,
// cubin, library resolution) grows from here; pyenv uses only the dynamic section.
#pragma once

#include <string>
#include <vector>

namespace sparkdoc::elf {

// One Verneed entry: a library the object was linked against and the symbol versions it
// needs from it ({"libcudart.so.13", {"libcudart.so.13"}}). glibc refuses to load the object
// when the library found under that name does not define one of the versions.
struct VersionNeed {
  std::string file;
  std::vector<std::string> versions;
  bool operator==(const VersionNeed&) const = default;
};

struct DynamicInfo {
  std::string soname;
  std::vector<std::string> needed;         // DT_NEEDED, in file order
  std::vector<std::string> rpath;          // DT_RPATH split on ':'
  std::vector<std::string> runpath;        // DT_RUNPATH split on ':'
  std::vector<VersionNeed> version_needs;  // SHT_GNU_verneed, in file order
  bool operator==(const DynamicInfo&) const = default;
};

}  // namespace sparkdoc::elf
