// N4 logind keeps a worker's IPC. With RemoveIPC=yes (systemd's default) and no lingering, the
// last session of a user closing makes systemd-logind delete that user's POSIX semaphores and
// /dev/shm files. A worker that an SSH session started then dies with FileNotFoundError in
// SemLock._rebuild, and the head blocks forever on the next collective (field-2026 §6:
// eugr/spark-vllm-docker#352, 2026-08-20; a race, spark-arena/sparkrun#285). root is exempt.
//   WARN  RemoveIPC in effect and a user with a session now who does not linger;
//   PASS  RemoveIPC=no, or every user with a session lingers;
//   INFO  RemoveIPC in effect and no user has a session now;
//   SKIP  the network or logind's settings were not recorded.
#include <fmt/format.h>

#include <algorithm>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"

namespace sparkdoc::checks::n4 {
namespace {

constexpr std::string_view kId = "N4";

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  Finding skip;
  const net::NetReadings* net = network_or_skip(s, kId, &skip);
  if (!net) return skip;
  if (!net->logind.ok()) {
    return make_finding(kId, Verdict::kSkip,
                        "logind's settings not read: " + net->logind.why_not());
  }
  const net::LogindIpc& logind = *net->logind;
  std::vector<std::string> details;
  for (const std::string& file : logind.files_read) details.push_back("read " + file);
  if (!logind.lingering.empty()) details.push_back("lingering: " + join(logind.lingering, ", "));
  if (logind.remove_ipc && !*logind.remove_ipc) {
    return make_finding(kId, Verdict::kPass,
                        fmt::format("RemoveIPC=no ({}): logind leaves IPC alone when a session "
                                    "closes",
                                    logind.remove_ipc_source),
                        std::move(details));
  }
  std::string setting = logind.remove_ipc
                            ? fmt::format("RemoveIPC=yes ({})", logind.remove_ipc_source)
                            : std::string("RemoveIPC unset (systemd's default: yes)");
  std::vector<std::string> exposed;
  for (const std::string& user : logind.session_users) {
    if (user == "root" || user == "0") continue;
    if (std::find(logind.lingering.begin(), logind.lingering.end(), user) ==
        logind.lingering.end()) {
      exposed.push_back(user);
    }
  }
  if (!exposed.empty()) {
    return make_finding(
        kId, Verdict::kWarn,
        fmt::format("{} and {} {} not linger: when the last session closes (the SSH that "
                    "started a worker), logind deletes the user's semaphores and /dev/shm files "
                    "and the worker dies; sudo loginctl enable-linger {} (undo: "
                    "disable-linger), or a logind.conf.d drop-in with RemoveIPC=no",
                    setting, join(exposed, ", "), exposed.size() == 1 ? "does" : "do",
                    join(exposed, " ")),
        std::move(details));
  }
  if (logind.session_users.empty()) {
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("{}; no user has a session now: a worker started over SSH "
                                    "by a user who does not linger would lose its semaphores "
                                    "when that session closes",
                                    setting),
                        std::move(details));
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("{}, but every user with a session lingers ({})", setting,
                                  join(logind.session_users, ", ")),
                      std::move(details));
}

}  // namespace
}  // namespace sparkdoc::checks::n4

namespace sparkdoc::checks {

const CheckInfo& n4_remove_ipc() {
  static constexpr CheckInfo kInfo{
      .id = "N4",
      .title = "logind does not remove a worker's IPC",
      .reads =
          "RemoveIPC in logind.conf and its drop-ins, lingering users "
          "(/var/lib/systemd/linger), users with a session (/run/user)",
      .symptom =
          "A multi-node job hangs for hours after the SSH session that started a worker "
          "closed; the worker's log ends in FileNotFoundError from SemLock._rebuild; the head "
          "prints \"No available shared memory broadcast block found in 60 seconds\"",
      .cause =
          "systemd-logind's RemoveIPC=yes (the default) deletes a user's POSIX semaphores and "
          "/dev/shm files when the user's last session ends, unless the user lingers.",
      .how_checked =
          "Reads logind.conf and logind.conf.d drop-ins as systemd orders them, the linger "
          "folder and the users with a running user manager.",
      .fix =
          "sudo loginctl enable-linger USER on every node (undo: disable-linger), or a drop-in "
          "/etc/systemd/logind.conf.d/10-keep-ipc.conf with [Login] RemoveIPC=no (applies after "
          "logind restarts or a reboot; undo: delete it).",
      .source =
          "field 2026 §6: eugr/spark-vllm-docker#352 (2026-08-20), "
          "spark-arena/sparkrun#285 (2026-09-01)",
      .keywords =
          "removeipc logind linger loginctl semaphore semlock filenotfounderror shm "
          "broadcast hang ssh session closed worker died multi-node",
      .run = &n4::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
