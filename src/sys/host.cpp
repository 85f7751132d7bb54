#include "sys/host.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

constexpr uint64_t kMaxCpus = uint64_t{1} << 20;

Reading<std::string> read_trimmed(const Root& root, const char* path) {
  auto text = read_text(root.path(path), 4096);
  if (!text) return Reading<std::string>::absent(text.error().why, text.error().message);
  std::string value = valid_utf8(trim(*text));
  if (value.empty()) {
    return Reading<std::string>::absent(Why::kAbsent, fmt::format("{} is empty", path));
  }
  return value;
}

Reading<unsigned> read_cpu_count(const Root& root) {
  auto text = read_text(root.path("/sys/devices/system/cpu/online"), 4096);
  if (!text) return Reading<unsigned>::absent(text.error().why, text.error().message);
  return Reading<unsigned>::from(parse_cpu_list(*text));
}

}  // namespace

Result<unsigned> parse_cpu_list(std::string_view text) {
  std::string_view list = trim(text);
  if (list.empty()) return fail("cpu list: empty");
  uint64_t count = 0;
  for (std::string_view part : split(list, ',')) {
    size_t dash = part.find('-');
    auto first = parse_u64(part.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parse_u64(part.substr(dash + 1));
    if (!first || !last || *last < *first) return fail("cpu list: malformed range");
    if (*last - *first >= kMaxCpus || count + (*last - *first + 1) > kMaxCpus) {
      return fail("cpu list: implausibly many CPUs");
    }
    count += *last - *first + 1;
  }
  return static_cast<unsigned>(count);
}

Host read_host(const Root& root) {
  Host host;
  if (root.live()) {
    struct utsname u;
    if (::uname(&u) == 0) {
      host.cpu_arch = valid_utf8(u.machine);
      host.kernel_release = valid_utf8(u.release);
      host.hostname = valid_utf8(u.nodename);
    } else {
      std::string detail = fmt::format("uname: {}", std::strerror(errno));
      host.cpu_arch = Reading<std::string>::absent(Why::kError, detail);
      host.kernel_release = host.cpu_arch;
      host.hostname = host.cpu_arch;
    }
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0) {
      host.cpu_count = static_cast<unsigned>(cpus);
    } else {
      host.cpu_count =
          Reading<unsigned>::absent(Why::kError, "sysconf(_SC_NPROCESSORS_ONLN) failed");
    }
    host.is_root = ::geteuid() == 0;
  } else {
    host.cpu_arch = read_trimmed(root, "/proc/sys/kernel/arch");
    host.kernel_release = read_trimmed(root, "/proc/sys/kernel/osrelease");
    host.hostname = read_trimmed(root, "/proc/sys/kernel/hostname");
    host.cpu_count = read_cpu_count(root);
    host.is_root = Reading<bool>::absent(Why::kAbsent, "a fixture tree has no effective user");
  }
  host.dmi_product = read_trimmed(root, "/sys/class/dmi/id/product_name");
  return host;
}

}  // namespace sparkdoc::sys
