// The fake's clock lock: nvmlDeviceSetGpuLockedClocks and nvmlDeviceResetGpuLockedClocks, each
// call recorded in the file SPARKDOC_FAKE_NVML_CALLS names (see fake_nvml.cpp's top comment).
// Only libsparkdoc_fake_nvml.so has them; the legacy fake leaves them out, as an NVML older
// than clock locks would.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fake_nvml_device.h"

using namespace sparkdoc::gpu::nvml;
using sparkdoc::fake::json;

namespace {

constexpr const char* kCallsEnv = "SPARKDOC_FAKE_NVML_CALLS";

// One line per call, appended and closed at once, so a test reads every call a process made
// even when it was killed right after.
void record(const std::string& line) {
  const char* path = std::getenv(kCallsEnv);
  if (path == nullptr || path[0] == '\0') return;
  std::FILE* file = std::fopen(path, "a");
  if (file == nullptr) return;
  std::fputs((line + "\n").c_str(), file);
  std::fclose(file);
}

// The device call and its line, with the status it answered (an injected error included). A
// call that never reached a device (NVML not initialised, a bad handle) is not recorded.
nvmlReturn_t recorded_call(const char* symbol, nvmlDevice_t handle, const std::string& args) {
  auto uuid = sparkdoc::fake::device_uuid(handle);
  nvmlReturn_t status =
      sparkdoc::fake::on_device(symbol, handle, [](const json&) { return NVML_SUCCESS; });
  if (uuid) {
    record(std::string(symbol) + " " + *uuid + args + " " +
           std::string(sparkdoc::fake::status_name(status)));
  }
  return status;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned min_mhz, unsigned max_mhz) {
  return recorded_call("nvmlDeviceSetGpuLockedClocks", device,
                       " " + std::to_string(min_mhz) + " " + std::to_string(max_mhz));
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  return recorded_call("nvmlDeviceResetGpuLockedClocks", device, "");
}

}  // extern "C"
