#include "sys/vm.h"

#include <string>

#include "core/strings.h"

namespace sparkdoc::sys {
namespace {

Reading<int64_t> read_sysctl_int(const Root& root, const char* path) {
  auto text = read_text(root.path(path));
  if (!text) return Reading<int64_t>::absent(text.error().why, text.error().message);
  auto value = parse_sysctl_int(*text);
  if (!value) {
    return Reading<int64_t>::absent(value.error().why, path + (": " + value.error().message));
  }
  return *value;
}

}  // namespace

Result<int64_t> parse_sysctl_int(std::string_view text) {
  auto value = parse_i64(trim(text));
  if (!value) return fail("not a single integer");
  return *value;
}

VmTunables read_vm_tunables(const Root& root) {
  VmTunables vm;
  vm.min_free_kbytes = read_sysctl_int(root, "/proc/sys/vm/min_free_kbytes");
  vm.vfs_cache_pressure = read_sysctl_int(root, "/proc/sys/vm/vfs_cache_pressure");
  vm.swappiness = read_sysctl_int(root, "/proc/sys/vm/swappiness");
  return vm;
}

}  // namespace sparkdoc::sys
