#include "net/values.h"

#include <cctype>
#include <vector>

#include "core/strings.h"

namespace sparkdoc::net {
namespace {

bool all_of(std::string_view s, int (*pred)(int)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (pred(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

bool hex_digits(std::string_view s, size_t min, size_t max) {
  return s.size() >= min && s.size() <= max && all_of(s, isxdigit);
}

bool decimal(std::string_view s) {
  return s.size() <= 9 && all_of(s, isdigit);
}

}  // namespace

std::string clean_value(std::string_view text, size_t max_bytes) {
  std::string_view t = trim(text);
  if (t.size() > max_bytes) t = t.substr(0, max_bytes);
  std::string out(t);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

std::optional<uint64_t> parse_sysfs_uint(std::string_view text) {
  std::string_view t = trim(text);
  if (!all_of(t, isdigit)) return std::nullopt;
  return parse_u64(t);
}

std::optional<int64_t> parse_speed_mbps(std::string_view text) {
  std::string_view t = trim(text);
  if (t == "-1") return std::nullopt;
  auto v = parse_sysfs_uint(t);
  if (!v || *v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::optional<bool> parse_carrier(std::string_view text) {
  std::string_view t = trim(text);
  if (t == "1") return true;
  if (t == "0") return false;
  return std::nullopt;
}

std::optional<double> parse_rate_gbps(std::string_view text) {
  std::string_view t = trim(text);
  size_t space = t.find(' ');
  if (space == std::string_view::npos || !starts_with(t.substr(space), " Gb/sec")) {
    return std::nullopt;
  }
  std::string_view number = t.substr(0, space);
  // Digits with at most one '.', as the kernel prints them ("2.5", "25", "200").
  size_t dot = number.find('.');
  std::string_view whole = number.substr(0, dot);
  std::string_view fraction =
      dot == std::string_view::npos ? std::string_view("0") : number.substr(dot + 1);
  if (!decimal(whole) || !decimal(fraction)) return std::nullopt;
  return parse_double(number);
}

std::optional<std::string> parse_gid(std::string_view text) {
  std::string_view t = trim(text);
  std::vector<std::string_view> groups = split(t, ':');
  if (groups.size() != 8) return std::nullopt;
  bool zero = true;
  for (std::string_view g : groups) {
    if (!hex_digits(g, 4, 4)) return std::nullopt;
    if (g != "0000") zero = false;
  }
  if (zero) return std::nullopt;
  return to_lower(t);
}

bool is_pci_address(std::string_view name) {
  // DDDD:BB:dd.f
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return false;
  std::vector<std::string_view> parts = split(name.substr(0, dot), ':');
  return parts.size() == 3 && hex_digits(parts[0], 4, 8) && hex_digits(parts[1], 2, 2) &&
         hex_digits(parts[2], 2, 2) && hex_digits(name.substr(dot + 1), 1, 1);
}

std::optional<std::string> parse_nccl_library_name(std::string_view file_name) {
  constexpr std::string_view kPrefix = "libnccl.so.";
  if (!starts_with(file_name, kPrefix)) return std::nullopt;
  std::string_view version = file_name.substr(kPrefix.size());
  std::vector<std::string_view> parts = split(version, '.');
  if (parts.size() != 3) return std::nullopt;
  for (std::string_view p : parts) {
    if (!decimal(p)) return std::nullopt;
  }
  return std::string(version);
}

}  // namespace sparkdoc::net
