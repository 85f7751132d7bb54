#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "audit/audit.h"
#include "capture/capture.h"
#include "checks/native_code.h"
#include "checks/ptx_isa.h"
#include "cli/capture_flags.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "elf/fatbin.h"
#include "elf/listing.h"
#include "facts/platform.h"
#include "model/native.h"
#include "report/audit.h"

namespace sparkdoc::cli {
namespace {

struct AuditFlags {
  CaptureFlags capture;
  std::string arch;
  bool json = false;
  bool all = false;
  bool list_elf = false;
  bool matrix = false;
  std::string html;
  unsigned threads = 0;
  std::vector<std::string> files;
};

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
  // The target: --arch, else the first GPU (checks judge the facts for it).
  std::optional<checks::NativeTarget> target;
  if (!flags.arch.empty()) {
    auto cc = audit::parse_compute_capability(flags.arch);
    if (!cc) {
      std::cerr << "sparkdoc audit: --arch wants a compute capability such as 12.1 or 9.0, not '"
                << flags.arch << "'\n";
      return kExitUsage;
    }
    target = checks::NativeTarget{*cc, "--arch"};
  } else if (facts::Platform platform = facts::classify_platform(snapshot);
             platform.compute_capability) {
    target = checks::NativeTarget{*platform.compute_capability,
                                  platform.gpu_name.empty() ? "GPU 0" : platform.gpu_name};
  }
  options->threads = flags.threads;
  // A progress line on a terminal: the first audit of a cold cache reads a few hundred MB.
  ProgressLine progress;
  if (progress.enabled()) {
    options->progress = [&progress](size_t done, size_t total) {
      progress.show(fmt::format("audit: {}/{} shared objects", done, total));
    };
  }
  audit::NativeAudit facts = audit::run_audit(*options);
  progress.clear();
  checks::NativeVerdict verdict = checks::judge_native(facts, target);
  if (auto cuda = checks::driver_cuda_version(snapshot)) {
    checks::add_ptx_isa_notes(facts, *cuda, verdict);
  }
  if (!flags.html.empty() &&
      !write_html_page("sparkdoc audit", flags.html, report::render_audit_html(facts, verdict))) {
    return kExitUsage;
  }
  if (flags.json) {
    std::cout << report::render_audit_json(facts, verdict)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    report::AuditTextOptions render;
    render.all = flags.all;
    std::cout << report::render_audit_text(facts, verdict, render);
    if (flags.matrix) {
      std::string matrix = report::render_audit_matrix_text(facts, verdict);
      std::cout << "\n" << (matrix.empty() ? "No package has GPU code.\n" : matrix);
    }
  }
  std::cout.flush();
  return report::audit_exit_status(verdict);
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
  cmd->add_flag("--matrix", flags->matrix,
                "After the list, the package x GPU matrix: for each package with GPU code and "
                "each GPU generation (sm_80 to sm_121, and the target's), whether its code runs "
                "as SASS, only as PTX (JIT-compiled at the first load) or not at all; the "
                "target's column in [ ]");
  cmd->add_option("--html", flags->html,
                  "Also write the audit as a self-contained HTML page with the matrix")
      ->type_name("FILE");
  cmd->add_flag("--list-elf", flags->list_elf,
                "Print what `cuobjdump --list-elf --list-ptx FILE` prints for each FILE, byte "
                "for byte (to cross-check); exit 255 for a single file with no GPU code, as "
                "cuobjdump does. A file it cannot read exits 1, as cuobjdump's does, and the "
                "message says why where cuobjdump's does not: a missing file, a folder, a file "
                "that is no ELF ('Invalid fatbin header' there), and a truncated ELF, which "
                "cuobjdump reports as having no device code (exit 255)");
  cmd->add_option("--threads", flags->threads,
                  "Files read at once (default: one per CPU, at most 32)")
      ->type_name("N");
  cmd->add_option("files", flags->files, "Files for --list-elf")->type_name("FILE");
  flags->capture.add_to(*cmd);
  flags->capture.add_cache_option(*cmd);
  return [flags]() { return run_audit_command(*flags); };
}

}  // namespace sparkdoc::cli
