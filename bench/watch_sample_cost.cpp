// What one `sparkdoc watch` sample costs, part by part: the CPU time of this thread (which
// includes the kernel's time in the driver's ioctls, and on GSP-based GPUs the wait for the
// firmware's answer when the driver polls for it) and the wall time of each NVML query the
// sampler makes, of a whole sample, and of writing it out. Iterations are 100 ms apart, as a
// sampler's calls would be spread, so that no driver-side cache makes a call look cheaper.
//   build-release/bench/watch_sample_cost [ITERATIONS] [LOG_PATH]
// Run it beside a GPU load; bench/watch_overhead.sh does when it finds it next to sparkdoc.
#include <fmt/format.h>
#include <time.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/fs.h"
#include "gpu/nvml_api.h"
#include "gpu/nvml_calls.h"
#include "gpu/telemetry.h"
#include "report/exposition.h"
#include "runlog/writer.h"
#include "watch/detectors.h"
#include "watch/sampler.h"

namespace {

using namespace sparkdoc;
using namespace sparkdoc::gpu::nvml;

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct Part {
  std::string name;
  std::function<void()> run;
  double cpu_s = 0;
  double wall_s = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 100;
  std::string log_path = argc > 2 ? argv[2] : "watch_sample_cost.jsonl";
  const Result<gpu::Nvml>& nvml = gpu::Nvml::instance();
  if (!nvml) {
    std::fprintf(stderr, "no NVML: %s\n", nvml.error().message.c_str());
    return 1;
  }
  const gpu::NvmlEntryPoints& api = nvml->api();
  watch::Sampler sampler = watch::Sampler::open(nvml, Root());
  auto session = gpu::NvmlSession::open(*nvml);
  if (!session || session->device_count() == 0) {
    std::fprintf(stderr, "no NVML device\n");
    return 1;
  }
  nvmlDevice_t device = nullptr;
  api.device_get_handle_by_index(0, &device);
  auto log = runlog::LineFile::create(log_path);
  if (!log) {
    std::fprintf(stderr, "%s\n", log.error().message.c_str());
    return 1;
  }
  runlog::Sample sample = sampler.sample(0);
  runlog::LogHeader header = sampler.header();
  watch::Detectors detectors(watch::detector_config(header));

  auto field = [&](std::vector<unsigned> ids) {
    return [&nvml, device, ids] {
      std::vector<nvmlFieldValue_t> values(ids.size());
      for (size_t i = 0; i < ids.size(); ++i) values[i].fieldId = ids[i];
      nvml->api().device_get_field_values(device, static_cast<int>(ids.size()), values.data());
    };
  };
  unsigned out = 0;
  double clock_s = 0;  // the samples' stamps, one second apart as at --interval 1s
  std::vector<Part> parts = {
      {"nvmlDeviceGetPowerUsage", [&] { api.device_get_power_usage(device, &out); }},
      {"nvmlDeviceGetTemperature",
       [&] { api.device_get_temperature(device, NVML_TEMPERATURE_GPU, &out); }},
      {"nvmlDeviceGetClockInfo(SM)",
       [&] { api.device_get_clock_info(device, NVML_CLOCK_SM, &out); }},
      {"nvmlDeviceGetClockInfo(MEM)",
       [&] { api.device_get_clock_info(device, NVML_CLOCK_MEM, &out); }},
      {"nvmlDeviceGetUtilizationRates",
       [&] {
         nvmlUtilization_t u{};
         api.device_get_utilization_rates(device, &u);
       }},
      {"memory (v2, v1 on failure)", [&] { (void)gpu::read_memory(*nvml, device); }},
      {"nvmlDeviceGetCurrentClocksEventReasons",
       [&] {
         unsigned long long reasons = 0;
         api.device_get_current_clocks_event_reasons(device, &reasons);
       }},
      {"field values 74-81 (policy counters)", field({74, 75, 76, 77, 78, 79, 80, 81})},
      {"field values 269-271 (clock-event counters)", field({269, 270, 271})},
      {"field value 83 (energy)", field({83})},
      {"field value 74 alone", field({74})},
      {"field values, all 12 in one call",
       field({74, 75, 76, 77, 78, 79, 80, 81, 269, 270, 271, 83})},
      {"processes (compute + graphics)", [&] { (void)gpu::read_processes(*nvml, device); }},
      {"NvmlSession::read (one device, all of the above)", [&] { (void)session->read(0); }},
      {"NvmlSession::read without counters and energy",
       [&] {
         (void)session->read(0, gpu::ReadSet{false, false});
       }},
      {"Sampler::sample at 1 Hz (NVML + /proc; counters 1 in 5, energy 1 in 30)",
       [&] { sample = sampler.sample(++clock_s); }},
      {"detectors", [&] { (void)detectors.feed(sample); }},
      {"sample to JSON line", [&] { (void)runlog::to_line(sample); }},
      {"write + fdatasync of the line", [&] { (void)log->write_line(runlog::to_line(sample)); }},
      {"Prometheus exposition (rendered per scrape, not per sample)",
       [&] { (void)report::render_exposition(header, sample, {}, 1); }},
  };
  for (int i = 0; i < iterations; ++i) {
    for (Part& part : parts) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100) / parts.size());
      auto wall = std::chrono::steady_clock::now();
      double cpu = thread_cpu_s();
      part.run();
      part.cpu_s += thread_cpu_s() - cpu;
      part.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    }
  }
  std::printf("%d iterations, one device (%s)\n", iterations,
              header.gpus.empty() || !header.gpus[0].name ? "?" : header.gpus[0].name->c_str());
  std::printf("| part | CPU us | wall us |\n|---|---:|---:|\n");
  for (const Part& part : parts) {
    std::printf("| %s | %.0f | %.0f |\n", part.name.c_str(), 1e6 * part.cpu_s / iterations,
                1e6 * part.wall_s / iterations);
  }
  std::remove(log_path.c_str());
  return 0;
}
