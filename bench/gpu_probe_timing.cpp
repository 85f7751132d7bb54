// Where the GPU probe's time goes: each NVML and CUDA driver call of a check, timed alone,
// in the order the probe makes them. Run on a GPU machine:
//   build-release/bench/gpu_probe_timing
#include <chrono>
#include <cstdio>
#include <functional>

#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"
#include "gpu/probe.h"

namespace {

double time_ms(const std::function<void()>& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main() {
  using namespace sparkdoc::gpu;
  const sparkdoc::Result<Nvml>* nvml = nullptr;
  const sparkdoc::Result<Cuda>* cuda = nullptr;
  std::printf("%-34s %8.1f ms\n", "dlopen libnvidia-ml + bind",
              time_ms([&] { nvml = &Nvml::instance(); }));
  std::printf("%-34s %8.1f ms\n", "dlopen libcuda + bind", time_ms([&] { cuda = &Cuda::instance(); }));
  if (!*nvml || !*cuda) {
    std::printf("no driver here\n");
    return 0;
  }
  const auto& n = (*nvml)->api();
  std::printf("%-34s %8.1f ms\n", "nvmlInit", time_ms([&] { n.init(); }));
  unsigned count = 0;
  std::printf("%-34s %8.1f ms\n", "nvmlDeviceGetCount", time_ms([&] { n.device_get_count(&count); }));
  std::printf("%-34s %8.1f ms\n", "read_nvml (nested init, all)",
              time_ms([&] { (void)read_nvml(**nvml); }));
  std::printf("%-34s %8.1f ms\n", "read_nvml again", time_ms([&] { (void)read_nvml(**nvml); }));
  std::printf("%-34s %8.1f ms\n", "nvmlShutdown", time_ms([&] { n.shutdown(); }));
  std::printf("%-34s %8.1f ms\n", "read_nvml cold (own init)",
              time_ms([&] { (void)read_nvml(**nvml); }));
  const auto& c = (*cuda)->api();
  int version = 0;
  std::printf("%-34s %8.1f ms\n", "cuDriverGetVersion",
              time_ms([&] { c.driver_get_version(&version); }));
  std::printf("%-34s %8.1f ms\n", "cuInit", time_ms([&] { c.init(0); }));
  std::printf("%-34s %8.1f ms\n", "read_cuda (after cuInit)",
              time_ms([&] { (void)read_cuda(**cuda); }));
  return 0;
}
