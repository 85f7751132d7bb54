#include "sys/shm.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {

std::vector<uint32_t> live_uids_from(const std::vector<std::pair<std::string, uint32_t>>& proc) {
  std::vector<uint32_t> uids;
  for (const auto& [name, uid] : proc) {
    if (name.empty() || !parse_u64(name)) continue;
    uids.push_back(uid);
  }
  std::sort(uids.begin(), uids.end());
  uids.erase(std::unique(uids.begin(), uids.end()), uids.end());
  return uids;
}

Result<ShmScan> read_shm(const Root& root) {
  std::string dir = root.path("/dev/shm");
  struct statvfs vfs;
  if (::statvfs(dir.c_str(), &vfs) != 0) {
    int err = errno;
    return fail(why_from_errno(err), fmt::format("/dev/shm: {}", std::strerror(err)));
  }
  ShmScan scan;
  scan.size_bytes = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  scan.used_bytes =
      static_cast<uint64_t>(vfs.f_blocks - std::min(vfs.f_bfree, vfs.f_blocks)) * vfs.f_frsize;
  auto names = list_dir(dir);
  if (!names) return tl::unexpected(names.error());
  for (const std::string& name : *names) {
    struct stat st;
    if (::fstatat(AT_FDCWD, (dir + "/" + name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode)) continue;
    ++scan.files_total;
    if (scan.files.size() >= kShmFilesKept) continue;
    scan.files.push_back(ShmFile{valid_utf8(name), static_cast<uint64_t>(st.st_size),
                                 static_cast<uint32_t>(st.st_uid),
                                 static_cast<int64_t>(st.st_mtim.tv_sec)});
  }
  std::vector<std::pair<std::string, uint32_t>> proc;
  std::string proc_dir = root.path("/proc");
  if (auto pids = list_dir(proc_dir)) {
    for (const std::string& name : *pids) {
      if (!parse_u64(name)) continue;
      struct stat st;
      if (::stat((proc_dir + "/" + name).c_str(), &st) == 0) {
        proc.emplace_back(name, static_cast<uint32_t>(st.st_uid));
      }
    }
  }
  scan.live_uids = live_uids_from(proc);
  return scan;
}

}  // namespace sparkdoc::sys
