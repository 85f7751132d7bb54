#include "checks/ptx_isa.h"

#include <fmt/format.h>

#include <array>

#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

struct IsaCuda {
  int major;
  int minor;
  int cuda;
};

constexpr std::array<IsaCuda, 8> kIsaCuda = {{
    {8, 7, 12080},
    {8, 8, 12090},
    {9, 0, 13000},
    {9, 1, 13010},
    {9, 2, 13020},  // by the pattern, unverified
    {9, 3, 13030},  // by the pattern, unverified
    {9, 4, 13040},
    {9, 5, 13050},
}};

}  // namespace

std::optional<int> cuda_for_ptx_isa(std::string_view isa) {
  size_t dot = isa.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto major = parse_u64(isa.substr(0, dot));
  auto minor = parse_u64(isa.substr(dot + 1));
  if (!major || !minor || *major > 99 || *minor > 9) return std::nullopt;
  int ma = static_cast<int>(*major);
  int mi = static_cast<int>(*minor);
  if (ma < 8 || (ma == 8 && mi < 7)) return 12080;
  for (const IsaCuda& e : kIsaCuda) {
    if (e.major == ma && e.minor == mi) return e.cuda;
  }
  return std::nullopt;
}

std::optional<bool> driver_loads_ptx(std::string_view isa, int driver_cuda) {
  auto needs = cuda_for_ptx_isa(isa);
  if (!needs || driver_cuda <= 0) return std::nullopt;
  return *needs <= driver_cuda;
}

std::string cuda_version_text(int cuda) {
  return fmt::format("{}.{}", cuda / 1000, (cuda % 1000) / 10);
}

std::optional<int> driver_cuda_version(const Snapshot& s) {
  if (s.gpu.cuda.ok() && s.gpu.cuda->driver_version.ok()) return *s.gpu.cuda->driver_version;
  if (s.gpu.nvml.ok() && s.gpu.nvml->cuda_driver_version.ok()) {
    return *s.gpu.nvml->cuda_driver_version;
  }
  return std::nullopt;
}

void add_ptx_isa_notes(const audit::NativeAudit& facts, int driver_cuda, NativeVerdict& verdict) {
  if (!verdict.target || verdict.file_verdicts.size() != facts.files.size()) return;
  const gpu::ComputeCapability cc = verdict.target->cc;
  for (size_t i = 0; i < facts.files.size(); ++i) {
    const audit::NativeFile& f = facts.files[i];
    const FileVerdict& fv = verdict.file_verdicts[i];
    if (!fv.gpu || fv.gpu->run != CodeRuns::kPtxJitOnly) continue;
    std::string newest;  // "compute_90 ISA 9.2"
    std::string newest_isa;
    bool any_loads = false;
    for (const audit::CodeGroup& g : f.gpu_code) {
      for (const audit::PtxEntry& e : g.ptx) {
        if (!ptx_jit_runs_on(e.target, cc)) continue;
        std::optional<bool> loads = driver_loads_ptx(e.isa, driver_cuda);
        if (!loads || *loads) {
          any_loads = true;
        } else if (newest.empty() || cuda_for_ptx_isa(e.isa) > cuda_for_ptx_isa(newest_isa)) {
          newest = audit::ptx_name(e.target) + " ISA " + e.isa;
          newest_isa = e.isa;
        }
      }
    }
    if (any_loads || newest.empty()) continue;
    for (PackageVerdict& p : verdict.packages) {
      if (p.name != f.package) continue;
      p.notes.push_back(NativeNote{
          Severity::kFail, NoteTopic::kGpuCode,
          fmt::format("{}: its only code for {} is PTX ({}) newer than the driver's CUDA {} "
                      "loads: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (\"the provided PTX was "
                      "compiled with an unsupported toolchain\"); build it with CUDA {} or "
                      "with SASS for sm_{}{}, or update the driver",
                      f.file, audit::compute_capability_text(cc), newest,
                      cuda_version_text(driver_cuda), cuda_version_text(driver_cuda), cc.major,
                      cc.minor)});
    }
  }
}

}  // namespace sparkdoc::checks
