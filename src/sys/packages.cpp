#include "sys/packages.h"

#include <algorithm>
#include <array>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

// Prefixes of the recorded package names (the reference's inventory: driver, firmware and
// module packages per flavour, datacenter packages that do not belong on a Spark, Spark-only
// packages, the runtimes and tools that regressed).
constexpr std::array<std::string_view, 21> kWatchedPrefixes = {
    "nvidia-",       "libnvidia-",
    "linux-image-",  "linux-modules-nvidia",
    "linux-nvidia",  "linux-headers-nvidia",
    "nv-docker-",    "dgx-",
    "docker-ce",     "docker.io",
    "docker-buildx", "containerd",
    "moby-",         "fwupd",
    "libfwupd",      "dkms",
    "cuda-drivers",  "cuda-compat",
    "cuda-toolkit",  "doca-",
    "mlnx-"};

struct Stanza {
  std::string_view package;
  std::string_view version;
  std::string_view status;
};

void finish(const Stanza& st, PackageList& out, bool& any) {
  if (st.package.empty()) return;
  any = true;
  if (!ends_with(st.status, " installed") && st.status != "installed") return;
  ++out.installed;
  if (!is_watched_package(st.package)) return;
  out.packages.push_back(
      Package{valid_utf8(st.package), valid_utf8(st.version), valid_utf8(st.status)});
}

}  // namespace

bool is_watched_package(std::string_view name) {
  for (std::string_view p : kWatchedPrefixes) {
    if (starts_with(name, p)) return true;
  }
  return false;
}

Result<PackageList> parse_dpkg_status(std::string_view text) {
  PackageList out;
  Stanza st;
  bool any = false;
  for (std::string_view line : lines(text)) {
    if (trim(line).empty()) {
      finish(st, out, any);
      st = Stanza{};
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') continue;  // a continued field
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view field = line.substr(0, colon);
    std::string_view value = trim(line.substr(colon + 1));
    if (field == "Package") {
      st.package = value;
    } else if (field == "Version") {
      st.version = value;
    } else if (field == "Status") {
      st.status = value;
    }
  }
  finish(st, out, any);
  if (!any) return fail("dpkg status: no package stanza");
  std::sort(out.packages.begin(), out.packages.end(),
            [](const Package& a, const Package& b) { return a.name < b.name; });
  return out;
}

Result<PackageList> read_packages(const Root& root) {
  // dpkg's status file is a few MB on a desktop image; 64 MB bounds a damaged one.
  auto text = read_text(root.path("/var/lib/dpkg/status"), 64 << 20);
  if (!text) return tl::unexpected(text.error());
  return parse_dpkg_status(*text);
}

}  // namespace sparkdoc::sys
