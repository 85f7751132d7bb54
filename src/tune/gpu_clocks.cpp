#include "tune/gpu_clocks.h"

#include <cstdlib>
#include <utility>

#include "gpu/clocks.h"
#include "gpu/nvml_api.h"

namespace sparkdoc::tune {
namespace {

const Result<gpu::Nvml>& nvml() {
  return gpu::Nvml::instance();
}

Result<void> not_loaded() {
  return tl::unexpected(nvml().error());
}

}  // namespace

Result<std::vector<ClockGpu>> NvmlGpuClocks::gpus() {
  if (!nvml()) return tl::unexpected(nvml().error());
  auto listed = gpu::list_lockable_gpus(*nvml());
  if (!listed) return tl::unexpected(listed.error());
  std::vector<ClockGpu> out;
  for (const auto& g : *listed) {
    ClockGpu c;
    c.uuid = g.uuid;
    c.name = g.name;
    if (g.max_sm_clock_mhz) c.max_mhz = *g.max_sm_clock_mhz;
    out.push_back(std::move(c));
  }
  return out;
}

Result<void> NvmlGpuClocks::lock(const std::string& uuid, ClockCap cap) {
  if (!nvml()) return not_loaded();
  return gpu::lock_gpu_clocks(*nvml(), uuid, cap.min_mhz, cap.max_mhz);
}

Result<void> NvmlGpuClocks::reset(const std::string& uuid) {
  if (!nvml()) return not_loaded();
  return gpu::reset_gpu_clocks(*nvml(), uuid);
}

Result<std::vector<ClockGpu>> RefusedGpuClocks::gpus() {
  return fail(Why::kNotSupported, why_);
}

Result<void> RefusedGpuClocks::lock(const std::string&, ClockCap) {
  return fail(Why::kNotSupported, why_);
}

Result<void> RefusedGpuClocks::reset(const std::string&) {
  return fail(Why::kNotSupported, why_);
}

std::unique_ptr<GpuClockControl> gpu_clock_control(const Root& root, bool no_gpu) {
  if (no_gpu) return std::make_unique<RefusedGpuClocks>("--no-gpu: NVML is not loaded");
  const char* library = std::getenv(gpu::Nvml::kLibraryEnv);
  bool named = library != nullptr && library[0] != '\0';
  if (!root.live() && !named) {
    return std::make_unique<RefusedGpuClocks>(
        "not on a fixture root: the system's NVML would change this machine's GPU (tests name "
        "their fake NVML in SPARKDOC_NVML_LIBRARY)");
  }
  return std::make_unique<NvmlGpuClocks>();
}

Result<void> cap_gpu_clocks(JournalWriter& journal, GpuClockControl& clocks, const ClockGpu& gpu,
                            ClockCap cap) {
  if (auto recorded =
          journal.record_gpu_clocks(gpu.uuid, gpu.name, cap.min_mhz, cap.max_mhz, gpu.max_mhz);
      !recorded) {
    return fail("not journaled, so not changed: " + recorded.error().message);
  }
  return clocks.lock(gpu.uuid, cap);
}

}  // namespace sparkdoc::tune
