// An audit's facts with three packages of known GPU code, for audit's matrix and its page:
// flash_attn SASS for Ampere and Hopper only, torch SASS up to Blackwell with PTX for 12.x, and
// triton_kernels PTX 8.0 alone (JIT-compiled everywhere from 8.0 on).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/native.h"

namespace sparkdoc::report::testing {

inline audit::NativeAudit three_gpu_packages() {
  audit::NativeAudit facts;
  facts.site_packages = "/venv/lib/python3.12/site-packages";
  auto file = [](std::string package, std::vector<audit::GpuTarget> sass,
                 std::vector<audit::PtxEntry> ptx) {
    audit::NativeFile f;
    f.file = package + "/_C.so";
    f.package = package;
    f.gpu_code.push_back(audit::CodeGroup{std::move(sass), std::move(ptx), 1, {}});
    return f;
  };
  facts.files.push_back(file("flash_attn", {{80}, {90}}, {}));
  facts.files.push_back(file("torch", {{80}, {90}, {100}, {120}}, {{{120}, "8.7"}}));
  facts.files.push_back(file("triton_kernels", {}, {{{80}, "8.7"}}));
  return facts;
}

}  // namespace sparkdoc::report::testing
