#include "facts/gpu_users.h"

#include <fmt/format.h>

#include "core/units.h"

namespace sparkdoc::facts {

std::optional<std::string> process_name(const Snapshot& s, uint32_t pid) {
  if (!s.processes.ok()) return std::nullopt;
  for (const auto& h : s.processes->gpu_holders) {
    if (h.pid >= 0 && static_cast<uint32_t>(h.pid) == pid && !h.comm.empty()) return h.comm;
  }
  for (const auto& k : s.processes->servers) {
    if (k.pid >= 0 && static_cast<uint32_t>(k.pid) == pid) return k.kind;
  }
  return std::nullopt;
}

std::vector<GpuUser> gpu_users(const Snapshot& s) {
  std::vector<GpuUser> out;
  if (!s.gpu.nvml.ok()) return out;
  for (const auto& d : s.gpu.nvml->devices) {
    if (!d.processes.ok()) continue;
    for (const auto& p : *d.processes) {
      GpuUser u;
      u.pid = p.pid;
      u.device = d.index;
      u.name = process_name(s, p.pid).value_or("");
      if (p.used_bytes.ok()) u.used_bytes = *p.used_bytes;
      out.push_back(std::move(u));
    }
  }
  return out;
}

std::string describe_gpu_user(const GpuUser& p) {
  std::string out = fmt::format("pid {}", p.pid);
  if (!p.name.empty()) out += fmt::format(" ({})", p.name);
  out += p.used_bytes ? " " + format_gb(*p.used_bytes) : " (memory not reported)";
  return out;
}

}  // namespace sparkdoc::facts
