// Which operating system and machine: /etc/os-release, DGX OS's /etc/dgx-release and the
// firmware's DMI strings (/sys/class/dmi/id). The DGX OS release names the OTA bundle
// (DGX_OTA_VERSION, DGX_OTA_DATE) that the driver and kernel are paired against.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

// Parses os-release style text: KEY=value lines, the value bare, "double" or 'single' quoted
// (backslash escapes in double quotes undone); comments and blank lines skipped. Keys must be
// [A-Za-z0-9_]; lines that are not assignments are skipped. At most 256 keys and 1 KiB per
// value are kept. Errors: a quoted value left open.
Result<std::map<std::string, std::string>> parse_release_file(std::string_view text);

// The three sources; each part records what it could read (a missing /etc/dgx-release is
// absent: not DGX OS).
OsRelease read_os_release(const Root& root);

}  // namespace sparkdoc::sys
