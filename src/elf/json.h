#pragma once

#include "core/json.h"
#include "elf/readings.h"

namespace sparkdoc::elf {
SPARKDOC_JSON(VersionNeed, file, versions)
SPARKDOC_JSON(DynamicInfo, soname, needed, rpath, runpath, version_needs)
}  // namespace sparkdoc::elf
