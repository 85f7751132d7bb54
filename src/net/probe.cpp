#include "net/probe.h"

#include <sys/stat.h>

#include <set>

#include "net/config.h"
#include "net/interfaces.h"
#include "net/rdma.h"
#include "net/tree.h"
#include "net/values.h"

namespace sparkdoc::net {
namespace {

constexpr size_t kMaxLibraryNames = 4096;

}  // namespace

std::vector<std::string> system_nccl_dirs(const Root& root) {
  std::vector<std::string> dirs = {"/usr/lib/aarch64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                   "/usr/lib64", "/usr/local/cuda/lib64"};
  if (auto targets = Folder::open(root, "/usr/local/cuda/targets")) {
    if (auto names = targets->names(64)) {
      for (const std::string& t : *names) dirs.push_back("/usr/local/cuda/targets/" + t + "/lib");
    }
  }
  return dirs;
}

std::vector<SystemNccl> read_system_nccl(const Root& root) {
  std::vector<SystemNccl> out;
  std::set<std::string> seen;
  for (const std::string& dir_path : system_nccl_dirs(root)) {
    auto dir = Folder::open(root, dir_path);
    if (!dir || !seen.insert(dir->path()).second) continue;
    auto names = dir->names(kMaxLibraryNames);
    if (!names) continue;
    for (const std::string& name : *names) {
      if (auto version = parse_nccl_library_name(name)) {
        out.push_back(SystemNccl{child(dir_path, name), std::move(*version)});
      }
    }
  }
  return out;
}

NetReadings read_network(const Root& root, const std::map<std::string, std::string>& env) {
  NetReadings r;
  if (auto interfaces = read_interfaces(root)) r.interfaces = std::move(*interfaces);
  if (auto rdma = read_rdma(root)) r.rdma = std::move(*rdma);
  r.nccl_conf = Reading<NcclConfFile>::from(read_nccl_conf(root, "/etc/nccl.conf"));
  if (auto it = env.find("NCCL_CONF_FILE"); it != env.end() && !it->second.empty()) {
    r.nccl_conf_env_file = Reading<NcclConfFile>::from(read_nccl_conf(root, it->second));
  } else {
    r.nccl_conf_env_file = Reading<NcclConfFile>::absent(Why::kAbsent, "NCCL_CONF_FILE is not set");
  }
  r.logind = read_logind(root);
  // Whatever is at the name (dgx-spark-mlnx-hotplug makes an empty file) turns it on.
  if (auto etc = Folder::open(root, "/etc/nvidia")) {
    struct stat st {};
    r.cx7_hotplug_flag =
        ::lstat(root.path(child(etc->path(), "cx7-hotplug-enabled")).c_str(), &st) == 0;
  }
  r.system_nccl = read_system_nccl(root);
  return r;
}

}  // namespace sparkdoc::net
