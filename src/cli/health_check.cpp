#include "cli/health_check.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "cli/commands.h"
#include "report/health.h"

extern "C" char** environ;

namespace sparkdoc::cli {
namespace {

// The Slurm node this runs on: SLURMD_NODENAME, which slurmd sets for the programs it runs,
// else the host name up to its first dot (Slurm's NodeName by default).
std::string slurm_node_name(const Snapshot& snapshot) {
  if (const char* name = std::getenv("SLURMD_NODENAME"); name && *name) return name;
  std::string host = snapshot.host.hostname.value_or("");
  return host.substr(0, host.find('.'));
}

// Drains the node as NHC does: scontrol update NodeName=N State=DRAIN Reason=R, one argument
// each (no shell, so the reason needs no quoting). Returns why it could not, or "".
std::string drain_node(const std::string& node, const std::string& reason) {
  if (node.empty()) return "no node name (set SLURMD_NODENAME)";
  std::vector<std::string> args = {"scontrol", "update", "NodeName=" + node, "State=DRAIN",
                                   "Reason=" + reason};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (int err = ::posix_spawnp(&pid, "scontrol", nullptr, nullptr, argv.data(), environ)) {
    return fmt::format("cannot run scontrol: {}", std::strerror(err));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return fmt::format("waiting for scontrol: {}", std::strerror(errno));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return WIFEXITED(status) ? fmt::format("scontrol exited with {}", WEXITSTATUS(status))
                           : std::string("scontrol was killed by a signal");
}

}  // namespace

// --health-check: one line and the exit status schedulers expect (report/health.h). A job on the
// GPU leaves the checks that judge what runs now out of the verdict.
int print_health(report::CheckReport& rep, const Snapshot& snapshot, bool strict, bool drain) {
  std::string left_out;
  // A job is a compute process; the desktop's graphics processes are always there on a Spark.
  size_t users = 0;
  if (snapshot.gpu.nvml.ok()) {
    for (const gpu::Device& device : snapshot.gpu.nvml->devices) {
      if (!device.processes.ok()) continue;
      for (const gpu::GpuProcess& p : *device.processes) users += p.type == "compute" ? 1 : 0;
    }
  }
  if (users > 0) {
    std::erase_if(rep.findings,
                  [](const checks::Finding& f) { return report::momentary_check(f.id); });
    left_out = fmt::format("G3, G6, S10, F6 left out: {} compute process{} on the GPU", users,
                           users == 1 ? "" : "es");
  }
  report::HealthLine health = report::render_health_line(rep.findings, strict, left_out);
  std::cout << health.line << "\n";
  std::cout.flush();
  if (health.healthy) return kExitReady;
  if (drain) {
    std::string reason = report::health_text("sparkdoc " + health.line, report::kHealthLineMax);
    std::string node = slurm_node_name(snapshot);
    if (std::string why = drain_node(node, reason); !why.empty()) {
      std::cerr << fmt::format("sparkdoc check: --drain: node {} not drained: {}\n",
                               node.empty() ? "?" : node, why);
    }
  }
  return kExitBlocked;
}

}  // namespace sparkdoc::cli
