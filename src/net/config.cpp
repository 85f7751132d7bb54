#include "net/config.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>

#include "core/strings.h"
#include "net/tree.h"
#include "net/values.h"

namespace sparkdoc::net {
namespace {

// NCCL reads each line into buffers of 1024 bytes.
constexpr size_t kNcclConfField = 1023;
constexpr size_t kMaxConfBytes = 1 << 20;
constexpr size_t kMaxUsers = 4096;

// systemd's configuration folders, the first masking the later ones.
constexpr std::array<std::string_view, 4> kSystemdDirs = {
    "/etc/systemd", "/run/systemd", "/usr/local/lib/systemd", "/usr/lib/systemd"};

}  // namespace

std::map<std::string, std::string> parse_nccl_conf(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view raw : lines(text)) {
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name = clean_value(line.substr(0, eq), kNcclConfField);
    if (name.empty()) continue;
    if (out.size() >= kMaxConfSettings || out.contains(name)) continue;
    out.emplace(std::move(name), clean_value(line.substr(eq + 1), kNcclConfField));
  }
  return out;
}

Result<NcclConfFile> read_nccl_conf(const Root& root, const std::string& machine_path) {
  size_t slash = machine_path.rfind('/');
  std::string dir_path =
      slash == std::string::npos || slash == 0 ? "/" : machine_path.substr(0, slash);
  std::string name = slash == std::string::npos ? machine_path : machine_path.substr(slash + 1);
  auto dir = Folder::open(root, dir_path);
  Result<std::string> text = dir ? dir->read(name, kMaxConfBytes) : tl::unexpected(dir.error());
  if (!text) {
    // The machine's path, not the fixture's, so that a recorded absence reads the same.
    if (text.error().why == Why::kAbsent) return fail(Why::kAbsent, "no " + machine_path);
    return tl::unexpected(std::move(text.error()));
  }
  NcclConfFile f;
  f.path = machine_path;
  f.settings = parse_nccl_conf(*text);
  struct stat st {};
  if (auto at = resolve(root, child(dir->path(), name));
      at && ::stat(root.path(*at).c_str(), &st) == 0) {
    f.mtime_s = st.st_mtim.tv_sec;
  }
  return f;
}

std::optional<bool> parse_systemd_bool(std::string_view text) {
  std::string v = to_lower(trim(text));
  if (v == "1" || v == "yes" || v == "y" || v == "true" || v == "t" || v == "on") return true;
  if (v == "0" || v == "no" || v == "n" || v == "false" || v == "f" || v == "off") return false;
  return std::nullopt;
}

std::optional<bool> parse_logind_remove_ipc(std::string_view text) {
  std::optional<bool> out;
  bool in_login = false;
  for (std::string_view raw : lines(text)) {
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      in_login = line == "[Login]";
      continue;
    }
    if (!in_login) continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || trim(line.substr(0, eq)) != "RemoveIPC") continue;
    if (auto v = parse_systemd_bool(line.substr(eq + 1))) out = *v;
  }
  return out;
}

std::map<uint32_t, std::string> parse_passwd(std::string_view text) {
  std::map<uint32_t, std::string> out;
  for (std::string_view line : lines(text)) {
    std::vector<std::string_view> fields = split(line, ':');
    if (fields.size() < 3 || trim(fields[0]).empty() || fields[0].front() == '#') continue;
    auto uid = parse_sysfs_uint(fields[2]);
    if (!uid || *uid > UINT32_MAX || trim(fields[2]) != fields[2]) continue;
    if (out.size() >= kMaxUsers) break;
    out.try_emplace(static_cast<uint32_t>(*uid), clean_value(fields[0]));
  }
  return out;
}

LogindIpc read_logind(const Root& root) {
  LogindIpc out;
  auto apply = [&](const Folder& dir, const std::string& name) {
    auto text = dir.read(name, kMaxConfBytes);
    if (!text) return false;
    const std::string path = child(dir.path(), name);
    out.files_read.push_back(path);
    if (auto v = parse_logind_remove_ipc(*text)) {
      out.remove_ipc = *v;
      out.remove_ipc_source = path;
    }
    return true;
  };
  for (std::string_view base : kSystemdDirs) {
    auto dir = Folder::open(root, base);
    if (dir && apply(*dir, "logind.conf")) break;
  }
  // Drop-ins by file name; the first folder holding a name is the one read.
  std::map<std::string, Folder> drop_ins;
  for (std::string_view base : kSystemdDirs) {
    auto dir = Folder::open(root, child(base, "logind.conf.d"));
    if (!dir) continue;
    auto names = dir->names(256);
    if (!names) continue;
    for (const std::string& name : *names) {
      if (ends_with(name, ".conf")) drop_ins.try_emplace(name, *dir);
    }
  }
  for (const auto& [name, dir] : drop_ins) {
    // A link to /dev/null masks the name: nothing is read.
    if (auto target = read_link(root.path(child(dir.path(), name)));
        target && *target == "/dev/null") {
      continue;
    }
    apply(dir, name);
  }
  if (auto linger = Folder::open(root, "/var/lib/systemd/linger")) {
    if (auto names = linger->names(kMaxUsers)) {
      for (const std::string& n : *names) out.lingering.push_back(clean_value(n));
    }
  }
  std::map<uint32_t, std::string> users;
  if (auto etc = Folder::open(root, "/etc")) {
    if (auto passwd = etc->read("passwd", 4 << 20)) users = parse_passwd(*passwd);
  }
  if (auto run_user = Folder::open(root, "/run/user")) {
    if (auto names = run_user->names(kMaxUsers)) {
      std::vector<uint32_t> uids;
      for (const std::string& n : *names) {
        auto uid = parse_sysfs_uint(n);
        if (uid && *uid <= UINT32_MAX && std::to_string(*uid) == n) {
          uids.push_back(static_cast<uint32_t>(*uid));
        }
      }
      std::sort(uids.begin(), uids.end());
      for (uint32_t uid : uids) {
        auto it = users.find(uid);
        out.session_users.push_back(it != users.end() ? it->second : std::to_string(uid));
      }
    }
  }
  return out;
}

}  // namespace sparkdoc::net
