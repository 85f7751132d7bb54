// clean/clean.h: the steps carried out. Kernel values, swap and the desktop service go
// through tune (journaled where a value stays changed), the fresh CUDA context through gpu.
// The CUDA step lives here rather than in tune so that tune stays a sys-only library.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>

#include "capture/capture.h"
#include "clean/clean.h"
#include "core/strings.h"
#include "core/time.h"
#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "gpu/context.h"
#include "gpu/probe.h"
#include "mem/account.h"
#include "sys/meminfo.h"
#include "sys/swaps.h"
#include "tune/journal.h"
#include "tune/services.h"
#include "tune/swap.h"
#include "tune/tunables.h"

namespace sparkdoc::clean {
namespace {

using Clock = std::chrono::steady_clock;

// What systemctl may take to stop a unit before it is given up on.
constexpr auto kStopTimeout = std::chrono::seconds(30);
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

std::string env_or(const char* name, std::string fallback = "") {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::string(v);
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The command line the journal records for the session.
std::string command_text(const Options& o) {
  std::string out = "clean --yes";
  if (o.stop_known) out += " --stop-known";
  if (o.tune_vm) out += " --tune-vm";
  if (!o.need_text.empty()) out += " --need " + o.need_text;
  return out;
}

// Carries out a plan step by step, telling the observer each step as it finishes.
class Runner {
 public:
  Runner(const Options& options, Observer* observer, const Snapshot& snapshot,
         const mem::MemReport& mem, CleanReport& report)
      : options_(options),
        root_(options.machine.root),
        euid_(options.machine.euid),
        observer_(observer),
        snapshot_(snapshot),
        mem_(mem),
        report_(report) {}

  void run() {
    if (observer_ != nullptr) observer_->started(report_);
    for (size_t i = 0; i < report_.steps.size(); ++i) {
      Step& step = report_.steps[i];
      if (step.state == StepState::kWould) carry_out(step);
      if (observer_ != nullptr) observer_->finished(step, i + 1);
    }
    finish_journal();
  }

 private:
  void progress(const std::string& what) {
    // Steps that can take seconds (sync on a busy disk, swapoff, a CUDA context, systemctl)
    // say what they are doing first.
    if (observer_ != nullptr) observer_->working(what);
  }

  void carry_out(Step& step) {
    auto start = Clock::now();
    switch (step.id) {
      case StepId::kStopKnown:
        stop_known(step);
        break;
      case StepId::kDropCaches:
      case StepId::kDropCachesAgain:
        drop_caches(step);
        break;
      case StepId::kVmTuning:
        tune_vm(step);
        break;
      case StepId::kSwapReset:
        reset_swap(step);
        break;
      case StepId::kCudaContext:
        fresh_context(step);
        break;
      case StepId::kMeasure:
        measure(step);
        break;
      case StepId::kVerdict:
        verdict(step);
        break;
      case StepId::kHolders:
      case StepId::kStaleHolders:
        break;
    }
    step.duration_ms = ms_since(start);
  }

  void mark_failed(Step& step, std::string detail) {
    step.state = StepState::kFailed;
    step.detail = std::move(detail);
  }
  void mark_skipped(Step& step, std::string detail) {
    step.state = StepState::kSkipped;
    step.detail = std::move(detail);
  }

  tune::JournalWriter* journal(Step& step) {
    if (journal_) return &*journal_;
    auto loc = journal_location(options_.machine);
    if (!loc) {
      mark_failed(step, "no journal, so nothing changed: " + loc.error().message);
      return nullptr;
    }
    tune::JournalSession session;
    session.pid = ::getpid();
    session.started_at = utc_now_iso8601();
    session.command = command_text(options_);
    auto opened = tune::JournalWriter::open(*loc, euid_, session);
    if (!opened) {
      mark_failed(step, "no journal, so nothing changed: " + opened.error().message);
      return nullptr;
    }
    journal_.emplace(std::move(*opened));
    return &*journal_;
  }

  void stop_known(Step& step) {
    if (!root_.live()) {
      mark_skipped(step, "not on a fixture root: systemctl would act on this machine");
      return;
    }
    std::vector<std::string> failures;
    std::vector<std::string> stopped;
    for (const auto& k : mem_.stoppable) {
      auto owner = tune::process_owner(root_, k.pid);
      if (!owner) {
        step.lines.push_back(fmt::format("{} (pid {}): {}", k.kind, k.pid, owner.error().message));
        continue;
      }
      auto name = tune::user_name(*owner);
      auto argv = tune::stop_unit_argv(tune::kRemoteDesktopUnit, *owner,
                                       name ? *name : std::to_string(*owner), euid_);
      step.command = argv;
      auto program = tune::find_program(argv.front(), options_.machine.path);
      if (!program) {
        failures.push_back(program.error().message);
        continue;
      }
      argv.front() = *program;
      progress(fmt::format("stopping {} (pid {})", k.kind, k.pid));
      auto ran = tune::run_program(argv, kStopTimeout);
      if (!ran) {
        failures.push_back(ran.error().message);
      } else if (ran->timed_out) {
        failures.push_back(fmt::format("{} did not finish in {} s", join(step.command, " "),
                                       kStopTimeout.count()));
      } else if (ran->exit_status != 0) {
        failures.push_back(fmt::format("{} exited {}: {}", join(step.command, " "),
                                       ran->exit_status, std::string(trim(ran->output))));
      } else {
        stopped.push_back(fmt::format("{} (pid {})", k.kind, k.pid));
        std::vector<std::string> start = step.command;
        for (auto& word : start) {
          if (word == "stop") word = "start";
        }
        restart_hint_ = "gnome-remote-desktop was stopped; start it again after the load with `" +
                        join(start, " ") + "`";
      }
    }
    if (!failures.empty()) {
      mark_failed(step, join(failures, "; "));
    } else if (stopped.empty()) {
      mark_skipped(step, "nothing to stop: the process is gone");
    } else {
      step.state = StepState::kDone;
      step.detail = "stopped " + join(stopped, ", ");
    }
  }

  void drop_caches(Step& step) {
    progress(step.id == StepId::kDropCaches ? "sync and drop caches"
                                            : "sync and drop caches again");
    auto dropped = tune::sync_and_drop_caches(root_);
    if (!dropped) {
      mark_failed(step, dropped.error().message);
      return;
    }
    step.state = StepState::kDone;
    step.detail = root_.live() ? "synced, then wrote 3 to /proc/sys/vm/drop_caches"
                               : "wrote 3 to /proc/sys/vm/drop_caches (fixture root: no sync)";
  }

  void tune_vm(Step& step) {
    tune::JournalWriter* j = journal(step);
    if (j == nullptr) return;
    std::vector<std::string> failures;
    bool changed_any = false;
    for (ValueEdit& e : step.edits) {
      // The plan names the files; only the allow-list's entries are written.
      const tune::TunableInfo* tunable = tune::find_tunable(e.path);
      if (tunable == nullptr || !tunable->setting) {
        failures.push_back(e.path + " is not a value sparkdoc changes");
        continue;
      }
      auto changed = tune::set_tunable(*j, root_, tunable->id, e.new_value);
      if (!changed) {
        failures.push_back(changed.error().message);
        continue;
      }
      e.old_value = changed->old_value;
      e.journaled = changed->changed;
      changed_any = changed_any || changed->changed;
    }
    lasting_change_ = lasting_change_ || changed_any;
    if (!failures.empty()) {
      mark_failed(step, join(failures, "; "));
      return;
    }
    step.state = StepState::kDone;
    step.detail = changed_any ? "set for the load window; old values journaled"
                              : "already at the load-window values; nothing changed";
  }

  void reset_swap(Step& step) {
    tune::KernelSwap swap(root_);
    auto areas = swap.active();
    if (!areas) {
      mark_failed(step, "/proc/swaps: " + areas.error().message);
      return;
    }
    auto meminfo = sys::read_meminfo(root_);
    if (!meminfo) {
      mark_failed(step, "/proc/meminfo: " + meminfo.error().message);
      return;
    }
    auto blocker = tune::swap_reset_blocker(*areas, meminfo->mem_available_bytes,
                                            meminfo->swap_cached_bytes, facts::kHeadroomFloorBytes);
    if (blocker) {
      mark_skipped(step, *blocker);
      return;
    }
    if (!root_.live()) {
      mark_skipped(step, "not on a fixture root: swapoff(2) would act on this machine's swap");
      return;
    }
    tune::JournalWriter* j = journal(step);
    if (j == nullptr) return;
    progress("swapoff and swapon (moving swapped pages back into RAM)");
    auto result = tune::reset_swap(*j, swap, *areas);
    step.lines.clear();
    bool all = result.size() == areas->size();
    for (const auto& r : result) {
      all = all && r.turned_on;
      lasting_change_ = lasting_change_ || (r.turned_off && !r.turned_on);
      step.lines.push_back(fmt::format("{}: {}", r.area.path,
                                       r.turned_on ? std::string("off and on again") : r.error));
    }
    if (!all) {
      mark_failed(step, "not every swap area was reset");
      return;
    }
    step.state = StepState::kDone;
    step.detail =
        fmt::format("{} swap area(s) off and on again; swap is free for the load", result.size());
  }

  void fresh_context(Step& step) {
    if (!root_.live()) {
      mark_skipped(step, "not on a fixture root");
      return;
    }
    if (options_.no_gpu) {
      mark_skipped(step, "--no-gpu");
      return;
    }
    const auto& cuda = gpu::Cuda::instance();
    if (!cuda) {
      mark_failed(step, cuda.error().message);
      return;
    }
    progress("creating a fresh CUDA context");
    auto m = gpu::fresh_context_mem_info(*cuda, 0);
    if (!m) {
      mark_failed(step, m.error().message);
      return;
    }
    step.state = StepState::kDone;
    step.detail = fmt::format(
        "context created and released; cuMemGetInfo said {} free of {} (the seed's figure; on "
        "unified memory it leaves out swap and reclaimable cache)",
        format_gb(m->free_bytes), format_gb(m->total_bytes));
  }

  // A copy of the snapshot with the memory readings taken again.
  Result<Snapshot> remeasured() {
    auto meminfo = sys::read_meminfo(root_);
    if (!meminfo) return tl::unexpected(meminfo.error());
    Snapshot s = snapshot_;
    s.meminfo = *meminfo;
    // On a discrete GPU the headroom is the GPU's own free memory.
    if (mem_.platform.kind == facts::PlatformKind::kDiscrete && root_.live() && !options_.no_gpu) {
      s.gpu.nvml = gpu::read_nvml_live();
    }
    return s;
  }

  void measure(Step& step) {
    auto s = remeasured();
    if (!s) {
      mark_failed(step, "/proc/meminfo: " + s.error().message);
      return;
    }
    report_.after = figures_of(*s, mem_.platform);
    step.state = StepState::kDone;
    step.detail = fmt::format(
        "page cache {} -> {}; available {} -> {}; free {} -> {}",
        format_gb(report_.before.page_cache_bytes), format_gb(report_.after->page_cache_bytes),
        format_gb(report_.before.mem_available_bytes),
        format_gb(report_.after->mem_available_bytes), format_gb(report_.before.mem_free_bytes),
        format_gb(report_.after->mem_free_bytes));
  }

  void verdict(Step& step) {
    auto need = choose_need(mem_.platform, options_.need_bytes);
    if (!need) {
      mark_skipped(step, "no --need given");
      return;
    }
    auto s = remeasured();
    if (!s) {
      mark_failed(step, "/proc/meminfo: " + s.error().message);
      return;
    }
    report_.verdict = judge(facts::compute_headroom(*s, mem_.platform), *need);
    const auto& v = *report_.verdict;
    if (!v.headroom_bytes) {
      mark_failed(step, v.rule);
      return;
    }
    step.state = v.pass ? StepState::kDone : StepState::kFailed;
    step.detail = fmt::format("headroom {} {} {} ({})", format_gb(*v.headroom_bytes),
                              v.pass ? ">=" : "<", format_gb(v.need.bytes), v.need.source);
  }

  // A journal that recorded only what this run put back itself (swap turned on again) goes;
  // one that holds values left changed (the vm tuning) or an earlier run's entries stays.
  void finish_journal() {
    if (restart_hint_) report_.notes.push_back(*restart_hint_);
    if (!journal_) return;
    if (!lasting_change_ && journal_->created()) {
      auto removed = journal_->remove();
      if (removed) return;
      report_.notes.push_back("journal not removed: " + removed.error().message);
    }
    report_.journal = journal_->location().path;
  }

 private:
  const Options& options_;
  const Root& root_;
  unsigned euid_;
  Observer* observer_;
  const Snapshot& snapshot_;
  const mem::MemReport& mem_;
  CleanReport& report_;
  std::optional<tune::JournalWriter> journal_;
  bool lasting_change_ = false;
  std::optional<std::string> restart_hint_;
};

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
  return tune::restore_journal(location, machine.root, machine.euid, swap);
}

CleanReport clean(const Options& options, const std::optional<Recorded>& recorded,
                  Observer* observer) {
  const Machine& machine = options.machine;
  Snapshot snapshot;
  std::string source = "live";
  CleanRequest request;
  request.execute = options.execute;
  request.stop_known = options.stop_known;
  request.tune_vm = options.tune_vm;
  request.need_bytes = options.need_bytes;
  if (recorded) {
    snapshot = recorded->snapshot;
    source = recorded->label;
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
  }
  facts::Platform platform = facts::classify_platform(snapshot);
  mem::MemReport mem = mem::account(snapshot, platform, source);
  CleanReport report = plan_clean(snapshot, mem, request);
  if (options.execute && !recorded) {
    Runner runner(options, observer, snapshot, mem, report);
    runner.run();
  }
  return report;
}

}  // namespace sparkdoc::clean
