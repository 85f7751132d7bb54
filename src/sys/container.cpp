#include "sys/container.h"

#include "core/strings.h"
#include "sys/environment.h"
#include "sys/text.h"

namespace sparkdoc::sys {

Result<MountinfoMarkers> parse_mountinfo(std::string_view text) {
  MountinfoMarkers markers;
  bool any_mount_line = false;
  for (std::string_view line : lines(text)) {
    if (contains(line, "/docker/containers/")) markers.docker = true;
    if (contains(line, "kubepods")) markers.kubepods = true;
    size_t sep = line.find(" - ");
    if (sep == std::string_view::npos) continue;
    auto before = split_ws(line.substr(0, sep));
    auto after = split_ws(line.substr(sep + 3));
    if (before.size() < 6 || after.empty()) continue;
    any_mount_line = true;
    // Later lines mount over earlier ones, so the last mount on "/" is the visible root.
    if (before[4] == "/") markers.overlay_root = after[0] == "overlay";
  }
  if (!any_mount_line) return fail("mountinfo: no mount lines");
  return markers;
}

ContainerMarkers read_container_markers(const Root& root) {
  ContainerMarkers markers;
  markers.dockerenv = exists(root.path("/.dockerenv"));
  markers.containerenv = exists(root.path("/run/.containerenv"));
  markers.singularity = is_dir(root.path("/.singularity.d"));
  if (auto text = read_text(root.path("/proc/self/mountinfo"))) {
    if (auto parsed = parse_mountinfo(*text)) {
      markers.mountinfo_docker = parsed->docker;
      markers.mountinfo_kubepods = parsed->kubepods;
      markers.mountinfo_overlay_root = parsed->overlay_root;
    }
  }
  if (auto environ_text = read_text(root.path("/proc/1/environ"))) {
    auto env = parse_environ(*environ_text);
    if (auto it = env.find("container"); it != env.end())
      markers.pid1_container_env = valid_utf8(it->second);
  }
  return markers;
}

}  // namespace sparkdoc::sys
