#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "checks/registry.h"
#include "cli/capture_flags.h"
#include "cli/commands.h"
#include "cli/health_check.h"
#include "cli/lint_job.h"
#include "cli/only_ids.h"
#include "core/fs.h"
#include "core/strings.h"
#include "core/units.h"
#include "model/native.h"
#include "model/snapshot_json.h"
#include "report/report.h"

namespace sparkdoc::cli {
namespace {

struct CheckFlags {
  CaptureFlags capture;
  std::string snapshot_file;
  bool json = false;
  std::string env_report_file;
  bool strict = false;
  std::vector<std::string> only;
  bool list = false;
  std::string need;
  std::string playbook;
  std::string command;
  std::string arch;
  std::string color = "auto";
  std::vector<std::string> lint;
  bool health_check = false;
  bool drain = false;
};

// Readings carry text from the machine (paths, command lines); a byte that is not UTF-8 is
// written as U+FFFD rather than failing the whole report.
std::string to_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool want_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
}

int run_check(const CheckFlags& flags) {
  if (flags.list) {
    if (flags.json) {
      std::cout << report::render_check_list_json().dump(2) << "\n";
    } else {
      std::cout << report::render_check_list();
    }
    return kExitReady;
  }
  Workload workload;
  if (!flags.need.empty()) {
    auto bytes = parse_memory_size(flags.need);
    if (!bytes) {
      std::cerr << "sparkdoc check: --need: " << bytes.error().message << "\n";
      return kExitUsage;
    }
    workload.need_bytes = *bytes;
  }
  if (!flags.playbook.empty()) workload.playbook = flags.playbook;
  if (!flags.command.empty()) workload.command = flags.command;
  if (!flags.arch.empty()) {
    workload.arch = audit::parse_compute_capability(flags.arch);
    if (!workload.arch) {
      std::cerr << "sparkdoc check: --arch wants a compute capability such as 12.1 or 9.0, not '"
                << flags.arch << "'\n";
      return kExitUsage;
    }
  }

  auto only = only_ids(flags.only, [](const checks::CheckInfo& c) { return c.run != nullptr; });
  if (!only) {
    std::cerr << fmt::format("sparkdoc check: --only: no check named '{}' (see --list)\n",
                             only.error().message);
    return kExitUsage;
  }

  Snapshot snapshot;
  std::string source = "live";
  if (!flags.snapshot_file.empty()) {
    auto text = read_text(flags.snapshot_file, 256u << 20);
    if (!text) {
      std::cerr << "sparkdoc check: " << text.error().message << "\n";
      return kExitUsage;
    }
    auto parsed = snapshot_from_text(*text);
    if (!parsed) {
      std::cerr << fmt::format("sparkdoc check: {}: {}\n", flags.snapshot_file,
                               parsed.error().message);
      return kExitUsage;
    }
    snapshot = std::move(*parsed);
    auto slash = flags.snapshot_file.find_last_of('/');
    source =
        slash == std::string::npos ? flags.snapshot_file : flags.snapshot_file.substr(slash + 1);
  } else {
    snapshot = capture_live(flags.capture.options(), "check");
  }

  report::CheckReport rep = report::make_report(snapshot, workload, *only, source);
  if (!flags.lint.empty()) {
    std::vector<std::string> commands;
    if (!flags.command.empty()) commands.push_back(flags.command);
    auto job = read_lint_job(flags.lint, commands);
    if (!job) {
      std::cerr << "sparkdoc check: --lint: " << job.error().message << "\n";
      return kExitUsage;
    }
    // The job is judged for a Spark when this machine (or --arch) is one.
    const bool spark = rep.platform.kind == facts::PlatformKind::kDgxSpark ||
                       (workload.arch && workload.arch->major == 12 && workload.arch->minor == 1);
    for (auto& f : lint_for_check(*job, spark, "sparkdoc check: --lint")) {
      rep.findings.push_back(std::move(f));
    }
  }
  if (flags.health_check) return print_health(rep, snapshot, flags.strict, flags.drain);
  if (!flags.env_report_file.empty()) {
    auto written = write_file(flags.env_report_file,
                              to_text(report::render_env_report(rep, flags.strict)) + "\n");
    if (!written) {
      std::cerr << "sparkdoc check: " << written.error().message << "\n";
      return kExitUsage;
    }
  }
  if (flags.json) {
    std::cout << to_text(report::render_json(rep, flags.strict)) << "\n";
  } else {
    report::TextOptions options;
    options.color = want_color(flags.color);
    options.strict = flags.strict;
    std::cout << report::render_text(rep, options);
  }
  std::cout.flush();
  return report::readiness(rep.findings, flags.strict) == report::Readiness::kBlocked ? kExitBlocked
                                                                                      : kExitReady;
}

}  // namespace

std::function<int()> add_check_command(CLI::App& app) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Preflight: judge this machine (or a recorded snapshot) against G1-G10 and the recipe "
      "checks. One line per check: ID, PASS/FAIL/WARN/SKIP/INFO, detail. Exit 0 ready, "
      "1 blocked (any FAIL; with --strict any WARN), 2 usage or internal error.");
  cmd->add_option("--snapshot", flags->snapshot_file,
                  "Judge a snapshot recorded with `sparkdoc snapshot -o FILE` instead of this "
                  "machine")
      ->type_name("FILE");
  cmd->add_flag("--json", flags->json, "Write the findings as JSON to stdout");
  cmd->add_option("--env-report", flags->env_report_file,
                  "Also write the env report (platform, checks, headroom_gb, verdict) to FILE")
      ->type_name("FILE");
  cmd->add_flag("--strict", flags->strict, "Treat WARN as blocking (exit 1)");
  cmd->add_option("--only", flags->only, "Run only these checks, e.g. --only G1,G3")
      ->delimiter(',')
      ->type_name("IDS");
  cmd->add_flag("--list", flags->list, "List the checks and exit");
  cmd->add_option("--need", flags->need,
                  "Memory the run needs, e.g. 70GB or 64GiB: G3 judges headroom against it")
      ->type_name("SIZE");
  cmd->add_option("--playbook", flags->playbook,
                  "Official DGX Spark playbook you follow (G8), e.g. unsloth, vllm, nccl")
      ->type_name("NAME");
  cmd->add_option("--cmd", flags->command,
                  "The launch command you plan to run, for G10 and S8, e.g. \"torchrun ...\"")
      ->type_name("CMD");
  cmd->add_option("--arch", flags->arch,
                  "Judge the native code (G1, G2, G7, S9) for this compute capability instead of "
                  "the GPU's: `--snapshot node.json --arch 12.1` judges a recorded machine's "
                  "environment for a DGX Spark")
      ->type_name("X.Y");
  cmd->add_option("--lint", flags->lint,
                  "Also judge the training job in PATH (files or folders, as `sparkdoc lint` "
                  "does, with --cmd's line): its findings join the report and a FAIL blocks")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("PATH");
  cmd->add_option("--color", flags->color,
                  "Colour the verdict words: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN")
      ->capture_default_str();
  cmd->add_flag("--cuda", flags->capture.cuda_devices_always,
                "Also initialise the CUDA driver to read its device attributes when NVML already "
                "answered (costs about 0.2 s and 20 MB; `sparkdoc snapshot` always does)");
  auto* health = cmd->add_flag(
      "--health-check", flags->health_check,
      "Print one line for a scheduler's health check instead of the report: \"sparkdoc OK: ...\" "
      "and exit 0, or the first failure (\"G1 FAIL: ...\", at most 200 ASCII characters) and "
      "exit 1; 2 when it cannot judge. Slurm (HealthCheckProgram, Prolog), NHC and Kubernetes "
      "node-problem-detector read exactly that (docs/FLEET.md). With a compute process on the GPU "
      "(a job), G3, G6, "
      "S10 and F6 are left out so that the job does not fail its own node");
  cmd->add_flag("--drain", flags->drain,
                "With --health-check: on a failure, also drain this Slurm node with the line as "
                "its reason (scontrol update NodeName=$SLURMD_NODENAME State=DRAIN "
                "Reason=\"sparkdoc ...\"); resume it with State=RESUME once fixed")
      ->needs(health);
  health->excludes("--json")->excludes("--list");
  flags->capture.add_to(*cmd);
  flags->capture.add_cache_option(*cmd);
  return [flags, cmd]() {
    // A snapshot is judged as it was recorded: the options that shape a live capture would be
    // ignored, so they are refused rather than dropped in silence.
    if (!flags->snapshot_file.empty()) {
      std::vector<std::string> live_only;
      for (const char* name :
           {"--python", "--site-packages", "--config-dir", "--no-gpu", "--cuda", "--no-cache"}) {
        if (cmd->count(name) > 0) live_only.emplace_back(name);
      }
      if (!live_only.empty()) {
        std::cerr << fmt::format(
            "sparkdoc check: {} shape{} a live capture and cannot change a recorded snapshot; "
            "drop {} or record a new snapshot with {} (sparkdoc snapshot ... -o FILE)\n",
            join(live_only, ", "), live_only.size() == 1 ? "s" : "",
            live_only.size() == 1 ? "it" : "them", live_only.size() == 1 ? "it" : "them");
        return kExitUsage;
      }
    }
    return run_check(*flags);
  };
}

}  // namespace sparkdoc::cli
