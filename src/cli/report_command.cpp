// `sparkdoc report LOG [-o run.html] [--json]`: a run log (watch.jsonl, run.jsonl, or the run
// folder holding them) as a summary on the terminal, as JSON, or as one self-contained HTML page.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "core/fs.h"
#include "facts/run_summary.h"
#include "report/run_page.h"
#include "report/run_summary.h"
#include "runlog/reader.h"
#include "watch/detectors.h"

namespace sparkdoc::cli {
namespace {

struct ReportFlags {
  std::string log;
  std::string output;
  std::string title = "sparkdoc run report";
  bool json = false;
};

// A log with samples and not one event was written without watch's detectors (an older
// sparkdoc, another writer, a sidecar stopped before it judged): a run that ended at 2.5 GB
// available would read "No events". Its samples are judged again by the same pure detectors
// (watch/detectors.h: a recorded log gives the events the live run would have), and the
// returned note says so. Nothing is judged again in a log that has events: they are the live
// run's.
std::optional<std::string> judge_again(runlog::RunLog& log) {
  if (!log.events.empty() || log.samples.empty()) return std::nullopt;
  runlog::LogHeader header = log.header ? *log.header : runlog::LogHeader{};
  log.events = watch::detect(watch::detector_config(header), log.samples);
  size_t warn = 0;
  for (const auto& e : log.events) warn += e.severity == runlog::EventSeverity::kWarn ? 1 : 0;
  if (log.events.empty()) {
    return fmt::format(
        "The log holds no events; its {} samples were judged again by this sparkdoc's watch "
        "detectors, and none fired.",
        log.samples.size());
  }
  return fmt::format(
      "The log holds no events; its {} samples were judged again by this sparkdoc's watch "
      "detectors: {} event{} ({} warn), not written by the run itself.",
      log.samples.size(), log.events.size(), log.events.size() == 1 ? "" : "s", warn);
}

int run_report(const ReportFlags& flags) {
  auto log = runlog::read_log(flags.log);
  if (!log) {
    std::cerr << "sparkdoc report: " << log.error().message << "\n";
    return kExitUsage;
  }
  std::optional<std::string> judged_again = judge_again(*log);
  facts::RunSummary summary = facts::summarize_run(*log);
  if (judged_again) summary.notes.push_back(*judged_again);
  if (!flags.output.empty()) {
    report::RunPageOptions options;
    options.title = flags.title;
    auto slash = flags.log.find_last_of('/');
    options.source = slash == std::string::npos || slash + 1 == flags.log.size()
                         ? flags.log
                         : flags.log.substr(slash + 1);
    std::string html = report::render_run_page(*log, summary, options);
    if (auto written = write_file(flags.output, html); !written) {
      std::cerr << "sparkdoc report: " << written.error().message << "\n";
      return kExitUsage;
    }
    std::cerr << fmt::format("sparkdoc report: wrote {} ({} samples, {} events, {} KB)\n",
                             flags.output, log->samples.size(), log->events.size(),
                             (html.size() + 1023) / 1024);
  }
  if (flags.json) {
    std::cout << report::render_run_summary_json(summary).dump(
                     2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else if (flags.output.empty()) {
    std::cout << report::render_run_summary_text(summary, 50);
  }
  return kExitReady;
}

}  // namespace

bool write_html_page(std::string_view command, const std::string& path, const std::string& html) {
  if (auto written = write_file(path, html); !written) {
    std::cerr << command << ": " << written.error().message << "\n";
    return false;
  }
  std::cerr << fmt::format("{}: wrote {} ({} KB)\n", command, path, (html.size() + 1023) / 1024);
  return true;
}

std::function<int()> add_report_command(CLI::App& app) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Turn a run log into a summary or a self-contained HTML page (charts of power, temperature, "
      "SM clock, host memory and page cache, GPU memory per process, with event markers; no "
      "network needed to view it). LOG is a run folder of `sparkdoc run` or a watch.jsonl / "
      "run.jsonl file; a log cut short by kill -9 is read up to its last whole line.\n"
      "Example: sparkdoc report sparkdoc-runs/20261129-101500-4242 -o run.html");
  cmd->add_option("log", flags->log, "Run folder, watch.jsonl or run.jsonl")
      ->required()
      ->type_name("LOG");
  cmd->add_option("-o,--output", flags->output, "Write the HTML page here")->type_name("FILE");
  cmd->add_option("--title", flags->title, "Title of the HTML page")->capture_default_str();
  cmd->add_flag("--json", flags->json, "Print the summary as JSON on stdout");
  return [flags]() { return run_report(*flags); };
}

}  // namespace sparkdoc::cli
