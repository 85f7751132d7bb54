#include "gpu/dynamic_library.h"

namespace sparkdoc::gpu {

Result<DynamicLibrary> open_vendor_library(const std::string& name, const char* soname) {
  return open_library(name, soname,
                      "no NVIDIA driver installed, or its libraries are not mounted into this "
                      "container");
}

}  // namespace sparkdoc::gpu
