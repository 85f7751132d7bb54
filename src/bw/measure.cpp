#include "bw/measure.h"

#include "bw/host.h"
#include "bw/nominal.h"
#include "core/fs.h"
#include "core/time.h"
#include "gpu/cuda_api.h"
#include "sys/meminfo.h"

namespace sparkdoc::bw {

BwReport measure(const RunOptions& options, const facts::Platform& platform,
                 const Progress& progress) {
  BwReport report;
  report.ordinal = options.ordinal;
  report.taken_at = utc_now_iso8601();
  const Result<gpu::Cuda>& cuda = gpu::Cuda::instance();
  if (cuda) {
    DeviceOptions device;
    device.ordinal = options.ordinal;
    device.buffer_bytes = options.buffer_bytes;
    device.runs = options.runs;
    device.warmup_runs = options.warmup_runs;
    device.transfers = options.transfers;
    report.device = measure_device(*cuda, device, progress);
  } else {
    report.device = tl::unexpected(cuda.error());
  }

  if (!options.host) {
    report.host = Reading<HostBandwidth>::absent(Why::kAbsent, "not measured (--no-host)");
  } else {
    uint64_t wanted = options.buffer_bytes.value_or(report.device ? report.device->buffer_bytes
                                                                  : kDefaultBufferBytes);
    std::optional<uint64_t> available;
    if (auto meminfo = sys::read_meminfo(Root())) available = meminfo->mem_available_bytes;
    SizeChoice host_size = cap_host_buffer(wanted, available);
    if (host_size.note) report.notes.push_back(*host_size.note);
    HostOptions host;
    host.buffer_bytes = host_size.bytes;
    host.threads = options.threads;
    host.runs = options.runs;
    host.warmup_runs = options.warmup_runs;
    report.host = Reading<HostBandwidth>::from(measure_host(host, progress));
  }

  if (platform.kind == facts::PlatformKind::kDgxSpark) {
    report.nominal = gb10_nominal();
  } else if (report.device) {
    report.nominal = nominal_bandwidth(report.device->name);
  }
  return report;
}

}  // namespace sparkdoc::bw
