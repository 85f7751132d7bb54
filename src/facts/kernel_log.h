// What the NVIDIA driver's kernel-log records say, by one definition: F2 judges them since
// boot, and watch's detector judges the ones that appear during a run.
//   RM allocation failures: NV_ERR_NO_MEMORY, 0x00000051, _memdescAllocInternal,
//     nvCheckOkFailedNoLog, _iovaspaceCreateMappingDataFromMemDesc (ogkm#1358: one incident
//     boot had 198 + 202 + 202 such lines before the silent host wedge);
//   Xid events, by number ("NVRM: Xid (PCI:...): 119, ..." or "Xid 119 ...");
//   GSP and start-up failures: "RPC response from GPU0 GSP", "GSP task exception",
//     "RmInitAdapter failed", "SEC2 secure boot partition timed out", "Failed to query NVIDIA
//     devices" (forum 378200, 366026);
//   a bad register read (0xbadf5600, "GPU requires reset"): hardware, RMA (forum 364499).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "model/sys.h"

namespace sparkdoc::facts {

enum class DriverEvent { kNone, kNoMemory, kXid, kGspOrInit, kBadRegister };

// The kind of one record's message, and its Xid number when it is an Xid.
struct DriverEventKind {
  DriverEvent kind = DriverEvent::kNone;
  std::optional<int> xid;
};
DriverEventKind classify_driver_record(std::string_view text);

// Xids the driver raises for an application's own fault (13 graphics engine exception, 31 MMU
// fault, 43 channel stopped, 45 preemptive cleanup): a crashed program, not a sick GPU.
bool xid_is_application_fault(int xid);
// Xids after which the GPU needs a reset or the driver its firmware back: 62 (internal
// micro-controller halt), 79 (fallen off the bus), 119 and 120 (GSP RPC timeout, GSP task
// exception: the off-pairing driver of forum 378200), 154 (recovery action: reset or reboot).
bool xid_needs_reset(int xid);

struct DriverLogSummary {
  uint64_t no_memory = 0;
  uint64_t gsp_or_init = 0;
  uint64_t bad_register = 0;
  std::map<int, uint64_t> xids;              // Xid number -> records
  std::map<DriverEvent, std::string> first;  // the first record of each kind, as logged
};
DriverLogSummary summarize_driver_log(const sys::KernelLog& log);

}  // namespace sparkdoc::facts
