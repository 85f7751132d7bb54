// clean/clean.h: the machine, the plan's inputs read from it, and --restore. The steps are
// carried out by execute.cpp.
#include "clean/clean.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include "capture/capture.h"
#include "clean/execute.h"
#include "facts/platform.h"
#include "mem/account.h"
#include "sys/swaps.h"
#include "tune/gpu_clocks.h"
#include "tune/journal.h"
#include "tune/swap.h"

namespace sparkdoc::clean {
namespace {

constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

std::string env_or(const char* name, std::string fallback = "") {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::string(v);
}

}  // namespace

Machine this_machine(Root root) {
  Machine m;
  m.root = std::move(root);
  m.euid = static_cast<unsigned>(::geteuid());
  m.xdg_state_home = env_or("XDG_STATE_HOME");
  m.home = env_or("HOME");
  m.path = env_or("PATH", kDefaultPath);
  return m;
}

Result<tune::JournalLocation> journal_location(const Machine& machine) {
  return tune::journal_location(machine.root, machine.euid, machine.xdg_state_home, machine.home);
}

Result<tune::RestoreReport> restore(const Machine& machine, const tune::JournalLocation& location) {
  tune::KernelSwap swap(machine.root);
  auto clocks = tune::gpu_clock_control(machine.root);
  return tune::restore_journal(location, machine.root, machine.euid, swap, *clocks);
}

CleanReport clean(const Options& given, const std::optional<Recorded>& recorded,
                  Observer* observer) {
  // The GPUs' clocks, only when --cap-clocks asks for them: listing the GPUs initialises NVML.
  Options options = given;
  std::unique_ptr<tune::GpuClockControl> owned_clocks;
  if (options.cap_clocks && options.clocks == nullptr) {
    owned_clocks = tune::gpu_clock_control(options.machine.root, options.no_gpu);
    options.clocks = owned_clocks.get();
  }
  const Machine& machine = options.machine;
  Snapshot snapshot;
  std::string source = "live";
  CleanRequest request;
  request.execute = options.execute;
  request.stop_known = options.stop_known;
  request.tune_vm = options.tune_vm;
  request.need_bytes = options.need_bytes;
  request.cap_clocks = options.cap_clocks;
  if (recorded) {
    snapshot = recorded->snapshot;
    source = recorded->label;
    if (options.cap_clocks) request.clock_gpus = clock_gpus_of(snapshot);
  } else {
    CaptureOptions capture_options;
    capture_options.root = machine.root;
    capture_options.config_dir = "";
    capture_options.audit_native = false;  // memory and GPU holders only
    capture_options.read_gpu = !options.no_gpu;
    capture_options.cuda_devices_always = false;
    snapshot = capture(capture_options);
    if (!machine.root.live()) source = "fixture root " + machine.root.prefix();
    if (auto areas = sys::read_swaps(machine.root)) request.swap_areas = std::move(*areas);
    if (auto earlier = tune::existing_journal(machine.root, machine.euid, machine.xdg_state_home,
                                              machine.home)) {
      request.earlier_journal = earlier->path;
    }
    if (options.cap_clocks) {
      request.clock_gpus = Reading<std::vector<tune::ClockGpu>>::from(options.clocks->gpus());
    }
  }
  facts::Platform platform = facts::classify_platform(snapshot);
  mem::MemReport mem = mem::account(snapshot, platform, source);
  CleanReport report = plan_clean(snapshot, mem, request);
  if (options.execute && !recorded) carry_out_plan(options, observer, snapshot, mem, report);
  return report;
}

}  // namespace sparkdoc::clean
