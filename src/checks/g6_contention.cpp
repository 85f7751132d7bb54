// G6 global UMA resource contention (002 G6; reference §2.4, §3.5).
//
// Rule: list every process NVML sees on a GPU (named from the /dev/nvidia* holder scan when the
// PID matches) and every known GPU server found by command line.
//   WARN  a known server that is not capped. vLLM is capped when --gpu-memory-utilization is
//         <= 0.5 and SGLang when --mem-fraction-static is; the others have no such cap and can
//         grow to the whole pool (002 G6: one heavy job at a time).
//   WARN  any process holding more than 4 GB of GPU memory (002 G6: a LoRA under 4 GB coexists
//         fine with a capped server; anything bigger competes for the one unified pool).
//   gnome-remote-desktop is S7's finding: mentioned here, and a WARN here only for its memory
//   when it holds more than 4 GB (the same rule as any process: it is not a small user).
//   PASS  no other GPU processes or servers (or only small, capped ones).
//   INFO  the same when NVML's process lists were not read: only known servers were looked for.
//   SKIP  neither NVML's process lists nor the process scan could be read.
// Holders of /dev/nvidia* that NVML does not list are a detail line: another PID namespace
// (NVML PIDs are host PIDs) or a stale holder that outlived its run.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/command_line.h"
#include "facts/gpu_users.h"
#include "facts/platform.h"

namespace sparkdoc::checks::g6 {
namespace {

constexpr std::string_view kId = "G6";
constexpr uint64_t kSmallProcessBytes = 4 * kGB;
constexpr double kCappedFraction = 0.5;

bool is_remote_desktop(std::string_view name) {
  return name.starts_with("gnome-remote-de");
}

struct Cap {
  bool capped = false;
  std::string text;  // "--gpu-memory-utilization 0.9", "no memory cap"
};

Cap server_cap(const sys::KnownServer& server) {
  std::vector<std::string_view> flags;
  std::string_view fallback;
  if (server.kind == "vllm") {
    flags = {"--gpu-memory-utilization"};
    fallback = "--gpu-memory-utilization unset (vLLM defaults to 0.9)";
  } else if (server.kind == "sglang") {
    flags = {"--mem-fraction-static"};
    fallback = "--mem-fraction-static unset";
  } else {
    return {false, "no memory cap"};
  }
  auto value = facts::option_value(server.cmdline, flags);
  if (!value) return {false, std::string(fallback)};
  auto fraction = parse_double(*value);
  std::string text = fmt::format("{} {}", flags.front(), *value);
  return {fraction && *fraction <= kCappedFraction, text};
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  bool nvml_procs_read = false;
  std::vector<std::string> unread;
  if (s.gpu.nvml.ok()) {
    for (const auto& d : s.gpu.nvml->devices) {
      if (d.processes.ok()) {
        nvml_procs_read = true;
      } else {
        unread.push_back(fmt::format("GPU {} processes: {}", d.index, d.processes.reason()));
      }
    }
    if (s.gpu.nvml->devices.empty()) unread.push_back("NVML lists no devices");
  } else {
    unread.push_back("NVML: " + s.gpu.nvml.reason());
  }
  if (!s.processes.ok()) unread.push_back("process scan: " + s.processes.reason());
  if (!nvml_procs_read && !s.processes.ok()) {
    return make_finding(kId, Verdict::kSkip, "GPU processes not read (" + join(unread, "; ") + ")");
  }

  std::vector<std::string> details;
  for (const auto& u : unread) details.push_back("not read: " + u);
  std::vector<std::string> problems;
  std::vector<std::string> small;
  std::vector<std::string> mentions;
  std::set<uint32_t> nvml_pids;
  std::set<int> remote_desktop_pids;
  if (!nvml_procs_read) mentions.push_back("known servers scanned; NVML process list not read");

  // Known servers are judged by their cap below, with their memory; other processes by size.
  std::map<int, std::string> server_kinds;
  if (s.processes.ok()) {
    for (const auto& server : s.processes->servers) server_kinds[server.pid] = server.kind;
  }
  std::map<int, uint64_t> memory_by_pid;
  auto procs = facts::gpu_users(s);
  std::sort(procs.begin(), procs.end(), [](const auto& a, const auto& b) {
    return a.used_bytes.value_or(0) > b.used_bytes.value_or(0);
  });
  for (const auto& p : procs) {
    nvml_pids.insert(p.pid);
    auto pid = static_cast<int>(p.pid);
    if (p.used_bytes) memory_by_pid[pid] += *p.used_bytes;
    std::string text = facts::describe_gpu_user(p);
    details.push_back(fmt::format("GPU {}: {}", p.device, text));
    auto server = server_kinds.find(pid);
    bool grd_server = server != server_kinds.end() && server->second == "gnome-remote-desktop";
    if (is_remote_desktop(p.name) || grd_server) {
      if (!remote_desktop_pids.insert(pid).second) continue;
      if (p.used_bytes && *p.used_bytes > kSmallProcessBytes) {
        // Memory is G6's to judge, whoever holds it: a 6 GB desktop service is not "small".
        problems.push_back(fmt::format(
            "{} is gnome-remote-desktop holding more than {} of GPU memory: stop it (S7 says "
            "how) before a long run",
            text, format_gb(kSmallProcessBytes)));
      } else {
        mentions.push_back(text + " is gnome-remote-desktop (see S7)");
      }
      continue;
    }
    if (server != server_kinds.end()) continue;
    if (p.used_bytes && *p.used_bytes > kSmallProcessBytes) {
      problems.push_back(
          fmt::format("{} holds more than {} of GPU memory: stop it before a long run", text,
                      format_gb(kSmallProcessBytes)));
    } else {
      small.push_back(text);
    }
  }

  if (s.processes.ok()) {
    for (const auto& server : s.processes->servers) {
      std::string who = fmt::format("{} (pid {}", server.kind, server.pid);
      if (auto m = memory_by_pid.find(server.pid); m != memory_by_pid.end()) {
        who += ", " + format_gb(m->second);
      }
      who += ")";
      details.push_back(fmt::format("server: {}: {}", who, server.cmdline));
      if (server.kind == "gnome-remote-desktop") {
        if (remote_desktop_pids.insert(server.pid).second) {
          mentions.push_back(who + " is running (see S7)");
        }
        continue;
      }
      Cap cap = server_cap(server);
      if (cap.capped) {
        small.push_back(fmt::format("{} capped ({})", who, cap.text));
        continue;
      }
      problems.push_back(
          fmt::format("{} is not capped ({}): stop it, or restart it capped "
                      "(vLLM: --gpu-memory-utilization 0.5 or less)",
                      who, cap.text));
    }
    size_t hidden = 0;
    for (const auto& h : s.processes->gpu_holders) {
      if (h.pid >= 0 && nvml_pids.count(static_cast<uint32_t>(h.pid))) continue;
      ++hidden;
      details.push_back(
          fmt::format("pid {} ({}) holds {} but NVML does not list it (another "
                      "PID namespace, or a stale holder)",
                      h.pid, h.comm, join(h.devices, ", ")));
    }
    if (hidden > 0) {
      mentions.push_back(
          fmt::format("{} process{} hold{} /dev/nvidia* without an NVML entry "
                      "(listed in --json)",
                      hidden, hidden == 1 ? "" : "es", hidden == 1 ? "s" : ""));
    }
  }

  std::string tail = mentions.empty() ? "" : "; " + join(mentions, "; ");
  if (!problems.empty()) {
    return make_finding(kId, Verdict::kWarn, join(problems, "; ") + tail, details);
  }
  // Without NVML's process lists only the servers were looked for: nothing says that no other
  // process holds GPU memory, so that is not a PASS.
  const Verdict clear = nvml_procs_read ? Verdict::kPass : Verdict::kInfo;
  if (small.empty()) {
    return make_finding(kId, clear,
                        nvml_procs_read ? "no other GPU processes or servers" + tail
                                        : "no known GPU servers running" + tail,
                        details);
  }
  return make_finding(kId, clear,
                      fmt::format("only small or capped GPU users: {}{}", join(small, ", "), tail),
                      details);
}

}  // namespace
}  // namespace sparkdoc::checks::g6

namespace sparkdoc::checks {

const CheckInfo& g6_contention() {
  static constexpr CheckInfo kInfo{
      .id = "G6",
      .title = "Global UMA resource contention",
      .reads =
          "NVML process lists with per-process memory; processes holding /dev/nvidia*; known GPU "
          "servers by command line (vLLM, SGLang, Ollama, llama-server, Triton)",
      .symptom =
          "A run's KV cache or weights are evicted mid-run with no OOM in its own log, or it "
          "slows or dies while another server is busy",
      .cause =
          "Unified memory is one pool for the whole machine: an uncapped or near-capacity "
          "process competes with everything else in it. A small, bounded job (a LoRA under 4 GB) "
          "next to a capped server is fine.",
      .how_checked =
          "Lists every GPU process and known server; warns on servers without a memory cap (vLLM "
          "--gpu-memory-utilization 0.5 or less) and on any process holding more than 4 GB.",
      .fix =
          "One heavy job at a time: stop unrelated servers, or restart them capped (vLLM "
          "--gpu-memory-utilization 0.5 or less), before a long run.",
      .source = "002 G6",
      .keywords =
          "contention evicted eviction another process server vllm ollama sglang utilization kv "
          "cache shared other processes competing silently",
      .run = &g6::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
