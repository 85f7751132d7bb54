#include "run/tuning.h"

#include <fmt/format.h>
#include <unistd.h>

#include <utility>

#include "core/fs.h"
#include "core/strings.h"
#include "core/time.h"
#include "sys/proc_stat.h"
#include "tune/swap.h"
#include "tune/tunables.h"

namespace sparkdoc::run {
namespace {

constexpr std::string_view kDriverDefault = "driver default";

// Whether the record on `line` was written by a `sparkdoc run`: the session it follows.
bool written_by_run(const tune::JournalContents& journal, size_t line) {
  const tune::JournalSession* session = nullptr;
  for (const auto& s : journal.sessions) {
    if (s.line < line) session = &s;
  }
  return session != nullptr && session->command.starts_with("run");
}

// The cap `sparkdoc clean` left on the GPU: the last record of its UUID in a clean's session.
// A run's records do not count: each run put back what it found when it ended.
std::optional<tune::ClockCap> cap_in(const tune::JournalContents& journal,
                                     const std::string& uuid) {
  std::optional<tune::ClockCap> out;
  for (const auto& g : journal.gpu_clocks) {
    if (g.uuid == uuid && !written_by_run(journal, g.line)) {
      out = tune::ClockCap{g.min_mhz, g.max_mhz};
    }
  }
  return out;
}

}  // namespace

Tuning::Tuning(const RunOptions& options, tune::GpuClockControl* clocks)
    : o_(options), clocks_(clocks) {}

Tuning::~Tuning() {
  restore();
}

tune::GpuClockControl& Tuning::clocks() {
  if (clocks_ == nullptr) {
    owned_clocks_ = tune::gpu_clock_control(o_.root);
    clocks_ = owned_clocks_.get();
  }
  return *clocks_;
}

Result<void> Tuning::open_journal() {
  if (journal_) return {};
  auto loc = tune::journal_location(o_.root, o_.euid, o_.xdg_state_home, o_.home);
  if (!loc) return fail("no journal, so nothing changed: " + loc.error().message);
  // What an earlier session (clean's) left is read before this run adds to it.
  if (auto text = read_text(loc->path, tune::kJournalMaxBytes)) {
    if (auto parsed = tune::parse_journal(*text)) found_ = std::move(*parsed);
  }
  tune::JournalSession session;
  session.pid = ::getpid();
  session.started_at = utc_now_iso8601();
  session.command = o_.command_text;
  auto opened = tune::JournalWriter::open(*loc, o_.euid, session);
  if (!opened) return fail("no journal, so nothing changed: " + opened.error().message);
  journal_.emplace(std::move(*opened));
  if (journal_->created()) found_.reset();
  return {};
}

Result<std::vector<runlog::TunedValue>> Tuning::set_vm_for_load() {
  if (auto opened = open_journal(); !opened) return tl::unexpected(opened.error());
  std::vector<runlog::TunedValue> tuned;
  for (auto [tunable, value] :
       {std::pair{tune::Tunable::kMinFreeKbytes, tune::kLoadMinFreeKbytes},
        std::pair{tune::Tunable::kVfsCachePressure, tune::kLoadVfsCachePressure}}) {
    auto changed = tune::set_tunable(*journal_, o_.root, tunable, value);
    if (!changed) return tl::unexpected(changed.error());
    if (changed->changed) {
      tuned.push_back(
          {changed->path, std::to_string(changed->old_value), std::to_string(changed->new_value)});
      tuned_ = tuned;
    }
  }
  return tuned;
}

Result<std::vector<runlog::TunedValue>> Tuning::cap_clocks(tune::ClockCap cap) {
  auto gpus = clocks().gpus();
  if (!gpus) return fail("cannot cap the GPU clocks: " + gpus.error().message);
  std::vector<const tune::ClockGpu*> to_cap;
  std::vector<std::string> blocked;
  for (const auto& gpu : *gpus) {
    if (auto blocker = tune::clock_cap_blocker(gpu, cap)) {
      blocked.push_back(gpu.uuid + ": " + *blocker);
    } else {
      to_cap.push_back(&gpu);
    }
  }
  if (to_cap.empty()) {
    return fail("cannot cap the GPU clocks: " + (blocked.empty()
                                                     ? std::string("NVML lists no GPU with a UUID")
                                                     : join(blocked, "; ")));
  }
  if (auto opened = open_journal(); !opened) return tl::unexpected(opened.error());
  std::vector<runlog::TunedValue> tuned;
  for (const tune::ClockGpu* gpu : to_cap) {
    std::optional<tune::ClockCap> before;
    if (found_) before = cap_in(*found_, gpu->uuid);
    // `sparkdoc clean --cap-clocks` set this range already: nothing changes, nothing to undo.
    if (before == cap) continue;
    auto capped = tune::cap_gpu_clocks(*journal_, clocks(), *gpu, cap);
    // Journaled even when the lock failed: the end puts back what was found either way.
    capped_.push_back({gpu->uuid, before});
    if (!capped) return fail(gpu->uuid + ": " + capped.error().message);
    tuned.push_back({gpu->uuid,
                     before ? tune::clock_cap_text(*before) : std::string(kDriverDefault),
                     tune::clock_cap_text(cap)});
  }
  return tuned;
}

Result<void> Tuning::note_command(pid_t pid, std::string_view name) {
  if (!journal_ || pid <= 0) return {};
  auto stat = sys::read_proc_stat(Root(), pid);
  if (!stat) return tl::unexpected(stat.error());
  return journal_->record_command(pid, stat->start_ticks, name);
}

// The journal was there before (`sparkdoc clean --tune-vm --cap-clocks`): this run's values
// and caps go back to what it found, and the journal stays for `sparkdoc clean --restore`.
std::vector<runlog::RestoredItem> Tuning::put_back_what_was_found() {
  std::vector<runlog::RestoredItem> out;
  for (const auto& t : tuned_) {
    const tune::TunableInfo* info = tune::find_tunable(t.path);
    auto value = parse_i64(t.old_value);
    auto written = info != nullptr && value ? tune::write_tunable(o_.root, info->id, *value)
                                            : Result<void>(fail("not a value sparkdoc changes"));
    out.push_back(
        {t.path, t.old_value, written.has_value(), written ? "" : written.error().message});
  }
  for (const auto& c : capped_) {
    auto done = c.before ? clocks().lock(c.uuid, *c.before) : clocks().reset(c.uuid);
    out.push_back({c.uuid, c.before ? tune::clock_cap_text(*c.before) : std::string(kDriverDefault),
                   done.has_value(), done ? "" : done.error().message});
  }
  return out;
}

std::vector<runlog::RestoredItem> Tuning::restore() {
  std::vector<runlog::RestoredItem> out;
  if (!journal_) return out;
  tune::JournalLocation loc = journal_->location();
  if (!journal_->created()) {
    out = put_back_what_was_found();
    journal_.reset();
    return out;
  }
  // The writer's lock must go before the restore takes its own.
  journal_.reset();
  tune::KernelSwap swap(o_.root);
  auto report = tune::restore_journal(loc, o_.root, o_.euid, swap, clocks());
  if (!report) {
    out.push_back({loc.path, "", false, report.error().message});
    return out;
  }
  for (const auto& v : report->values) out.push_back({v.path, v.original, v.restored, v.error});
  for (const auto& s : report->swaps) {
    out.push_back({s.path, "swap on", s.restored, s.error});
  }
  for (const auto& c : report->gpu_clocks) {
    out.push_back({c.uuid, std::string(kDriverDefault), c.restored, c.error});
  }
  for (const auto& p : report->problems) out.push_back({loc.path, "", false, p});
  return out;
}

}  // namespace sparkdoc::run
