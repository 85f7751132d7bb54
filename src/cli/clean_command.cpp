// `sparkdoc clean`: 000 §6 as a command. The steps are planned by mem (pure) and carried out
// here: kernel values, swap and the desktop service through tune (journaled where a value
// stays changed), the fresh CUDA context through gpu. The CUDA step lives here rather than in
// tune so that tune stays a sys-only library.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "capture/capture.h"
#include "checks/registry.h"
#include "cli/commands.h"
#include "cli/snapshot_file.h"
#include "core/strings.h"
#include "core/time.h"
#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "gpu/context.h"
#include "gpu/probe.h"
#include "mem/account.h"
#include "mem/clean.h"
#include "sys/meminfo.h"
#include "sys/swaps.h"
#include "tune/journal.h"
#include "tune/services.h"
#include "tune/swap.h"
#include "tune/tunables.h"

namespace sparkdoc::cli {
namespace {

using mem::StepId;
using mem::StepState;
using Clock = std::chrono::steady_clock;

// What systemctl may take to stop a unit before it is given up on.
constexpr auto kStopTimeout = std::chrono::seconds(30);
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

struct CleanFlags {
  bool yes = false;
  std::string need;
  bool stop_known = false;
  bool tune_vm = false;
  bool restore = false;
  bool json = false;
  bool no_gpu = false;
  std::string snapshot_file;
  std::string root;  // hidden: a fixture tree instead of the machine
};

std::string env_or(const char* name, std::string fallback = "") {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::string(v);
}

std::string dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string command_text(const CleanFlags& f) {
  std::string out = "clean --yes";
  if (f.stop_known) out += " --stop-known";
  if (f.tune_vm) out += " --tune-vm";
  if (!f.need.empty()) out += " --need " + f.need;
  return out;
}

// Carries out a plan step by step, printing each step as it finishes (text mode).
class Runner {
 public:
  Runner(const CleanFlags& flags, Root root, unsigned euid, std::optional<uint64_t> need_bytes,
         const Snapshot& snapshot, const mem::MemReport& mem, mem::CleanReport& report)
      : flags_(flags),
        root_(std::move(root)),
        euid_(euid),
        need_bytes_(need_bytes),
        snapshot_(snapshot),
        mem_(mem),
        report_(report) {}

  void run() {
    if (!flags_.json) std::cout << mem::render_clean_header(report_) << std::flush;
    for (size_t i = 0; i < report_.steps.size(); ++i) {
      mem::Step& step = report_.steps[i];
      if (step.state == StepState::kWould) carry_out(step);
      if (!flags_.json) std::cout << mem::render_step_text(step, i + 1) << std::flush;
    }
    finish_journal();
  }

 private:
  void progress(const std::string& what) {
    // Steps that can take seconds (sync on a busy disk, swapoff, a CUDA context, systemctl)
    // say what they are doing first, on stderr so the report on stdout stays clean.
    if (!flags_.json) std::cerr << "sparkdoc clean: " << what << "...\n" << std::flush;
  }

  void carry_out(mem::Step& step) {
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

  void mark_failed(mem::Step& step, std::string detail) {
    step.state = StepState::kFailed;
    step.detail = std::move(detail);
  }
  void mark_skipped(mem::Step& step, std::string detail) {
    step.state = StepState::kSkipped;
    step.detail = std::move(detail);
  }

  tune::JournalWriter* journal(mem::Step& step) {
    if (journal_) return &*journal_;
    auto loc = tune::journal_location(root_, euid_, env_or("XDG_STATE_HOME"), env_or("HOME"));
    if (!loc) {
      mark_failed(step, "no journal, so nothing changed: " + loc.error().message);
      return nullptr;
    }
    tune::JournalSession session;
    session.pid = ::getpid();
    session.started_at = utc_now_iso8601();
    session.command = command_text(flags_);
    auto opened = tune::JournalWriter::open(*loc, euid_, session);
    if (!opened) {
      mark_failed(step, "no journal, so nothing changed: " + opened.error().message);
      return nullptr;
    }
    journal_.emplace(std::move(*opened));
    return &*journal_;
  }

  void stop_known(mem::Step& step) {
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
      auto program = tune::find_program(argv.front(), env_or("PATH", kDefaultPath));
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

  void drop_caches(mem::Step& step) {
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

  void tune_vm(mem::Step& step) {
    tune::JournalWriter* j = journal(step);
    if (j == nullptr) return;
    std::vector<std::string> failures;
    bool changed_any = false;
    for (mem::ValueEdit& e : step.edits) {
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

  void reset_swap(mem::Step& step) {
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

  void fresh_context(mem::Step& step) {
    if (!root_.live()) {
      mark_skipped(step, "not on a fixture root");
      return;
    }
    if (flags_.no_gpu) {
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
    if (mem_.platform.kind == facts::PlatformKind::kDiscrete && root_.live() && !flags_.no_gpu) {
      s.gpu.nvml = gpu::read_nvml_live();
    }
    return s;
  }

  void measure(mem::Step& step) {
    auto s = remeasured();
    if (!s) {
      mark_failed(step, "/proc/meminfo: " + s.error().message);
      return;
    }
    report_.after = mem::figures_of(*s, mem_.platform);
    step.state = StepState::kDone;
    step.detail = fmt::format(
        "page cache {} -> {}; available {} -> {}; free {} -> {}",
        format_gb(report_.before.page_cache_bytes), format_gb(report_.after->page_cache_bytes),
        format_gb(report_.before.mem_available_bytes),
        format_gb(report_.after->mem_available_bytes), format_gb(report_.before.mem_free_bytes),
        format_gb(report_.after->mem_free_bytes));
  }

  void verdict(mem::Step& step) {
    auto need = mem::choose_need(mem_.platform, need_bytes_);
    if (!need) {
      mark_skipped(step, "no --need given");
      return;
    }
    auto s = remeasured();
    if (!s) {
      mark_failed(step, "/proc/meminfo: " + s.error().message);
      return;
    }
    report_.verdict = mem::judge(facts::compute_headroom(*s, mem_.platform), *need);
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
  const CleanFlags& flags_;
  Root root_;
  unsigned euid_;
  std::optional<uint64_t> need_bytes_;
  const Snapshot& snapshot_;
  const mem::MemReport& mem_;
  mem::CleanReport& report_;
  std::optional<tune::JournalWriter> journal_;
  bool lasting_change_ = false;
  std::optional<std::string> restart_hint_;
};

int run_restore(const CleanFlags& flags, const Root& root, unsigned euid) {
  auto loc = tune::journal_location(root, euid, env_or("XDG_STATE_HOME"), env_or("HOME"));
  if (!loc) {
    std::cerr << "sparkdoc clean --restore: " << loc.error().message << "\n";
    return kExitUsage;
  }
  tune::KernelSwap swap(root);
  auto report = tune::restore_journal(*loc, root, euid, swap);
  if (!report) {
    std::cerr << "sparkdoc clean --restore: " << report.error().message << "\n";
    return kExitBlocked;
  }
  if (flags.json) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& v : report->values) {
      values.push_back({{"path", v.path},
                        {"original", v.original},
                        {"before", v.before ? nlohmann::json(*v.before) : nlohmann::json()},
                        {"restored", v.restored},
                        {"error", v.error}});
    }
    nlohmann::json swaps = nlohmann::json::array();
    for (const auto& s : report->swaps) {
      swaps.push_back({{"path", s.path},
                       {"priority", s.priority},
                       {"was_on", s.was_on},
                       {"restored", s.restored},
                       {"error", s.error}});
    }
    nlohmann::json j = {{"journal", report->location.path},
                        {"found", report->found},
                        {"values", values},
                        {"swaps", swaps},
                        {"problems", report->problems},
                        {"truncated_bytes", report->truncated_bytes},
                        {"removed", report->removed},
                        {"complete", report->complete()}};
    std::cout << dump(j) << "\n";
  } else if (!report->found) {
    std::cout << fmt::format("sparkdoc clean --restore: no journal at {}: nothing to restore\n",
                             report->location.path);
  } else {
    std::cout << fmt::format("sparkdoc clean --restore: journal {}\n", report->location.path);
    for (const auto& v : report->values) {
      std::string before = v.before ? *v.before : std::string("?");
      if (v.restored) {
        std::cout << fmt::format("  restored {} {} -> {}\n", v.path, before, v.original);
      } else {
        std::cout << fmt::format("  NOT restored {}: {}\n", v.path, v.error);
      }
    }
    for (const auto& s : report->swaps) {
      if (s.was_on) {
        std::cout << fmt::format("  swap {} is on\n", s.path);
      } else if (s.restored) {
        std::cout << fmt::format("  swap {} turned on again\n", s.path);
      } else {
        std::cout << fmt::format("  swap {} NOT turned on: {}\n", s.path, s.error);
      }
    }
    if (report->truncated_bytes > 0) {
      std::cout << fmt::format(
          "  ignored an unfinished last line ({} bytes): a run was killed while writing it, "
          "before its change\n",
          report->truncated_bytes);
    }
    for (const auto& p : report->problems) std::cout << "  problem: " << p << "\n";
    std::cout << (report->removed
                      ? std::string("  every value restored; journal removed\n")
                      : fmt::format("  journal kept at {}: fix what is listed, run `sparkdoc "
                                    "clean --restore` again, or remove it by hand once the "
                                    "values are right\n",
                                    report->location.path));
  }
  return report->complete() ? kExitReady : kExitBlocked;
}

int run_clean(const CleanFlags& flags) {
  unsigned euid = static_cast<unsigned>(::geteuid());
  Root root = flags.root.empty() ? Root() : Root(flags.root);
  if (flags.restore && (flags.yes || !flags.snapshot_file.empty())) {
    std::cerr << "sparkdoc clean: --restore stands alone (no --yes, no --snapshot)\n";
    return kExitUsage;
  }
  if (flags.yes && !flags.snapshot_file.empty()) {
    std::cerr << "sparkdoc clean: --snapshot shows the plan for a recorded machine; it cannot be "
                 "carried out (leave out --yes)\n";
    return kExitUsage;
  }
  if (flags.yes || flags.restore) {
    if (auto problem = tune::privilege_problem(euid)) {
      std::cerr << "sparkdoc clean: " << *problem << ". Run it again with sudo"
                << (flags.yes ? ", or without --yes to see the plan" : "") << ".\n";
      return kExitUsage;
    }
  }
  if (flags.restore) return run_restore(flags, root, euid);

  std::optional<uint64_t> need_bytes;
  if (!flags.need.empty()) {
    auto bytes = parse_size(flags.need);
    if (!bytes) {
      std::cerr << "sparkdoc clean: --need: " << bytes.error().message << "\n";
      return kExitUsage;
    }
    need_bytes = *bytes;
  }

  Snapshot snapshot;
  std::string source = "live";
  mem::CleanRequest request;
  request.execute = flags.yes;
  request.stop_known = flags.stop_known;
  request.tune_vm = flags.tune_vm;
  request.need_bytes = need_bytes;
  if (!flags.snapshot_file.empty()) {
    auto loaded = load_snapshot_file(flags.snapshot_file);
    if (!loaded) {
      std::cerr << "sparkdoc clean: " << loaded.error().message << "\n";
      return kExitUsage;
    }
    snapshot = std::move(*loaded);
    source = file_label(flags.snapshot_file);
  } else {
    CaptureOptions options;
    options.root = root;
    options.config_dir = "";
    options.audit_native = false;  // memory and GPU holders only
    options.read_gpu = !flags.no_gpu;
    options.cuda_devices_always = false;
    snapshot = capture(options);
    if (!root.live()) source = "fixture root " + root.prefix();
    if (auto areas = sys::read_swaps(root)) request.swap_areas = std::move(*areas);
    if (auto earlier =
            tune::existing_journal(root, euid, env_or("XDG_STATE_HOME"), env_or("HOME"))) {
      request.earlier_journal = earlier->path;
    }
  }
  facts::Platform platform = facts::classify_platform(snapshot);
  mem::MemReport mem = mem::account(snapshot, platform, source);
  mem::CleanReport report = mem::plan_clean(snapshot, mem, request);

  if (flags.yes) {
    Runner runner(flags, root, euid, need_bytes, snapshot, mem, report);
    runner.run();
  }
  if (flags.json) {
    std::cout << dump(mem::render_clean_json(report)) << "\n";
  } else if (flags.yes) {
    std::cout << mem::render_clean_footer(report);
  } else {
    std::cout << mem::render_clean_text(report);
  }
  std::cout.flush();
  return report.any_failed() ? kExitBlocked : kExitReady;
}

}  // namespace

std::function<int()> add_clean_command(CLI::App& app) {
  auto flags = std::make_shared<CleanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "clean",
      "The cleanup before a model load (000 §6), dry run unless --yes: list GPU holders that are "
      "not training, stop known desktop services (--stop-known), report stale holders of "
      "/dev/nvidia*, sync and drop caches, tune vm for the load window (--tune-vm), reset swap, "
      "start a fresh CUDA context so the driver reclaims orphaned memory, measure, drop caches "
      "again, and judge the headroom against --need (70 GB on a DGX Spark by default). Changed "
      "values are journaled first; --restore puts them back. Exit 0 done (or dry run), 1 a step "
      "failed or not enough memory, 2 usage error or not root with --yes/--restore (then "
      "nothing is changed).");
  cmd->add_flag("--yes", flags->yes, "Carry the steps out (root needed); without it, a dry run");
  cmd->add_option("--need", flags->need,
                  "Memory the run needs, e.g. 70GB or 64GiB (default 70GB on a DGX Spark, none "
                  "elsewhere)")
      ->type_name("SIZE");
  cmd->add_flag("--stop-known", flags->stop_known,
                "Also stop gnome-remote-desktop (about 6 GB of GPU memory on a Spark) with "
                "systemctl");
  cmd->add_flag("--tune-vm", flags->tune_vm,
                "Set min_free_kbytes=1048576 and vfs_cache_pressure=500 for the load window "
                "(journaled; --restore puts them back)");
  cmd->add_flag("--restore", flags->restore,
                "Write back every value an earlier run journaled, then remove the journal (root "
                "needed)");
  cmd->add_flag("--json", flags->json, "Write the plan or the run as JSON to stdout");
  cmd->add_option("--snapshot", flags->snapshot_file,
                  "Show the plan for a snapshot recorded with `sparkdoc snapshot -o FILE` (dry "
                  "run only)")
      ->type_name("FILE");
  cmd->add_flag("--no-gpu", flags->no_gpu, "Do not load NVML or the CUDA driver (no CUDA step)");
  cmd->add_option("--root", flags->root,
                  "Read and write /proc under this folder instead of the machine (testing)")
      ->group("");
  return [flags]() { return run_clean(*flags); };
}

}  // namespace sparkdoc::cli
