// The run log's records, one set for both of its files: what `sparkdoc watch --log` writes
// (watch.jsonl: a header once, then one sample per interval and the events its detectors
// raise) and what `sparkdoc run` writes beside it (run.jsonl: run_start, cache_drop,
// load_window_end, run_end), and the RunLog that reading them back gives. Plain values: the
// sampler and the run supervisor fill them, the detectors and the run summary judge them, the
// runlog component writes and reads them (runlog/writer.h, runlog/reader.h), the render layer
// draws them.
//
// A quantity that could not be read is an empty optional: it is left out of a watch line,
// never written as 0 (the header lists why each one was missing at the first sample). Times are
// Unix seconds; the ISO 8601 "t" of every line is written from them. The keys and record types
// leave the process (docs/WATCH.md, docs/RUN.md): append only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc::runlog {

// Cumulative nanoseconds since the driver loaded during which each policy or event held the
// clocks down (NVML field values). The first eight are the performance-policy counters (ids
// 74-81, the figures of nvmlDeviceGetViolationStatus); the last three are the R575+ clock-event
// counters (ids 269-271). low_util counts idle time and the two total_* count time below the
// application and base clocks for any reason.
struct ClockCounters {
  std::optional<uint64_t> power;
  std::optional<uint64_t> thermal;
  std::optional<uint64_t> sync_boost;
  std::optional<uint64_t> board_limit;
  std::optional<uint64_t> low_util;
  std::optional<uint64_t> reliability;
  std::optional<uint64_t> total_app_clocks;
  std::optional<uint64_t> total_base_clocks;
  std::optional<uint64_t> sw_thermal;
  std::optional<uint64_t> hw_thermal;
  std::optional<uint64_t> hw_power_brake;
  // The sampler reads the counters together, every few seconds: a sample without them is
  // empty here.
  bool empty() const {
    return !power && !thermal && !sync_boost && !board_limit && !low_util && !reliability &&
           !total_app_clocks && !total_base_clocks && !sw_thermal && !hw_thermal && !hw_power_brake;
  }
  bool operator==(const ClockCounters&) const = default;
};

// Each counter with the key the log writes it under in "clock_event_counters_ns", in the
// log's order: the one list the writer, the reader and the run summary go through.
struct ClockCounterField {
  const char* key;
  std::optional<uint64_t> ClockCounters::*member;
};
inline constexpr std::array<ClockCounterField, 11> kClockCounterFields{{
    {"power", &ClockCounters::power},
    {"thermal", &ClockCounters::thermal},
    {"sync_boost", &ClockCounters::sync_boost},
    {"board_limit", &ClockCounters::board_limit},
    {"low_util", &ClockCounters::low_util},
    {"reliability", &ClockCounters::reliability},
    {"total_app_clocks", &ClockCounters::total_app_clocks},
    {"total_base_clocks", &ClockCounters::total_base_clocks},
    {"sw_thermal", &ClockCounters::sw_thermal},
    {"hw_thermal", &ClockCounters::hw_thermal},
    {"hw_power_brake", &ClockCounters::hw_power_brake},
}};

// One process NVML lists on a GPU. The name is /proc/PID/comm, absent when this PID names
// nothing here (a container without --pid=host sees host PIDs it cannot resolve).
struct GpuProcessUse {
  uint32_t pid = 0;
  std::optional<std::string> name;
  std::optional<uint64_t> used_bytes;
  bool operator==(const GpuProcessUse&) const = default;
};

struct GpuSample {
  unsigned index = 0;
  std::optional<double> power_w;
  std::optional<unsigned> temp_c;
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> mem_clock_mhz;
  std::optional<unsigned> util_pct;
  std::optional<uint64_t> mem_used_bytes;       // NVML framebuffer used; absent on GB10
  std::optional<uint64_t> clock_event_reasons;  // gpu::kReason* bits
  std::optional<uint64_t> energy_mj;            // consumed since the driver loaded
  ClockCounters counters;
  std::optional<std::vector<GpuProcessUse>> processes;  // absent: the list could not be read
  bool operator==(const GpuSample&) const = default;
};

// The host's memory as /proc/meminfo and /proc/pressure/memory show it. On DGX Spark this is
// also the GPU's memory. The page cache is facts::page_cache_bytes(cached, buffers, shmem).
struct HostMemorySample {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> available_bytes;
  std::optional<uint64_t> cached_bytes;  // Cached: the page cache, shmem included
  std::optional<uint64_t> buffers_bytes;
  std::optional<uint64_t> shmem_bytes;
  std::optional<uint64_t> anon_bytes;
  std::optional<uint64_t> swap_total_bytes;
  std::optional<uint64_t> swap_used_bytes;
  std::optional<double> psi_some_avg10;  // percent of the last 10 s
  std::optional<double> psi_full_avg10;
  bool operator==(const HostMemorySample&) const = default;
};

// {"type":"sample"}.
struct Sample {
  double ts = 0;  // Unix time, seconds, millisecond resolution
  std::vector<GpuSample> gpus;
  HostMemorySample mem;
  // The kernel-log records naming the NVIDIA driver (NVRM, Xid, GSP) logged since the previous
  // sample, as the kernel escaped them ("NVRM: Xid (PCI:000f:01:00): 119, ..."): the only
  // place the driver reports an allocation failure or a GSP timeout. Key "kernel", written
  // only when there is one.
  std::vector<std::string> kernel;
  bool operator==(const Sample&) const = default;
};

// A quantity that could not be read at the first sample, and why ("not supported:
// NVML_ERROR_NOT_SUPPORTED (3)"). gpu is absent for host quantities.
struct Unavailable {
  std::optional<unsigned> gpu;
  std::string field;  // the sample key: "mem_used_bytes", "clock_event_counters_ns.thermal"
  std::string reason;
  bool operator==(const Unavailable&) const = default;
};

struct GpuInfo {
  unsigned index = 0;
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;
  std::optional<double> power_limit_w;  // enforced limit; absent on GB10
  bool operator==(const GpuInfo&) const = default;
};

// {"type":"header"}: the first line of watch.jsonl. watch always sets started_ts and
// interval_s; a log read back may lack them.
struct LogHeader {
  std::string sparkdoc_version;
  std::optional<double> started_ts;
  std::optional<double> interval_s;
  std::string host;
  std::string platform = "other";    // "dgx-spark" or "other"
  std::string platform_description;  // "DGX Spark (NVIDIA GB10, compute capability 12.1, ...)"
  bool unified_memory = false;       // the GPU allocates from host memory (GB10 and others)
  std::optional<std::string> driver_version;
  std::vector<GpuInfo> gpus;
  std::vector<Unavailable> unavailable;
  bool operator==(const LogHeader&) const = default;
};

enum class EventSeverity { kInfo, kWarn };

// "info", "warn".
constexpr std::string_view severity_name(EventSeverity severity) {
  return severity == EventSeverity::kWarn ? "warn" : "info";
}

// Event kinds, as watch's detectors raise them (watch/detectors.h has their rules). They leave
// the process (log, exposition): append-only.
inline constexpr std::string_view kPowerCapPlateau = "power_cap_plateau";
inline constexpr std::string_view kClockSlowdown = "clock_slowdown";
inline constexpr std::string_view kSmClockDrop = "sm_clock_drop";
inline constexpr std::string_view kNewGpuProcess = "new_gpu_process";
inline constexpr std::string_view kGpuProcessExit = "gpu_process_exit";
inline constexpr std::string_view kMemoryPressure = "memory_pressure";
inline constexpr std::string_view kPageCacheGrowth = "page_cache_growth";
inline constexpr std::string_view kPowerWedge = "power_wedge";
inline constexpr std::string_view kDriverError = "driver_error";
inline constexpr std::string_view kMemoryCollapse = "memory_collapse";
inline constexpr std::string_view kEventKinds[] = {
    kPowerCapPlateau, kClockSlowdown,   kSmClockDrop, kNewGpuProcess, kGpuProcessExit,
    kMemoryPressure,  kPageCacheGrowth, kPowerWedge,  kDriverError,   kMemoryCollapse};

// {"type":"event"}.
struct Event {
  double ts = 0;
  std::string kind;  // one of kEventKinds
  EventSeverity severity = EventSeverity::kInfo;
  std::optional<unsigned> gpu;  // absent for host events
  std::string message;          // what happened and what to do
  size_t sample = 0;            // index of the sample that raised it, from 0
  std::optional<uint32_t> pid;  // the process, for process events
  bool operator==(const Event&) const = default;
};

// One kernel value `sparkdoc run` changed (journaled first) and what it found there.
struct TunedValue {
  std::string path;
  std::string old_value;
  std::string new_value;
  bool operator==(const TunedValue&) const = default;
};

// {"type":"run_start"}: written once the command is started, before it runs.
struct RunStart {
  double ts = 0;
  std::string sparkdoc_version;
  std::string host;
  int64_t pid = 0;        // sparkdoc's
  int64_t child_pid = 0;  // the command's; also its process group id
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env_removed;        // names only, sorted
  std::map<std::string, std::string> env_set;  // what sparkdoc set, with the value
  bool distributed = false;                    // --distributed: nothing removed
  std::optional<std::string> watch_log;        // file name beside this log, or null
  std::string telemetry;                       // "watch sidecar pid N" or why there is none
  std::string preflight;                       // "ready", "ready-with-warnings", "blocked
                                               // (--force)", "skipped (--no-preflight)"
  std::optional<int> oom_score_adj;            // set on the command, or null
  std::string io_priority;                     // "best-effort 7" or why not set
  std::vector<TunedValue> tuned;
  std::optional<double> drop_cache_every_s;
  std::optional<double> drop_cache_for_s;
  bool operator==(const RunStart&) const = default;
};

// {"type":"cache_drop"}: one sync and drop_caches=3 during the load window.
struct CacheDrop {
  double ts = 0;
  bool ok = false;
  std::string error;
  bool operator==(const CacheDrop&) const = default;
};

// {"type":"load_window_end"}: the cache drops stopped.
struct LoadWindowEnd {
  double ts = 0;
  std::string reason;  // "GPU memory stable at 61.2 GB", "time limit 10 min 0 s", "command ended"
  bool operator==(const LoadWindowEnd&) const = default;
};

// A journaled value written back when the run ended (or a swap area turned on again, or why
// the journal could not be restored).
struct RestoredItem {
  std::string path;
  std::string value;
  bool ok = false;
  std::string error;
  bool operator==(const RestoredItem&) const = default;
};

// {"type":"run_end"}: how the command ended.
struct RunEnd {
  double ts = 0;
  // What sparkdoc exits with, as a shell reports it: the command's exit code, or 128 + N when
  // signal N killed it.
  int exit_status = 0;
  std::optional<int> exit_code;       // when it exited
  std::optional<std::string> signal;  // "SIGTERM" when a signal killed it
  bool core_dumped = false;
  double duration_s = 0;
  std::vector<std::string> signals_forwarded;  // in order received
  std::vector<RestoredItem> restored;
  std::vector<std::string> notes;
  bool operator==(const RunEnd&) const = default;
};

// Both files read back (runlog::read_log), damage included.
struct RunLog {
  std::optional<LogHeader> header;
  std::vector<Sample> samples;  // in time order
  std::vector<Event> events;    // in time order
  std::optional<RunStart> run_start;
  std::vector<CacheDrop> cache_drops;
  std::optional<LoadWindowEnd> load_window_end;
  std::optional<RunEnd> run_end;
  std::vector<std::string> problems;  // "watch.jsonl line 7: not a JSON object"
  size_t truncated_bytes = 0;         // unfinished last lines ignored
  size_t unknown_lines = 0;           // objects of a type this sparkdoc does not know
  bool operator==(const RunLog&) const = default;
};

}  // namespace sparkdoc::runlog
