#include "sys/kernel_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

// A ring of a few MB holds some 10^5 records; a writer faster than this reader must not keep it
// here forever.
constexpr uint64_t kMaxRecords = 1'000'000;

std::string dmesg_restrict_note(const Root& root) {
  auto text = read_text(root.path("/proc/sys/kernel/dmesg_restrict"), 64);
  if (text && trim(*text) == "1") {
    return "kernel.dmesg_restrict = 1 lets only root (CAP_SYSLOG) read the kernel log; run "
           "`sudo sparkdoc check`";
  }
  return "reading the kernel log needs CAP_SYSLOG here; run `sudo sparkdoc check`";
}

Result<KernelLog> read_live(const Root& root) {
  int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == EPERM || err == EACCES) return fail(Why::kNoPermission, dmesg_restrict_note(root));
    return fail(why_from_errno(err), fmt::format("/dev/kmsg: {}", std::strerror(err)));
  }
  Fd owner(fd);
  KernelLog log;
  // One record per read; the kernel refuses (EINVAL) a buffer smaller than the record, and
  // records are at most about 8 KiB with their dictionary.
  std::array<char, 16384> buffer;
  while (log.records < kMaxRecords) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      add_kmsg_record(log, std::string_view(buffer.data(), static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) break;
    int err = errno;
    if (err == EINTR) continue;
    if (err == EPIPE) {
      log.lost = true;
      continue;
    }
    if (err == EAGAIN) break;
    if (err == EPERM || err == EACCES) return fail(Why::kNoPermission, dmesg_restrict_note(root));
    return fail(Why::kError, fmt::format("/dev/kmsg: {}", std::strerror(err)));
  }
  return log;
}

}  // namespace

Result<KernelLogLine> parse_kmsg_record(std::string_view record) {
  size_t semicolon = record.find(';');
  if (semicolon == std::string_view::npos) return fail("kmsg: a record has no ';'");
  auto fields = split(record.substr(0, semicolon), ',');
  if (fields.size() < 3) return fail("kmsg: a record has fewer than three fields");
  auto priority = parse_u64(trim(fields[0]));
  auto usec = parse_u64(trim(fields[2]));
  if (!priority || !usec || !parse_u64(trim(fields[1]))) {
    return fail("kmsg: a record's level, sequence or time is not a number");
  }
  std::string_view message = record.substr(semicolon + 1);
  size_t newline = message.find('\n');
  if (newline != std::string_view::npos) message = message.substr(0, newline);
  if (message.size() > kKernelLogTextMax) message = message.substr(0, kKernelLogTextMax);
  KernelLogLine line;
  line.usec = *usec;
  line.level = static_cast<int>(*priority & 7);
  line.text = valid_utf8(message);
  return line;
}

bool names_nvidia_driver(std::string_view message) {
  static constexpr std::array<std::string_view, 5> kWords = {"NVRM", "Xid", "GSP", "nvidia",
                                                             "NVIDIA"};
  for (std::string_view w : kWords) {
    if (contains(message, w)) return true;
  }
  return false;
}

void add_kmsg_record(KernelLog& log, std::string_view record) {
  auto line = parse_kmsg_record(record);
  if (!line) return;
  ++log.records;
  if (!names_nvidia_driver(line->text)) return;
  ++log.nvidia_records;
  if (log.lines.size() < kKernelLogLinesKept) log.lines.push_back(std::move(*line));
}

Result<KernelLog> read_kernel_log(const Root& root) {
  if (root.live()) return read_live(root);
  auto text = read_text(root.path("/dev/kmsg"), 64 << 20);
  if (!text) return tl::unexpected(text.error());
  KernelLog log;
  for (std::string_view record : lines(*text)) {
    if (record.empty() || record.front() == ' ') continue;  // a continuation line
    add_kmsg_record(log, record);
  }
  return log;
}

Result<KernelBoot> read_kernel_boot(const Root& root) {
  auto cmdline = read_text(root.path("/proc/cmdline"), 64 << 10);
  if (!cmdline) return tl::unexpected(cmdline.error());
  KernelBoot boot;
  boot.cmdline = valid_utf8(trim(*cmdline));
  auto crash = read_text(root.path("/sys/kernel/kexec_crash_size"), 64);
  if (!crash) {
    boot.kexec_crash_size_bytes =
        Reading<uint64_t>::absent(crash.error().why, crash.error().message);
  } else if (auto bytes = parse_u64(trim(*crash))) {
    boot.kexec_crash_size_bytes = *bytes;
  } else {
    boot.kexec_crash_size_bytes =
        Reading<uint64_t>::absent(Why::kError, "/sys/kernel/kexec_crash_size is not a number");
  }
  return boot;
}

}  // namespace sparkdoc::sys
