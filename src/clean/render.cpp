#include "clean/render.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "core/units.h"

namespace sparkdoc::clean {
namespace {

using nlohmann::json;

constexpr size_t kWidth = 100;
constexpr size_t kTitleWidth = 32;
constexpr size_t kStateWidth = 7;
// "NN. " + title + state: where a step's detail starts.
constexpr size_t kDetailColumn = 4 + kTitleWidth + kStateWidth + 1;

std::string state_word(StepState state) {
  switch (state) {
    case StepState::kWould:
      return "would";
    case StepState::kInfo:
      return "info";
    case StepState::kSkipped:
      return "skip";
    case StepState::kDone:
      return "done";
    case StepState::kFailed:
      return "FAILED";
  }
  return "?";
}

std::string edit_text(const ValueEdit& e) {
  std::string old_value = e.old_value ? std::to_string(*e.old_value) : std::string("?");
  return fmt::format("{} {} -> {}", e.path, old_value, e.new_value);
}

json figures_json(const MemoryFigures& f) {
  return {{"page_cache_bytes", f.page_cache_bytes},
          {"mem_available_bytes", f.mem_available_bytes},
          {"mem_free_bytes", f.mem_free_bytes},
          {"headroom_bytes", f.headroom_bytes ? json(*f.headroom_bytes) : json(nullptr)}};
}

}  // namespace

std::string render_step_text(const Step& s, size_t number) {
  std::string head = fmt::format("{:>2}. {:<{}}{:<{}} ", number, s.title, kTitleWidth,
                                 state_word(s.state), kStateWidth);
  std::string detail = s.detail;
  if (s.duration_ms >= 1000) detail += fmt::format(" ({:.1f} s)", s.duration_ms / 1000.0);
  std::string out = wrap_text(head + detail, kWidth, kDetailColumn) + "\n";
  std::string pad(kDetailColumn, ' ');
  for (const auto& e : s.edits)
    out += wrap_text(pad + edit_text(e), kWidth, kDetailColumn + 2) + "\n";
  if (!s.command.empty()) {
    out += wrap_text(pad + "ran: " + join(s.command, " "), kWidth, kDetailColumn + 2) + "\n";
  }
  for (const auto& l : s.lines) out += wrap_text(pad + l, kWidth, kDetailColumn + 2) + "\n";
  return out;
}

std::string render_clean_header(const CleanReport& r) {
  std::string out = fmt::format("sparkdoc clean: {}\n", r.platform.description);
  std::string where = r.hostname.empty() ? std::string() : "host " + r.hostname + ", ";
  out += fmt::format("{}taken {} ({}){}\n\n", where, r.taken_at, r.source,
                     r.dry_run ? ", dry run" : "");
  return out;
}

std::string render_clean_footer(const CleanReport& r) {
  std::string out = "\n";
  if (r.after) {
    out += fmt::format("Page cache {} -> {}; available {} -> {}\n",
                       format_gb(r.before.page_cache_bytes), format_gb(r.after->page_cache_bytes),
                       format_gb(r.before.mem_available_bytes),
                       format_gb(r.after->mem_available_bytes));
  }
  if (r.verdict && r.verdict->headroom_bytes && !r.dry_run) {
    out += wrap_text(
               fmt::format("Verdict: {}: headroom {} against {} ({}); {}",
                           r.verdict->pass ? "ready" : "NOT ENOUGH",
                           format_gb(*r.verdict->headroom_bytes), format_gb(r.verdict->need.bytes),
                           r.verdict->need.source, r.verdict->rule),
               kWidth, 2) +
           "\n";
  }
  if (r.dry_run) {
    out += wrap_text(
               "Dry run: nothing was changed. `sparkdoc clean --yes` carries out the steps "
               "marked \"would\" (root needed; add --stop-known, --tune-vm and --cap-clocks "
               "for those steps).",
               kWidth, 0) +
           "\n";
  }
  if (r.journal) {
    const Step* cap = r.find(StepId::kClockCap);
    bool capped = cap != nullptr && cap->state == StepState::kDone;
    out +=
        wrap_text(capped ? fmt::format("Changed values and the GPU clock cap are journaled in {}: "
                                       "run `sparkdoc clean --restore` after training (it resets "
                                       "the clocks too; `sparkdoc run --cap-clocks` caps for one "
                                       "command and resets at its end).",
                                       *r.journal)
                         : fmt::format("Changed values are journaled in {}: run `sparkdoc clean "
                                       "--restore` after the model has loaded.",
                                       *r.journal),
                  kWidth, 0) +
        "\n";
  }
  for (const auto& n : r.notes) out += wrap_text(n, kWidth, 2) + "\n";
  return out;
}

std::string render_clean_text(const CleanReport& r) {
  std::string out = render_clean_header(r);
  for (size_t i = 0; i < r.steps.size(); ++i) out += render_step_text(r.steps[i], i + 1);
  return out + render_clean_footer(r);
}

json render_clean_json(const CleanReport& r) {
  json j;
  j["source"] = r.source;
  j["taken_at"] = r.taken_at;
  j["hostname"] = r.hostname;
  j["platform"] = {{"key", r.platform.key}, {"description", r.platform.description}};
  j["dry_run"] = r.dry_run;
  json steps = json::array();
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const Step& s = r.steps[i];
    json edits = json::array();
    for (const auto& e : s.edits) {
      edits.push_back({{"path", e.path},
                       {"old", e.old_value ? json(*e.old_value) : json(nullptr)},
                       {"new", e.new_value},
                       {"journaled", e.journaled}});
    }
    json clock_locks = json::array();
    for (const auto& l : s.clock_locks) {
      clock_locks.push_back({{"uuid", l.gpu.uuid},
                             {"name", l.gpu.name},
                             {"min_mhz", l.cap.min_mhz},
                             {"max_mhz", l.cap.max_mhz},
                             {"gpu_max_mhz", l.gpu.max_mhz ? json(*l.gpu.max_mhz) : json(nullptr)},
                             {"journaled", l.journaled}});
    }
    steps.push_back({{"n", i + 1},
                     {"step", std::string(step_key(s.id))},
                     {"title", s.title},
                     {"state", std::string(state_key(s.state))},
                     {"detail", s.detail},
                     {"lines", s.lines},
                     {"changes", edits},
                     {"command", s.command},
                     {"duration_ms", s.duration_ms},
                     {"clock_locks", clock_locks}});
  }
  j["steps"] = steps;
  j["before"] = figures_json(r.before);
  j["after"] = r.after ? figures_json(*r.after) : json(nullptr);
  if (r.verdict) {
    j["verdict"] = {{"need_bytes", r.verdict->need.bytes},
                    {"need_source", r.verdict->need.source},
                    {"headroom_bytes",
                     r.verdict->headroom_bytes ? json(*r.verdict->headroom_bytes) : json(nullptr)},
                    {"rule", r.verdict->rule},
                    {"pass", r.verdict->pass}};
  } else {
    j["verdict"] = nullptr;
  }
  j["journal"] = r.journal ? json(*r.journal) : json(nullptr);
  j["notes"] = r.notes;
  return j;
}

json render_restore_json(const tune::RestoreReport& report) {
  json values = json::array();
  for (const auto& v : report.values) {
    values.push_back({{"path", v.path},
                      {"original", v.original},
                      {"before", v.before ? json(*v.before) : json()},
                      {"restored", v.restored},
                      {"error", v.error}});
  }
  json swaps = json::array();
  for (const auto& s : report.swaps) {
    swaps.push_back({{"path", s.path},
                     {"priority", s.priority},
                     {"was_on", s.was_on},
                     {"restored", s.restored},
                     {"error", s.error}});
  }
  json clocks = json::array();
  for (const auto& c : report.gpu_clocks) {
    clocks.push_back(
        {{"uuid", c.uuid}, {"name", c.name}, {"restored", c.restored}, {"error", c.error}});
  }
  return {{"journal", report.location.path},
          {"found", report.found},
          {"values", values},
          {"swaps", swaps},
          {"gpu_clocks", clocks},
          {"problems", report.problems},
          {"truncated_bytes", report.truncated_bytes},
          {"removed", report.removed},
          {"complete", report.complete()}};
}

std::string render_restore_text(const tune::RestoreReport& report) {
  if (!report.found) {
    return fmt::format("sparkdoc clean --restore: no journal at {}: nothing to restore\n",
                       report.location.path);
  }
  std::string out = fmt::format("sparkdoc clean --restore: journal {}\n", report.location.path);
  for (const auto& v : report.values) {
    std::string before = v.before ? *v.before : std::string("?");
    if (v.restored) {
      out += fmt::format("  restored {} {} -> {}\n", v.path, before, v.original);
    } else {
      out += fmt::format("  NOT restored {}: {}\n", v.path, v.error);
    }
  }
  for (const auto& s : report.swaps) {
    if (s.was_on) {
      out += fmt::format("  swap {} is on\n", s.path);
    } else if (s.restored) {
      out += fmt::format("  swap {} turned on again\n", s.path);
    } else {
      out += fmt::format("  swap {} NOT turned on: {}\n", s.path, s.error);
    }
  }
  for (const auto& c : report.gpu_clocks) {
    std::string name = c.name.empty() ? std::string() : " (" + c.name + ")";
    out += c.restored
               ? fmt::format("  reset the clocks of {}{} to the driver's default\n", c.uuid, name)
               : fmt::format("  NOT reset the clocks of {}{}: {}\n", c.uuid, name, c.error);
  }
  if (report.truncated_bytes > 0) {
    out += fmt::format(
        "  ignored an unfinished last line ({} bytes): a run was killed while writing it, "
        "before its change\n",
        report.truncated_bytes);
  }
  for (const auto& p : report.problems) out += "  problem: " + p + "\n";
  out += report.removed ? std::string("  every value restored; journal removed\n")
                        : fmt::format(
                              "  journal kept at {}: fix what is listed, run `sparkdoc "
                              "clean --restore` again, or remove it by hand once the "
                              "values are right\n",
                              report.location.path);
  return out;
}

}  // namespace sparkdoc::clean
