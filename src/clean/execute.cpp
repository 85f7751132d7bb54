// clean/execute.h: the steps carried out in order. Kernel values, swap, the desktop service
// and the clock cap go through tune (journaled where a value stays changed); the steps on the
// GPU are execute_gpu.cpp's.
#include "clean/execute.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include "core/strings.h"
#include "core/time.h"
#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "gpu/probe.h"
#include "mem/account.h"
#include "sys/meminfo.h"
#include "sys/swaps.h"
#include "tune/journal.h"
#include "tune/swap.h"
#include "tune/tunables.h"

namespace sparkdoc::clean {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The command line the journal records for the session.
std::string command_text(const Options& o) {
  std::string out = "clean --yes";
  if (o.stop_known) out += " --stop-known";
  if (o.tune_vm) out += " --tune-vm";
  if (o.cap_clocks) {
    out += fmt::format(" --cap-clocks={},{}", o.cap_clocks->min_mhz, o.cap_clocks->max_mhz);
  }
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
      case StepId::kClockCap:
        cap_clocks(step);
        break;
      case StepId::kCudaContext:
        run_fresh_context(step, options_, observer_);
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
    if (auto hint = run_stop_known(step, options_, mem_, observer_)) restart_hint_ = *hint;
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

  void cap_clocks(Step& step) {
    if (options_.clocks == nullptr) {  // clean() sets it whenever --cap-clocks is given
      mark_failed(step, "internal error: no GPU clock control");
      return;
    }
    tune::JournalWriter* j = journal(step);
    if (j == nullptr) return;
    lasting_change_ = run_clock_cap(step, *j, *options_.clocks, observer_) || lasting_change_;
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

void carry_out_plan(const Options& options, Observer* observer, const Snapshot& snapshot,
                    const mem::MemReport& mem, CleanReport& report) {
  Runner runner(options, observer, snapshot, mem, report);
  runner.run();
}

}  // namespace sparkdoc::clean
