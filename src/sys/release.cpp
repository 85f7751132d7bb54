#include "sys/release.h"

#include <array>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

constexpr size_t kMaxKeys = 256;
constexpr size_t kMaxValue = 1024;

bool is_key(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// The DMI strings worth reporting; serial numbers and UUIDs are left on the machine.
constexpr std::array<std::string_view, 7> kDmiFields = {
    "sys_vendor", "product_name", "product_version", "board_vendor",
    "board_name", "bios_version", "bios_date"};

}  // namespace

Result<std::map<std::string, std::string>> parse_release_file(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view raw : lines(text)) {
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    if (starts_with(line, "export ")) line = trim(line.substr(7));
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = trim(line.substr(0, eq));
    if (!is_key(key)) continue;
    std::string_view rest = trim(line.substr(eq + 1));
    std::string value;
    if (!rest.empty() && (rest.front() == '"' || rest.front() == '\'')) {
      char quote = rest.front();
      size_t i = 1;
      bool closed = false;
      for (; i < rest.size(); ++i) {
        char c = rest[i];
        if (c == quote) {
          closed = true;
          break;
        }
        if (quote == '"' && c == '\\' && i + 1 < rest.size()) c = rest[++i];
        value.push_back(c);
      }
      if (!closed) return fail("release file: a quoted value is not closed");
    } else {
      value = std::string(rest);
    }
    if (value.size() > kMaxValue) value.resize(kMaxValue);
    if (out.size() >= kMaxKeys && !out.contains(std::string(key))) continue;
    out[std::string(key)] = valid_utf8(value);
  }
  return out;
}

OsRelease read_os_release(const Root& root) {
  OsRelease r;
  auto os = read_text(root.path("/etc/os-release"), 64 << 10);
  if (!os) os = read_text(root.path("/usr/lib/os-release"), 64 << 10);
  if (os) {
    if (auto parsed = parse_release_file(*os)) r.os_release = std::move(*parsed);
  }
  auto dgx = read_text(root.path("/etc/dgx-release"), 64 << 10);
  if (!dgx) {
    r.dgx_release = Reading<std::map<std::string, std::string>>::absent(
        dgx.error().why,
        dgx.error().why == Why::kAbsent ? "no /etc/dgx-release: not DGX OS" : dgx.error().message);
  } else {
    r.dgx_release = Reading<std::map<std::string, std::string>>::from(parse_release_file(*dgx));
  }
  for (std::string_view field : kDmiFields) {
    auto text = read_text(root.path("/sys/class/dmi/id/" + std::string(field)), 4096);
    if (!text) continue;
    std::string value = valid_utf8(trim(*text));
    if (!value.empty()) r.dmi[std::string(field)] = std::move(value);
  }
  return r;
}

}  // namespace sparkdoc::sys
