// Installed package versions that the F checks pair and judge: the NVIDIA driver, firmware and
// kernel modules, the kernel, the container toolkit and Docker, fwupd, DKMS. Read from dpkg's
// own database (/var/lib/dpkg/status), never by running dpkg.
#pragma once

#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Whether a package is one sparkdoc records (the rest stay on the machine).
bool is_watched_package(std::string_view name);

// Parses dpkg status text: stanzas separated by blank lines, "Field: value" lines, continuation
// lines starting with a space. A package counts as installed when its Status ends in
// "installed" (not "config-files", "half-installed", ...). Stanzas without a Package field are
// skipped. Errors: text that holds no stanza with a Package field at all.
Result<PackageList> parse_dpkg_status(std::string_view text);

// <root>/var/lib/dpkg/status. Absent where there is no dpkg.
Result<PackageList> read_packages(const Root& root);

}  // namespace sparkdoc::sys
