#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "audit/audit.h"
#include "audit/render.h"
#include "capture/capture.h"
#include "cli/capture_flags.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "elf/fatbin.h"
#include "elf/listing.h"
#include "model/audit_json.h"
#include "model/elf_json.h"

namespace sparkdoc::cli {
namespace {

struct AuditFlags {
  CaptureFlags capture;
  std::string arch;
  bool json = false;
  bool all = false;
  bool list_elf = false;
  unsigned threads = 0;
  std::vector<std::string> files;
};

nlohmann::json file_json(const audit::FileAudit& f) {
  nlohmann::json j{{"file", f.file}, {"package", f.package}};
  if (!f.error.empty()) {
    j["error"] = f.error;
    return j;
  }
  nlohmann::json needs = nlohmann::json::array();
  for (const elf::Resolution& r : f.needs) {
    needs.push_back({{"soname", r.soname},
                     {"found", r.path ? nlohmann::json(*r.path) : nlohmann::json(nullptr)},
                     {"via", elf::found_via_name(r.via)}});
  }
  j["needs"] = std::move(needs);
  j["cuda_majors"] = f.cuda_majors;
  j["gpu_code"] = f.gpu_code;
  j["sass_targets"] = f.sass_targets;
  j["ptx_targets"] = f.ptx_targets;
  if (f.verdict) {
    j["gpu"] = elf::verdict_name(f.verdict->run);
    j["nvfp4"] = f.verdict->nvfp4;
    j["containers"] = {{"sass", f.verdict->containers_sass},
                       {"ptx_jit_only", f.verdict->containers_ptx_only},
                       {"none", f.verdict->containers_none}};
  }
  return j;
}

// `--list-elf FILE...`: what cuobjdump --list-elf --list-ptx prints for each, byte for byte.
int list_elf(const AuditFlags& flags) {
  if (flags.files.empty()) {
    std::cerr << "sparkdoc audit --list-elf: name one or more files\n";
    return kExitUsage;
  }
  int status = 0;
  for (const std::string& path : flags.files) {
    auto code = elf::read_gpu_code(path);
    if (!code) {
      std::cerr << "sparkdoc audit: " << code.error().message << "\n";
      status = kExitBlocked;
      continue;
    }
    std::cout << elf::list_elf_and_ptx(*code, path);
    if (flags.files.size() == 1) status = elf::list_exit_status(*code);
  }
  std::cout.flush();
  return status;
}

int run_audit_command(const AuditFlags& flags) {
  if (flags.list_elf) return list_elf(flags);
  if (!flags.files.empty()) {
    std::cerr << "sparkdoc audit: files are taken only with --list-elf; to audit a folder use "
                 "--site-packages DIR\n";
    return kExitUsage;
  }
  CaptureOptions capture_options = flags.capture.options();
  capture_options.config_dir = "";
  capture_options.audit_native = false;
  capture_options.cuda_devices_always = false;
  if (!flags.arch.empty()) capture_options.read_gpu = false;
  Snapshot snapshot = capture(capture_options);
  auto options = native_audit_options(snapshot, capture_options);
  if (!options) {
    std::cerr << "sparkdoc audit: " << options.error().message
              << "; name one with --python PATH or --site-packages DIR\n";
    return kExitUsage;
  }
  if (!flags.capture.site_packages.empty()) {
    options->site_packages =
        std::filesystem::absolute(flags.capture.site_packages).lexically_normal().string();
    while (options->site_packages.size() > 1 && options->site_packages.back() == '/') {
      options->site_packages.pop_back();
    }
  }
  // A folder that cannot be read is the user's mistake, not an empty environment.
  if (!std::filesystem::is_directory(options->site_packages)) {
    std::cerr << "sparkdoc audit: " << options->site_packages
              << " is not a folder that can be read; name a site-packages folder (python3 -c "
                 "'import site; print(site.getsitepackages())' lists them)\n";
    return kExitUsage;
  }
  if (!flags.arch.empty()) {
    auto cc = elf::parse_compute_capability(flags.arch);
    if (!cc) {
      std::cerr << "sparkdoc audit: --arch wants a compute capability such as 12.1 or 9.0, not '"
                << flags.arch << "'\n";
      return kExitUsage;
    }
    options->target = *cc;
    options->target_source = "--arch";
  }
  options->threads = flags.threads;
  // A progress line on a terminal: the first audit of a cold cache reads a few hundred MB.
  ProgressLine progress;
  if (progress.enabled()) {
    options->progress = [&progress](size_t done, size_t total) {
      progress.show(fmt::format("audit: {}/{} shared objects", done, total));
    };
  }
  audit::AuditResult result = audit::run_audit(*options);
  progress.clear();
  if (flags.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : result.files) files.push_back(file_json(f));
    nlohmann::json out{{"audit", result.summary}, {"files", std::move(files)}};
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    audit::RenderOptions render;
    render.all = flags.all;
    std::cout << audit::render_text(result.summary, render);
  }
  std::cout.flush();
  return audit::audit_exit_status(result.summary);
}

}  // namespace

std::function<int()> add_audit_command(CLI::App& app) {
  auto flags = std::make_shared<AuditFlags>();
  CLI::App* cmd = app.add_subcommand(
      "audit",
      "Will the native code in this Python environment load and run on this GPU? For every "
      "shared object in site-packages: the libraries it needs and where the loader would find "
      "them (RPATH, RUNPATH, LD_LIBRARY_PATH, ld.so.cache, what `import torch` preloads), the "
      "CUDA major they imply against torch's, and whether its GPU code runs on the target "
      "(SASS, PTX JIT only, or not at all) and can use NVFP4; plus the rules for flash-attn, "
      "bitsandbytes, mamba-ssm, causal-conv1d, xformers, vllm and torch. Reads only headers; "
      "changes nothing. Exit 0, 1 when a package FAILs, 2 on a usage error.");
  cmd->add_option("--arch", flags->arch,
                  "Judge GPU code for this compute capability (12.1 for DGX Spark) instead of "
                  "the first GPU's")
      ->type_name("X.Y");
  cmd->add_flag("--json", flags->json,
                "Write the audit and every file's needs and GPU code as JSON to stdout");
  cmd->add_flag("--all", flags->all,
                "List every package with native code, not only those with GPU code or notes");
  cmd->add_flag("--list-elf", flags->list_elf,
                "Print what `cuobjdump --list-elf --list-ptx FILE` prints for each FILE, byte "
                "for byte (to cross-check); exit 255 for a single file with no GPU code, as "
                "cuobjdump does");
  cmd->add_option("--threads", flags->threads,
                  "Files read at once (default: one per CPU, at most 32)")
      ->type_name("N");
  cmd->add_option("files", flags->files, "Files for --list-elf")->type_name("FILE");
  flags->capture.add_to(*cmd);
  return [flags]() { return run_audit_command(*flags); };
}

}  // namespace sparkdoc::cli
