// Host identity: architecture, kernel, host name, DMI product label, CPUs, effective user.
#pragma once

#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Counts the CPUs of a kernel CPU list ("0-19", "0,2-5,8"), as in
// /sys/devices/system/cpu/online. Errors: empty text, a malformed range, or more than 2^20 CPUs.
Result<unsigned> parse_cpu_list(std::string_view text);

// Live root: uname() machine, release and node name, sysconf(_SC_NPROCESSORS_ONLN), and
// geteuid() == 0. A fixture root records the same facts in files the kernel itself provides:
//   cpu_arch        <root>/proc/sys/kernel/arch (the uname machine string; Linux 6.1+)
//   kernel_release  <root>/proc/sys/kernel/osrelease
//   hostname        <root>/proc/sys/kernel/hostname
//   cpu_count       <root>/sys/devices/system/cpu/online (a CPU list)
// each absent when its file is missing, and is_root absent: a fixture has no effective user.
// dmi_product is read from <root>/sys/class/dmi/id/product_name in both cases (trimmed; many
// arm64 machines have no DMI, which makes it absent).
Host read_host(const Root& root);

}  // namespace sparkdoc::sys
