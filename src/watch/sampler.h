// Reads samples from the machine: NVML through one session kept open for the whole watch
// (gpu/telemetry.h), /proc/meminfo and /proc/pressure/memory under a Root. Per sample it asks
// NVML seven quick questions and the process list per GPU (the counters only every few
// seconds, see SamplerOptions), reads two small /proc files, and reads
// /proc/PID/comm only for a PID it has not named before: no dlopen, no process scan. The
// kernel log is followed from the sampler's start (sys::KmsgFollower): each sample carries the
// NVIDIA driver's records logged since the one before.
// Threading: one thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "gpu/nvml_api.h"
#include "gpu/telemetry.h"
#include "model/runlog.h"
#include "sys/kernel_log.h"

namespace sparkdoc::watch {

// How often the costly NVML readings are taken (gpu::ReadSet). The counters are cumulative, so
// reading them every few seconds loses no time, only resolution: a sample in between carries
// none of them, and the detectors and the run report measure each counter step over the time
// between the two samples that have it. The first sample reads everything.
struct SamplerOptions {
  double counter_interval_s = 5;  // the clock-event counters (about 0.9 ms of CPU on an H200)
  double energy_interval_s = 30;  // the energy counter (about 5.3 ms on an H200)
};

class Sampler {
 public:
  // Reads the GPUs' fixed facts once (names, UUIDs, power limits, the platform), then opens
  // the NVML session. `nvml` may hold an error (no driver): the sampler then reads the host's
  // memory only, and the header's "unavailable" list says why there are no GPUs. `nvml` must
  // outlive the sampler.
  static Sampler open(const Result<gpu::Nvml>& nvml, const Root& root,
                      SamplerOptions options = {});

  // The header facts; the caller sets started_ts and interval_s. After the first sample it also
  // lists what that sample could not read, and why.
  const runlog::LogHeader& header() const { return header_; }

  // One sample, stamped `ts` (Unix seconds; the caller's clock, so tests can replay traces at
  // any pace).
  runlog::Sample sample(double ts);

  // Converts one GPU's telemetry, naming processes with `name_of(pid)`; when `missing` is given,
  // appends the quantities that could not be read. Pure: exposed for tests.
  static runlog::GpuSample convert(const gpu::DeviceTelemetry& telemetry,
                                   const std::map<uint32_t, std::optional<std::string>>& names,
                                   std::vector<runlog::Unavailable>* missing);

 private:
  Sampler() = default;
  runlog::HostMemorySample read_host_memory(std::vector<runlog::Unavailable>* missing) const;
  void name_processes(const gpu::DeviceTelemetry& telemetry);

  // Whether a sample stamped `ts` is due for a part last read at `last` (a small tolerance
  // absorbs the jitter of a 1 s schedule).
  static bool due(std::optional<double> last, double ts, double interval_s);

  Root root_;
  SamplerOptions options_;
  std::optional<double> counters_ts_;  // when the counters, and the energy, were last read
  std::optional<double> energy_ts_;
  runlog::LogHeader header_;
  std::optional<gpu::NvmlSession> session_;
  std::map<uint32_t, std::optional<std::string>> names_;  // /proc/PID/comm, by PID
  std::optional<sys::KmsgFollower> kmsg_;                 // absent: not readable, for kmsg_error_
  std::string kmsg_error_;
  bool first_ = true;
};

}  // namespace sparkdoc::watch
