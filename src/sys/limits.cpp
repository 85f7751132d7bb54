#include "sys/limits.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace sparkdoc::sys {
namespace {

constexpr std::string_view kMemlockName = "Max locked memory";
constexpr std::string_view kStackName = "Max stack size";

Result<std::optional<uint64_t>> parse_limit_value(std::string_view word) {
  if (word == "unlimited") return std::optional<uint64_t>();
  auto v = parse_u64(word);
  if (!v) return fail(fmt::format("limits: '{}' is not a number or 'unlimited'", word));
  return std::optional<uint64_t>(*v);
}

Result<Rlimit> parse_limit_line(std::string_view rest) {
  auto words = split_ws(trim(rest));
  if (words.size() < 2) return fail("limits: line without soft and hard values");
  auto soft = parse_limit_value(words[0]);
  if (!soft) return tl::unexpected(soft.error());
  auto hard = parse_limit_value(words[1]);
  if (!hard) return tl::unexpected(hard.error());
  return Rlimit{*soft, *hard};
}

Reading<Rlimit> live_rlimit(int resource, const char* name) {
  struct rlimit rl;
  if (::getrlimit(resource, &rl) != 0) {
    return Reading<Rlimit>::absent(Why::kError,
                                   fmt::format("getrlimit({}): {}", name, std::strerror(errno)));
  }
  Rlimit out;
  if (rl.rlim_cur != RLIM_INFINITY) out.soft = static_cast<uint64_t>(rl.rlim_cur);
  if (rl.rlim_max != RLIM_INFINITY) out.hard = static_cast<uint64_t>(rl.rlim_max);
  return out;
}

Reading<uint64_t> shm_size(const Root& root) {
  std::string path = root.path("/dev/shm");
  struct statvfs st;
  if (::statvfs(path.c_str(), &st) != 0) {
    int err = errno;
    Why why = err == ENOENT ? Why::kAbsent : err == EACCES ? Why::kNoPermission : Why::kError;
    return Reading<uint64_t>::absent(why, fmt::format("statvfs {}: {}", path, std::strerror(err)));
  }
  return static_cast<uint64_t>(st.f_blocks) * static_cast<uint64_t>(st.f_frsize);
}

}  // namespace

Result<ProcLimits> parse_limits(std::string_view text) {
  ProcLimits out;
  for (std::string_view line : lines(text)) {
    std::optional<Rlimit>* slot = nullptr;
    std::string_view name;
    if (line.starts_with(kMemlockName)) {
      slot = &out.memlock_bytes;
      name = kMemlockName;
    } else if (line.starts_with(kStackName)) {
      slot = &out.stack_bytes;
      name = kStackName;
    } else {
      continue;
    }
    auto limit = parse_limit_line(line.substr(name.size()));
    if (!limit) return tl::unexpected(limit.error());
    *slot = *limit;
  }
  if (!out.memlock_bytes && !out.stack_bytes) {
    return fail("limits: neither 'Max locked memory' nor 'Max stack size' found");
  }
  return out;
}

Limits read_limits(const Root& root) {
  Limits limits;
  if (root.live()) {
    limits.memlock_bytes = live_rlimit(RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK");
    limits.stack_bytes = live_rlimit(RLIMIT_STACK, "RLIMIT_STACK");
  } else {
    auto text = read_text(root.path("/proc/self/limits"));
    auto parsed = text ? parse_limits(*text) : Result<ProcLimits>(tl::unexpected(text.error()));
    if (!parsed) {
      limits.memlock_bytes = Reading<Rlimit>::absent(parsed.error().why, parsed.error().message);
      limits.stack_bytes = limits.memlock_bytes;
    } else {
      auto take = [](const std::optional<Rlimit>& limit, std::string_view name) {
        if (limit) return Reading<Rlimit>(*limit);
        return Reading<Rlimit>::absent(Why::kAbsent, fmt::format("no '{}' line", name));
      };
      limits.memlock_bytes = take(parsed->memlock_bytes, kMemlockName);
      limits.stack_bytes = take(parsed->stack_bytes, kStackName);
    }
  }
  limits.shm_size_bytes = shm_size(root);
  return limits;
}

}  // namespace sparkdoc::sys
