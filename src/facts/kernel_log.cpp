#include "facts/kernel_log.h"

#include <array>
#include <cctype>
#include <span>

namespace sparkdoc::facts {
namespace {

bool has_any(std::string_view text, std::span<const std::string_view> words) {
  for (std::string_view w : words) {
    if (text.find(w) != std::string_view::npos) return true;
  }
  return false;
}

constexpr std::array<std::string_view, 5> kNoMemory = {
    "NV_ERR_NO_MEMORY", "0x00000051", "_memdescAllocInternal", "nvCheckOkFailedNoLog",
    "_iovaspaceCreateMappingDataFromMemDesc"};
constexpr std::array<std::string_view, 6> kGspOrInit = {
    "RPC response from GPU0 GSP",     "GSP task exception",
    "RmInitAdapter failed",           "SEC2 secure boot partition timed out",
    "Failed to query NVIDIA devices", "not supported by the NVIDIA"};
constexpr std::array<std::string_view, 2> kBadRegister = {"0xbadf5600",
                                                          "Possible bad register read"};

// The number after "Xid", past an optional "(PCI:...)" and ':'.
std::optional<int> xid_after(std::string_view text) {
  size_t at = text.find("Xid");
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + 3;
  auto skip_spaces = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip_spaces();
  if (i < text.size() && text[i] == '(') {
    size_t close = text.find(')', i);
    if (close == std::string_view::npos) return std::nullopt;
    i = close + 1;
  }
  skip_spaces();
  if (i < text.size() && text[i] == ':') ++i;
  skip_spaces();
  int value = 0;
  size_t digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && digits < 5) {
    value = value * 10 + (text[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return value;
}

}  // namespace

DriverEventKind classify_driver_record(std::string_view text) {
  if (has_any(text, kBadRegister)) return {DriverEvent::kBadRegister, std::nullopt};
  if (auto xid = xid_after(text)) return {DriverEvent::kXid, xid};
  if (has_any(text, kNoMemory)) return {DriverEvent::kNoMemory, std::nullopt};
  if (has_any(text, kGspOrInit)) return {DriverEvent::kGspOrInit, std::nullopt};
  return {};
}

bool xid_is_application_fault(int xid) {
  return xid == 13 || xid == 31 || xid == 43 || xid == 45;
}

bool xid_needs_reset(int xid) {
  return xid == 62 || xid == 79 || xid == 119 || xid == 120 || xid == 154;
}

DriverLogSummary summarize_driver_log(const sys::KernelLog& log) {
  DriverLogSummary s;
  for (const sys::KernelLogLine& line : log.lines) {
    DriverEventKind k = classify_driver_record(line.text);
    switch (k.kind) {
      case DriverEvent::kNone:
        continue;
      case DriverEvent::kNoMemory:
        ++s.no_memory;
        break;
      case DriverEvent::kXid:
        ++s.xids[*k.xid];
        break;
      case DriverEvent::kGspOrInit:
        ++s.gsp_or_init;
        break;
      case DriverEvent::kBadRegister:
        ++s.bad_register;
        break;
    }
    s.first.try_emplace(k.kind, line.text);
  }
  return s;
}

}  // namespace sparkdoc::facts
