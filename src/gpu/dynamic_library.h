// The NVIDIA libraries' side of core/dynamic_library.h: what a missing one means.
#pragma once

#include <string>

#include "core/dynamic_library.h"
#include "core/result.h"

namespace sparkdoc::gpu {

// open_library with the message for a driver library: a missing soname means no driver (or
// none mounted into this container).
Result<DynamicLibrary> open_vendor_library(const std::string& name, const char* soname);

}  // namespace sparkdoc::gpu
