// JSON field lists of the elf readings. Key names are public (snapshot schema): append only.
#pragma once

#include "core/json.h"
#include "model/elf.h"

namespace sparkdoc::elf {
SPARKDOC_JSON(VersionNeed, file, versions)
SPARKDOC_JSON(DynamicInfo, soname, needed, rpath, runpath, version_needs)
}  // namespace sparkdoc::elf
