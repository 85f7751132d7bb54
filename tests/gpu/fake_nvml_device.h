// What fake_nvml.cpp shares with the fake's other sources (fake_nvml_clocks.cpp): a device call
// with the fake's lock, its initialisation check and its error injection. Test-only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "fake_fixture.h"
#include "gpu/nvml_types.h"

namespace sparkdoc::fake {

// Runs `body` on the device `handle` names, as its trace shows it now, under the library's
// lock, unless NVML is not initialised, the handle is not one of the fixture's devices, or
// the fixture injects an error for `symbol` (at the top level or on the device).
gpu::nvml::nvmlReturn_t on_device(const char* symbol, gpu::nvml::nvmlDevice_t handle,
                                  const std::function<gpu::nvml::nvmlReturn_t(const json&)>& body);

// The UUID of the device `handle` names ("?" when the fixture gives none); nullopt when NVML is
// not initialised or the handle is not one of the fixture's devices.
std::optional<std::string> device_uuid(gpu::nvml::nvmlDevice_t handle);

// "SUCCESS", "NO_PERMISSION", ...: the bare name the fixture's "errors" maps use.
std::string_view status_name(gpu::nvml::nvmlReturn_t code);

}  // namespace sparkdoc::fake
