// Container markers, each recorded on its own; whether they add up to "in a container" is
// G9's judgement. On cgroup v2 /proc/1/cgroup reads "0::/" inside Docker as on many hosts, so
// cgroup paths are no evidence and are not consulted here (gb10-nvml-dcgm §4).
#pragma once

#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// What /proc/self/mountinfo says about containment.
struct MountinfoMarkers {
  bool docker = false;        // a line names /docker/containers/ (Docker bind-mounts
                              // /var/lib/docker/containers/<id>/hostname, hosts, resolv.conf)
  bool kubepods = false;      // a line names kubepods (kubelet's cgroup and volume paths)
  bool overlay_root = false;  // the topmost mount on "/" has file system type overlay
  bool operator==(const MountinfoMarkers&) const = default;
};

// Parses mountinfo text ("ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SRC
// SUPEROPTS"). Lines without the " - " separator still count for the substring markers.
// Error when no line has the mountinfo shape.
Result<MountinfoMarkers> parse_mountinfo(std::string_view text);

// Reads every marker under root: /.dockerenv, /run/.containerenv, /.singularity.d (a
// directory), /proc/self/mountinfo (markers stay false when it is unreadable) and container=
// from /proc/1/environ (nullopt when unreadable, which is usual without root, or unset).
ContainerMarkers read_container_markers(const Root& root);

}  // namespace sparkdoc::sys
