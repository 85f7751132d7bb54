// What the ELF dynamic section says about a shared object. The native-code audit (fatbin,
// cubin, library resolution) grows from here; pyenv uses only the dynamic section.
#pragma once

#include <string>
#include <vector>

namespace sparkdoc::elf {

struct DynamicInfo {
  std::string soname;
  std::vector<std::string> needed;   // DT_NEEDED, in file order
  std::vector<std::string> rpath;    // DT_RPATH split on ':'
  std::vector<std::string> runpath;  // DT_RUNPATH split on ':'
  bool operator==(const DynamicInfo&) const = default;
};

}  // namespace sparkdoc::elf
