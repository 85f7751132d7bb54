#include "watch/sampler.h"

#include <set>
#include <utility>

#include "core/strings.h"
#include "core/version.h"
#include "facts/platform.h"
#include "gpu/probe.h"
#include "sys/host.h"
#include "sys/kernel_log.h"
#include "sys/meminfo.h"
#include "sys/psi.h"

namespace sparkdoc::watch {
namespace {

using runlog::GpuProcessUse;
using runlog::GpuSample;
using runlog::HostMemorySample;
using runlog::Unavailable;

// Copies a reading into its sample field, or records why it is missing.
template <class T, class U>
void take(const Reading<T>& reading, std::optional<U>& field, std::optional<unsigned> gpu,
          const char* key, std::vector<Unavailable>* missing) {
  if (reading) {
    field = static_cast<U>(*reading);
  } else if (missing != nullptr) {
    missing->push_back(Unavailable{gpu, key, reading.reason()});
  }
}

template <class T>
std::optional<T> optional_of(const Reading<T>& reading) {
  return reading ? std::optional<T>(*reading) : std::nullopt;
}

}  // namespace

Sampler Sampler::open(const Result<gpu::Nvml>& nvml, const Root& root, SamplerOptions options) {
  Sampler sampler;
  sampler.root_ = root;
  sampler.options_ = options;
  runlog::LogHeader& h = sampler.header_;
  h.sparkdoc_version = kVersion;

  // The platform is judged as `sparkdoc check` judges it, from the same readings.
  sys::Host host = sys::read_host(root);
  gpu::GpuReadings gpus;
  gpus.nvml = nvml ? gpu::read_nvml(*nvml)
                   : Reading<gpu::NvmlReadings>(Missing{nvml.error().why, nvml.error().message});
  gpus.cuda = Missing{Why::kAbsent, "not read by watch"};
  facts::Platform platform =
      facts::classify_platform(gpus, Reading<sys::MemInfo>::from(sys::read_meminfo(root)), host);
  h.platform = platform.kind == facts::PlatformKind::kDgxSpark ? "dgx-spark" : "other";
  h.platform_description = platform.description;
  h.unified_memory = platform.unified_memory();
  h.host = host.hostname.value_or("");

  // The kernel log from now on: the driver's errors during the run (the detectors' driver_error).
  if (auto kmsg = sys::KmsgFollower::open(root)) {
    sampler.kmsg_.emplace(std::move(*kmsg));
  } else {
    sampler.kmsg_error_ = kmsg.error().message;  // listed with the first sample's gaps
  }

  if (!gpus.nvml) {
    h.unavailable.push_back(Unavailable{std::nullopt, "gpus", gpus.nvml.reason()});
    return sampler;
  }
  const gpu::NvmlReadings& readings = *gpus.nvml;
  h.driver_version = optional_of(readings.driver_version);
  for (const gpu::Device& d : readings.devices) {
    runlog::GpuInfo info;
    info.index = d.index;
    info.name = optional_of(d.name);
    info.uuid = optional_of(d.uuid);
    info.pci_bus_id = optional_of(d.pci_bus_id);
    if (d.power_limit_mw) info.power_limit_w = *d.power_limit_mw / 1000.0;
    h.gpus.push_back(std::move(info));
  }
  auto session = gpu::NvmlSession::open(*nvml);
  if (session) {
    sampler.session_.emplace(std::move(*session));
  } else {
    h.unavailable.push_back(Unavailable{std::nullopt, "gpus", session.error().message});
  }
  return sampler;
}

GpuSample Sampler::convert(const gpu::DeviceTelemetry& t,
                           const std::map<uint32_t, std::optional<std::string>>& names,
                           std::vector<Unavailable>* missing) {
  GpuSample g;
  g.index = t.index;
  std::optional<unsigned> gpu = t.index;
  if (t.power_usage_mw) {
    g.power_w = *t.power_usage_mw / 1000.0;
  } else if (missing != nullptr) {
    missing->push_back(Unavailable{gpu, "power_w", t.power_usage_mw.reason()});
  }
  take(t.temperature_c, g.temp_c, gpu, "temp_c", missing);
  take(t.sm_clock_mhz, g.sm_clock_mhz, gpu, "sm_clock_mhz", missing);
  take(t.mem_clock_mhz, g.mem_clock_mhz, gpu, "mem_clock_mhz", missing);
  take(t.utilization_pct, g.util_pct, gpu, "util_pct", missing);
  if (t.memory) {
    g.mem_used_bytes = t.memory->used_bytes;
  } else if (missing != nullptr) {
    missing->push_back(Unavailable{gpu, "mem_used_bytes", t.memory.reason()});
  }
  take(t.clock_event_reasons, g.clock_event_reasons, gpu, "clock_event_reasons", missing);
  take(t.total_energy_mj, g.energy_mj, gpu, "energy_mj", missing);
  const gpu::PolicyCounters& p = t.policy;
  runlog::ClockCounters& c = g.counters;
  take(p.power_ns, c.power, gpu, "clock_event_counters_ns.power", missing);
  take(p.thermal_ns, c.thermal, gpu, "clock_event_counters_ns.thermal", missing);
  take(p.sync_boost_ns, c.sync_boost, gpu, "clock_event_counters_ns.sync_boost", missing);
  take(p.board_limit_ns, c.board_limit, gpu, "clock_event_counters_ns.board_limit", missing);
  take(p.low_utilization_ns, c.low_util, gpu, "clock_event_counters_ns.low_util", missing);
  take(p.reliability_ns, c.reliability, gpu, "clock_event_counters_ns.reliability", missing);
  take(p.total_app_clocks_ns, c.total_app_clocks, gpu, "clock_event_counters_ns.total_app_clocks",
       missing);
  take(p.total_base_clocks_ns, c.total_base_clocks, gpu,
       "clock_event_counters_ns.total_base_clocks", missing);
  take(t.sw_thermal_ns, c.sw_thermal, gpu, "clock_event_counters_ns.sw_thermal", missing);
  take(t.hw_thermal_ns, c.hw_thermal, gpu, "clock_event_counters_ns.hw_thermal", missing);
  take(t.hw_power_brake_ns, c.hw_power_brake, gpu, "clock_event_counters_ns.hw_power_brake",
       missing);
  if (t.processes) {
    g.processes.emplace();
    for (const gpu::GpuProcess& process : *t.processes) {
      GpuProcessUse use;
      use.pid = process.pid;
      auto name = names.find(process.pid);
      if (name != names.end()) use.name = name->second;
      use.used_bytes = optional_of(process.used_bytes);
      g.processes->push_back(std::move(use));
    }
  } else if (missing != nullptr) {
    missing->push_back(Unavailable{gpu, "processes", t.processes.reason()});
  }
  return g;
}

HostMemorySample Sampler::read_host_memory(std::vector<Unavailable>* missing) const {
  HostMemorySample m;
  auto meminfo = sys::read_meminfo(root_);
  if (meminfo) {
    m.total_bytes = meminfo->mem_total_bytes;
    m.available_bytes = meminfo->mem_available_bytes;
    m.cached_bytes = meminfo->cached_bytes;
    m.buffers_bytes = meminfo->buffers_bytes;
    m.shmem_bytes = meminfo->shmem_bytes;
    m.anon_bytes = meminfo->anon_pages_bytes;
    m.swap_total_bytes = meminfo->swap_total_bytes;
    if (meminfo->swap_total_bytes >= meminfo->swap_free_bytes) {
      m.swap_used_bytes = meminfo->swap_total_bytes - meminfo->swap_free_bytes;
    }
  } else if (missing != nullptr) {
    missing->push_back(Unavailable{std::nullopt, "mem", meminfo.error().message});
  }
  auto psi = sys::read_memory_pressure(root_);
  if (psi) {
    m.psi_some_avg10 = psi->some.avg10;
    if (psi->full) {
      m.psi_full_avg10 = psi->full->avg10;
    } else if (missing != nullptr) {
      missing->push_back(
          Unavailable{std::nullopt, "mem.psi_full_avg10", "the kernel reports no \"full\" line"});
    }
  } else if (missing != nullptr) {
    std::string reason = Reading<sys::Psi>::from(psi).reason();
    missing->push_back(Unavailable{std::nullopt, "mem.psi_some_avg10", reason});
    missing->push_back(Unavailable{std::nullopt, "mem.psi_full_avg10", reason});
  }
  return m;
}

void Sampler::name_processes(const gpu::DeviceTelemetry& t) {
  if (!t.processes) return;
  for (const gpu::GpuProcess& process : *t.processes) {
    if (names_.count(process.pid)) continue;
    auto comm = read_text(root_.path("/proc/" + std::to_string(process.pid) + "/comm"), 4096);
    names_[process.pid] =
        comm ? std::optional<std::string>(std::string(trim(*comm))) : std::nullopt;
  }
}

bool Sampler::due(std::optional<double> last, double ts, double interval_s) {
  return !last || ts - *last >= interval_s - 0.05 || ts < *last;  // ts < last: the clock stepped
}

runlog::Sample Sampler::sample(double ts) {
  runlog::Sample s;
  s.ts = ts;
  std::vector<Unavailable>* missing = first_ ? &header_.unavailable : nullptr;
  std::set<uint32_t> listed;
  if (session_) {
    gpu::ReadSet parts{due(counters_ts_, ts, options_.counter_interval_s),
                       due(energy_ts_, ts, options_.energy_interval_s)};
    if (parts.counters) counters_ts_ = ts;
    if (parts.energy) energy_ts_ = ts;
    for (size_t i = 0; i < session_->device_count(); ++i) {
      gpu::DeviceTelemetry t = session_->read(i, parts);
      name_processes(t);
      s.gpus.push_back(convert(t, names_, missing));
      if (s.gpus.back().processes) {
        for (const GpuProcessUse& p : *s.gpus.back().processes) listed.insert(p.pid);
      }
    }
    // Forget the names of PIDs no longer listed: a PID can be reused by another program.
    std::erase_if(names_, [&](const auto& entry) { return !listed.count(entry.first); });
  }
  s.mem = read_host_memory(missing);
  if (kmsg_) {
    s.kernel = kmsg_->poll();
  } else if (missing != nullptr) {
    missing->push_back(Unavailable{std::nullopt, "kernel", kmsg_error_});
  }
  first_ = false;
  return s;
}

}  // namespace sparkdoc::watch
