// The kernel log since boot (/dev/kmsg) and how the kernel was booted (/proc/cmdline,
// /sys/kernel/kexec_crash_size). The NVIDIA driver reports its failures only there: RM
// allocation failures (NV_ERR_NO_MEMORY, 0x51) before the silent host wedge, Xid 119/120 and
// GSP timeouts when the driver drifted from DGX OS's pairing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Records kept in KernelLog::lines, and the bytes kept of each message.
inline constexpr size_t kKernelLogLinesKept = 512;
inline constexpr size_t kKernelLogTextMax = 512;

// Parses one /dev/kmsg record, "LEVEL,SEQ,USEC,FLAGS[,...];MESSAGE" followed by optional
// continuation lines (" KEY=value") that are dropped. LEVEL carries the facility in its high
// bits (priority = facility * 8 + level). Errors: no ';', or fields that are not numbers.
Result<KernelLogLine> parse_kmsg_record(std::string_view record);

// Whether a message names the NVIDIA driver: NVRM, Xid, GSP, nvidia or NVIDIA in it.
bool names_nvidia_driver(std::string_view message);

// Adds one record to the log: counts it and keeps it when it names the driver.
void add_kmsg_record(KernelLog& log, std::string_view record);

// The records still in the kernel's ring. Live: /dev/kmsg opened O_NONBLOCK and read one
// record per read(2) until EAGAIN (EPIPE, records overwritten while reading, is counted in
// `lost`); when dmesg_restrict forbids it, no_permission with the reason and what to do. A
// fixture root: <root>/dev/kmsg as a text file of records, one per line.
Result<KernelLog> read_kernel_log(const Root& root);

// The kernel log from now on, for watch: open() places the reader at the end of the ring
// (SEEK_END: the records already there are check's F2), and each poll() reads, without blocking,
// the records logged since, returning the messages that name the NVIDIA driver (at most
// kKernelLogLinesKept a poll; `lost` counts the polls where the ring overwrote records before
// they were read). A fixture root's <root>/dev/kmsg is a text file of records, one per line,
// followed as it grows. Threading: one thread.
class KmsgFollower {
 public:
  // Errors: as read_kernel_log's (no permission under dmesg_restrict, with what to do).
  static Result<KmsgFollower> open(const Root& root);

  std::vector<std::string> poll();
  uint64_t lost() const { return lost_; }

 private:
  explicit KmsgFollower(Fd fd, bool records_per_read)
      : fd_(std::move(fd)), records_per_read_(records_per_read) {}
  Fd fd_;
  bool records_per_read_ = true;  // /dev/kmsg: one record per read(2); a file: lines
  std::string partial_;           // a file's last line, not yet ended
  uint64_t lost_ = 0;
};

// /proc/cmdline and /sys/kernel/kexec_crash_size. Absent when /proc/cmdline is missing.
Result<KernelBoot> read_kernel_boot(const Root& root);

}  // namespace sparkdoc::sys
