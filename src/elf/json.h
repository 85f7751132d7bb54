#pragma once

#include "core/json.h"
#include "elf/readings.h"

namespace sparkdoc::elf {
SPARKDOC_JSON(DynamicInfo, soname, needed, rpath, runpath)
}  // namespace sparkdoc::elf
