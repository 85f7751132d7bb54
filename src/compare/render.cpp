#include "compare/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/printable.h"
#include "core/strings.h"

namespace sparkdoc::compare {
namespace {

constexpr size_t kWidth = 100;       // why lines and fleet groups wrap here
constexpr size_t kValueMax = 40;     // a longer value is cut in the table (--json has it all)
constexpr size_t kIndent = 9;        // the severity column
constexpr size_t kNamesInGroup = 3;  // a group of more nodes is counted, not listed
constexpr std::string_view kNotRecorded = "not recorded";

std::string label(const Row& row) {
  if (row.state == RowState::kSame) return "same";
  switch (row.severity) {
    case Severity::kBreaks:
      return "BREAKS";
    case Severity::kLook:
      return "LOOK";
    case Severity::kHarmless:
      return "harmless";
  }
  return "LOOK";
}

// One field of the table: printable, and cut to kValueMax.
std::string cell(std::string_view text) {
  std::string out = printable(text);
  if (out.size() > kValueMax) out = out.substr(0, kValueMax - 3) + "...";
  return out;
}

std::string value_text(const std::optional<std::string>& v) {
  return v ? *v : std::string(kNotRecorded);
}

std::vector<const Row*> shown(const Comparison& c, bool all) {
  std::vector<const Row*> out;
  for (const Row& row : c.rows) {
    if (all || shown_by_default(row)) out.push_back(&row);
  }
  return out;
}

// The table's rows: every row with --all, else those that differ (the rows recorded on some
// nodes only are named after the table, in one paragraph).
std::vector<const Row*> tabled(const Comparison& c, bool all) {
  std::vector<const Row*> out;
  for (const Row& row : c.rows) {
    if (all || row.state == RowState::kDiffers) out.push_back(&row);
  }
  return out;
}

// "Not recorded on spark-b, so not compared: NCCL (system), MTU 0000:01:00.0, ...".
std::string not_recorded_paragraph(const Comparison& c) {
  std::vector<std::string> readings;
  std::vector<bool> missing(c.nodes.size(), false);
  for (const Row& row : c.rows) {
    if (row.state != RowState::kNotRecorded || !shown_by_default(row)) continue;
    readings.push_back(printable(row.reading));
    for (size_t i = 0; i < row.values.size(); ++i) {
      if (!row.values[i]) missing[i] = true;
    }
  }
  if (readings.empty()) return "";
  std::vector<std::string> who;
  for (size_t i = 0; i < missing.size(); ++i) {
    if (missing[i]) who.push_back(printable(c.nodes[i]));
  }
  std::string nodes = who.size() <= kNamesInGroup
                          ? join(who, ", ")
                          : fmt::format("{} nodes ({}...)", who.size(), who.front());
  return wrap_text(fmt::format("Not recorded on {} (a snapshot from an older sparkdoc, or a "
                               "probe that could not read it), so not compared: {}.",
                               nodes, join(readings, ", ")),
                   kWidth, 0) +
         "\n";
}

std::string columns(const Comparison& c, const std::vector<const Row*>& rows) {
  size_t reading_width = std::string_view("reading").size();
  for (const Row* row : rows) reading_width = std::max(reading_width, cell(row->reading).size());
  std::vector<size_t> widths;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    size_t w = cell(c.nodes[i]).size();
    for (const Row* row : rows) w = std::max(w, cell(value_text(row->values[i])).size());
    widths.push_back(w);
  }
  auto line = [&](std::string_view first, std::string_view reading, auto value_of) {
    std::string out = fmt::format("{:<{}}{:<{}}", first, kIndent, reading, reading_width);
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      out += fmt::format("  {:<{}}", value_of(i), widths[i]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line("", "reading", [&](size_t i) { return cell(c.nodes[i]); });
  for (const Row* row : rows) {
    out += line(label(*row), cell(row->reading),
                [&](size_t i) { return cell(value_text(row->values[i])); });
    out += std::string(kIndent, ' ') + wrap_text(row->why, kWidth, kIndent, kIndent) + "\n";
  }
  return out;
}

// "580.95.05: 998 nodes (node0001...); 580.82.09: node0999, node1000".
std::string groups(const Comparison& c, const Row& row) {
  std::map<std::string, std::vector<size_t>> by_value;
  for (size_t i = 0; i < row.values.size(); ++i) by_value[value_text(row.values[i])].push_back(i);
  std::vector<std::pair<std::string, std::vector<size_t>>> sorted(by_value.begin(), by_value.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::vector<std::string> parts;
  for (const auto& [value, nodes] : sorted) {
    std::string who;
    if (nodes.size() <= kNamesInGroup) {
      std::vector<std::string> names;
      for (size_t i : nodes) names.push_back(printable(c.nodes[i]));
      who = join(names, ", ");
    } else {
      who = fmt::format("{} nodes ({}...)", nodes.size(), printable(c.nodes[nodes.front()]));
    }
    parts.push_back(fmt::format("{}: {}", printable(value), who));
  }
  return join(parts, "; ");
}

std::string fleet(const Comparison& c, const std::vector<const Row*>& rows) {
  std::string out;
  for (const Row* row : rows) {
    out += fmt::format("{:<{}}{}\n", label(*row), kIndent, printable(row->reading));
    out += std::string(kIndent, ' ') + wrap_text(groups(c, *row), kWidth, kIndent, kIndent) + "\n";
    out += std::string(kIndent, ' ') + wrap_text(row->why, kWidth, kIndent, kIndent) + "\n";
  }
  return out;
}

struct Counts {
  size_t differ = 0;
  size_t breaking = 0;
  size_t not_recorded = 0;
};

Counts count(const Comparison& c) {
  Counts n;
  for (const Row& row : c.rows) {
    if (row.state == RowState::kDiffers) ++n.differ;
    if (breaks_job(row)) ++n.breaking;
    if (row.state == RowState::kNotRecorded && shown_by_default(row)) ++n.not_recorded;
  }
  return n;
}

std::string plural(size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::string render_compare_text(const Comparison& c, bool all) {
  std::vector<std::string> names;
  for (const auto& n : c.nodes) names.push_back(printable(n));
  std::string out;
  if (c.nodes.size() <= kColumnsMax) {
    out = fmt::format("sparkdoc compare: {}: {}\n", plural(c.nodes.size(), "node", "nodes"),
                      join(names, ", "));
  } else {
    out = fmt::format("sparkdoc compare: {} ({}...{})\n", plural(c.nodes.size(), "node", "nodes"),
                      names.front(), names.back());
  }
  std::vector<const Row*> rows = tabled(c, all);
  if (!rows.empty()) {
    out += "\n";
    out += c.nodes.size() <= kColumnsMax ? columns(c, rows) : fleet(c, rows);
  }
  if (!all) {
    if (std::string paragraph = not_recorded_paragraph(c); !paragraph.empty()) {
      out += "\n" + paragraph;
    }
  }
  Counts n = count(c);
  out += "\n";
  if (n.differ == 0) {
    out +=
        fmt::format("No reading differs between the {}", plural(c.nodes.size(), "node", "nodes"));
  } else {
    out += fmt::format(
        "{} between the nodes; {} a job", plural(n.differ, "reading differs", "readings differ"),
        n.breaking == 0 ? std::string("none breaks") : plural(n.breaking, "breaks", "break"));
  }
  if (n.not_recorded > 0) {
    out += fmt::format("; {} not recorded on every node",
                       plural(n.not_recorded, "reading", "readings"));
  }
  out += ".\n";
  if (!all) {
    size_t hidden = c.rows.size() - rows.size();
    if (hidden > 0)
      out += fmt::format("--all shows the {} that agree.\n", plural(hidden, "reading", "readings"));
  }
  return out;
}

nlohmann::json render_compare_json(const Comparison& c, const std::vector<Problem>& problems,
                                   bool all) {
  using nlohmann::json;
  json rows = json::array();
  for (const Row* row : shown(c, all)) {
    json values = json::object();
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      values[c.nodes[i]] = row->values[i] ? json(*row->values[i]) : json(nullptr);
    }
    rows.push_back({{"reading", row->reading},
                    {"severity", severity_key(row->severity)},
                    {"state", row_state_key(row->state)},
                    {"why", row->why},
                    {"values", std::move(values)}});
  }
  json listed = json::array();
  for (const Problem& p : problems) {
    listed.push_back({{"node", p.node}, {"message", p.message}, {"skipped", p.skipped}});
  }
  Counts n = count(c);
  return json{
      {"nodes", c.nodes},       {"rows", std::move(rows)},     {"differences", n.differ},
      {"breaking", n.breaking}, {"breaks_job", breaks_job(c)}, {"problems", std::move(listed)}};
}

}  // namespace sparkdoc::compare
