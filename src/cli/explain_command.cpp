#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "checks/registry.h"
#include "cli/commands.h"
#include "core/strings.h"
#include "report/report.h"

namespace sparkdoc::cli {
namespace {

void print_json(const nlohmann::json& j) {
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

int run_explain(const std::vector<std::string>& words, bool markdown, bool json) {
  if (markdown) {
    std::cout << report::render_checks_markdown();
    return kExitReady;
  }
  if (words.empty() && json) {
    print_json(report::render_check_list_json());
    return kExitReady;
  }
  if (words.empty()) {
    std::cout << "Usage: sparkdoc explain ID | \"symptom words\"\n\nChecks:\n"
              << report::render_check_list();
    return kExitReady;
  }
  std::vector<std::string> copy(words.begin(), words.end());
  std::string query = join(copy, " ");
  if (const checks::CheckInfo* info = checks::find_check(trim(query))) {
    if (json) {
      print_json(report::render_explanation_json(*info));
    } else {
      std::cout << report::render_explanation(*info);
    }
    return kExitReady;
  }
  auto matches = checks::search_entries(query);
  if (matches.empty() && json) {
    print_json({{"query", query}, {"matches", nlohmann::json::array()}});
    std::cerr << fmt::format("sparkdoc explain: no entry matches \"{}\"\n", query);
    return kExitUsage;
  }
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : matches) {
      nlohmann::json entry = report::render_explanation_json(*m.info);
      entry["matched_words"] = m.words;
      list.push_back(std::move(entry));
    }
    print_json({{"query", query}, {"matches", list}});
    return kExitReady;
  }
  if (matches.empty()) {
    std::cerr << fmt::format(
        "sparkdoc explain: no entry matches \"{}\": sparkdoc knows nothing about it (rather than "
        "a guess). Try a check or lint rule ID (sparkdoc check --list, sparkdoc lint --list), "
        "the error's own words, or `sparkdoc check` and `sparkdoc lint` on the machine and the "
        "job.\n",
        query);
    return kExitUsage;
  }
  std::cout << fmt::format("Best match for \"{}\" (on: {}):\n\n", query,
                           join(matches.front().words, ", "));
  std::cout << report::render_explanation(*matches.front().info);
  if (matches.size() > 1) {
    std::cout << "\nAlso related:\n";
    for (size_t i = 1; i < matches.size(); ++i) {
      std::cout << fmt::format("  {:<4} {}\n", matches[i].info->id, matches[i].info->title);
    }
  }
  return kExitReady;
}

}  // namespace

std::function<int()> add_explain_command(CLI::App& app) {
  auto words = std::make_shared<std::vector<std::string>>();
  auto markdown = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "What a check or a symptom means: its symptom, cause, how sparkdoc checks it, the fix and "
      "the document it comes from. `sparkdoc explain G3`, `sparkdoc explain \"OOM while "
      "nvidia-smi shows free memory\"`.");
  cmd->add_option("words", *words, "A check ID or symptom words");
  cmd->add_flag("--markdown", *markdown, "Every check as Markdown (the docs/CHECKS.md page)");
  cmd->add_flag("--json", *json,
                "As JSON: the entry for an ID, the best matches for symptom words (best first), "
                "or the list of checks with no words");
  return [words, markdown, json]() { return run_explain(*words, *markdown, *json); };
}

}  // namespace sparkdoc::cli
