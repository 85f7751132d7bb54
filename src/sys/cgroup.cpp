#include "sys/cgroup.h"

#include <algorithm>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

// cgroup v1 reports "no limit" as PAGE_COUNTER_MAX * PAGE_SIZE, which is just under 2^63 on
// every page size; no real limit comes near 2^62 bytes.
constexpr uint64_t kV1UnlimitedFloor = uint64_t{1} << 62;

bool controllers_include(std::string_view controllers, std::string_view name) {
  for (std::string_view c : split(controllers, ',')) {
    if (c == name) return true;
  }
  return false;
}

// The cgroup directory and each ancestor up to the mount's top, deepest first.
std::vector<std::string> cgroup_dirs(const std::string& mount, const std::string& path) {
  std::vector<std::string> dirs;
  if (!path.empty() && path.front() == '/' && !contains(path, "..")) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    while (p.size() > 1) {
      dirs.push_back(mount + p);
      size_t slash = p.rfind('/');
      p.resize(slash == 0 ? 1 : slash);
    }
  }
  dirs.push_back(mount);
  return dirs;
}

std::optional<uint64_t> read_memory_limit(const Root& root, int version, const std::string& path) {
  std::string mount = version == 2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
  const char* file = version == 2 ? "/memory.max" : "/memory.limit_in_bytes";
  std::optional<uint64_t> smallest;
  for (const std::string& dir : cgroup_dirs(mount, path)) {
    auto text = read_text(root.path(dir + file), 4096);
    if (!text) continue;
    auto limit = parse_cgroup_memory_limit(*text);
    if (!limit || !*limit) continue;
    smallest = smallest ? std::min(*smallest, **limit) : **limit;
  }
  return smallest;
}

}  // namespace

Result<CgroupMembership> parse_cgroup(std::string_view text) {
  CgroupMembership m;
  for (std::string_view raw : lines(text)) {
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) return fail("cgroup: line without three fields");
    auto id = parse_u64(line.substr(0, first));
    if (!id) return fail("cgroup: hierarchy id is not a number");
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string_view path = line.substr(second + 1);
    if (*id == 0 && controllers.empty()) {
      m.has_unified = true;
      m.unified_path = valid_utf8(path);
    } else {
      m.has_v1 = true;
      if (controllers_include(controllers, "memory")) m.memory_path = valid_utf8(path);
    }
    m.lines.push_back(valid_utf8(line));
  }
  if (m.lines.empty()) return fail("cgroup: no lines");
  return m;
}

int cgroup_version(const CgroupMembership& membership, bool unified_mount) {
  if (unified_mount) return 2;
  if (membership.has_v1) return 1;
  if (membership.has_unified) return 2;
  return 0;
}

std::string memory_cgroup_path(const CgroupMembership& membership, int version) {
  if (version == 2) return membership.unified_path;
  if (version == 1) return membership.memory_path;
  return "";
}

Result<std::optional<uint64_t>> parse_cgroup_memory_limit(std::string_view text) {
  std::string_view value = trim(text);
  if (value == "max") return std::optional<uint64_t>();
  auto bytes = parse_u64(value);
  if (!bytes) return fail("cgroup memory limit: not a number or 'max'");
  if (*bytes >= kV1UnlimitedFloor) return std::optional<uint64_t>();
  return std::optional<uint64_t>(*bytes);
}

Result<CgroupInfo> read_cgroup(const Root& root) {
  auto text = read_text(root.path("/proc/self/cgroup"));
  if (!text) return tl::unexpected(text.error());
  auto self = parse_cgroup(*text);
  if (!self) return tl::unexpected(self.error());

  CgroupInfo info;
  info.version = cgroup_version(*self, exists(root.path("/sys/fs/cgroup/cgroup.controllers")));
  info.self_path = memory_cgroup_path(*self, info.version);
  info.self_lines = self->lines;
  if (auto pid1_text = read_text(root.path("/proc/1/cgroup"))) {
    if (auto pid1 = parse_cgroup(*pid1_text)) {
      info.pid1_path = memory_cgroup_path(*pid1, info.version);
    }
  }
  if (info.version != 0) {
    info.memory_limit_bytes = read_memory_limit(root, info.version, info.self_path);
  }
  return info;
}

}  // namespace sparkdoc::sys
