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

Result<KmsgFollower> KmsgFollower::open(const Root& root) {
  const std::string path = root.live() ? std::string("/dev/kmsg") : root.path("/dev/kmsg");
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == EPERM || err == EACCES) return fail(Why::kNoPermission, dmesg_restrict_note(root));
    return fail(why_from_errno(err), fmt::format("{}: {}", path, std::strerror(err)));
  }
  Fd owner(fd);
  // /dev/kmsg's SEEK_END moves the reader past every record in the ring (and never fails for
  // a reader); a file's moves to its end.
  if (::lseek(fd, 0, SEEK_END) < 0) {
    return fail(Why::kError, fmt::format("{}: seek: {}", path, std::strerror(errno)));
  }
  return KmsgFollower(std::move(owner), root.live());
}

std::vector<std::string> KmsgFollower::poll() {
  std::vector<std::string> out;
  auto take = [&out](std::string_view record) {
    if (record.empty() || record.front() == ' ') return;  // a continuation line
    auto line = parse_kmsg_record(record);
    if (!line || !names_nvidia_driver(line->text)) return;
    if (out.size() < kKernelLogLinesKept) out.push_back(std::move(line->text));
  };
  std::array<char, 16384> buffer;
  for (uint64_t records = 0; fd_.valid() && records < kMaxRecords; ++records) {
    ssize_t n = ::read(fd_.get(), buffer.data(), buffer.size());
    if (n > 0) {
      std::string_view chunk(buffer.data(), static_cast<size_t>(n));
      if (records_per_read_) {
        take(chunk);
        continue;
      }
      partial_.append(chunk);
      size_t end;
      while ((end = partial_.find('\n')) != std::string::npos) {
        take(std::string_view(partial_).substr(0, end));
        partial_.erase(0, end + 1);
      }
      if (partial_.size() > buffer.size()) partial_.clear();  // no record is this long
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) {
      ++lost_;
      continue;
    }
    break;  // EAGAIN: nothing more now; 0: a file's end
  }
  return out;
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
