// S5 container limits (000 §1). Inside a container:
//   WARN  memlock (soft) not unlimited: CUDA pinned host allocations fail; --ulimit memlock=-1.
//   WARN  stack (soft) below 64 MiB: --ulimit stack=67108864.
//   WARN  /dev/shm below 1 GiB (Docker's default is 64 MB, too small for DataLoader workers and
//         NCCL): --ipc=host.
//   PASS  all three fine; SKIP when a limit that could decide it was not read.
// On a bare host: INFO with the values (these flags are container flags).
#include <fmt/format.h>

#include "checks/common.h"
#include "checks/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "facts/container.h"
#include "facts/gpu_users.h"
#include "facts/platform.h"

namespace sparkdoc::checks::s5 {
namespace {

constexpr uint64_t kMinStackBytes = 67108864;  // 64 MiB: --ulimit stack=67108864 (000 §1)
constexpr uint64_t kMinShmBytes = kGiB;        // Docker's default /dev/shm is 64 MB

std::string rlimit_text(const sys::Rlimit& r) {
  return r.soft ? format_binary(*r.soft) : std::string("unlimited");
}

Finding judge(const Snapshot& s, const Workload&, const facts::Platform&) {
  constexpr std::string_view kId = "S5";
  const sys::Limits& l = s.limits;
  std::vector<std::string> values;
  std::vector<std::string> problems;
  std::vector<std::string> unread;

  if (l.memlock_bytes.ok()) {
    values.push_back("memlock " + rlimit_text(*l.memlock_bytes));
    if (l.memlock_bytes->soft) {
      problems.push_back(
          fmt::format("memlock is {}, not unlimited: CUDA pinned memory needs "
                      "--ulimit memlock=-1",
                      format_binary(*l.memlock_bytes->soft)));
    }
  } else {
    unread.push_back("memlock: " + l.memlock_bytes.reason());
  }
  if (l.stack_bytes.ok()) {
    values.push_back("stack " + rlimit_text(*l.stack_bytes));
    if (l.stack_bytes->soft && *l.stack_bytes->soft < kMinStackBytes) {
      problems.push_back(fmt::format("stack is {}, below 64 MiB: --ulimit stack=67108864",
                                     format_binary(*l.stack_bytes->soft)));
    }
  } else {
    unread.push_back("stack: " + l.stack_bytes.reason());
  }
  if (l.shm_size_bytes.ok()) {
    values.push_back("/dev/shm " + format_binary(*l.shm_size_bytes));
    if (*l.shm_size_bytes < kMinShmBytes) {
      problems.push_back(
          fmt::format("/dev/shm is {}, below 1 GiB (Docker's default is 64 MB): "
                      "--ipc=host",
                      format_binary(*l.shm_size_bytes)));
    }
  } else {
    unread.push_back("/dev/shm: " + l.shm_size_bytes.reason());
  }

  facts::Container c = facts::detect_container(s);
  if (!c.inside) {
    if (values.empty()) {
      return make_finding(kId, Verdict::kSkip, "limits not read (" + join(unread, "; ") + ")");
    }
    std::string tail = unread.empty() ? "" : " (" + join(unread, "; ") + ")";
    return make_finding(kId, Verdict::kInfo,
                        fmt::format("bare host: {}{}", join(values, ", "), tail));
  }
  std::vector<std::string> details;
  for (const auto& u : unread) details.push_back("not read: " + u);
  if (!problems.empty()) {
    return make_finding(kId, Verdict::kWarn, join(problems, "; "), details);
  }
  if (!unread.empty()) {
    return make_finding(
        kId, Verdict::kSkip,
        fmt::format("not read: {} ({} fine)", join(unread, "; "),
                    values.empty() ? std::string("nothing else") : join(values, ", ")),
        details);
  }
  return make_finding(kId, Verdict::kPass,
                      fmt::format("container limits fit: {}", join(values, ", ")), details);
}

}  // namespace
}  // namespace sparkdoc::checks::s5

namespace sparkdoc::checks {

const CheckInfo& s5_container_limits() {
  static constexpr CheckInfo kInfo{
      .id = "S5",
      .title = "Container ulimits and shared memory",
      .reads = "RLIMIT_MEMLOCK, RLIMIT_STACK and the size of /dev/shm; container markers",
      .symptom =
          "Inside a container, pinned-memory allocations fail, DataLoader workers die with bus "
          "errors or shared-memory errors, or deep recursion crashes",
      .cause =
          "Docker's defaults are a small locked-memory limit, an 8 MiB stack and a 64 MB "
          "/dev/shm; CUDA pinned memory, worker processes and NCCL need more.",
      .how_checked =
          "Inside a container, reads the memlock and stack limits and the /dev/shm size.",
      .fix =
          "docker run --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 (on GB10 with "
          "--privileged -e NVIDIA_VISIBLE_DEVICES=all rather than --gpus all).",
      .source = "000 §1",
      .keywords =
          "ulimit memlock stack shm /dev/shm ipc bus error pinned memory docker run flags shared "
          "dataloader",
      .run = &s5::judge,
  };
  return kInfo;
}

}  // namespace sparkdoc::checks
