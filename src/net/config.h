// The configuration files a multi-node job inherits from the machine: NCCL's configuration
// file and systemd-logind's IPC removal with the users it spares.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/net.h"

namespace sparkdoc::net {

inline constexpr size_t kMaxConfSettings = 256;

// nccl.conf: NAME=value lines as NCCL reads them at init (white space around both trimmed),
// lines starting with '#' and lines without a name or '=' skipped. A name set twice keeps its
// first value (NCCL sets a variable only when it is not set yet). Names and values are cut at
// 1023 bytes, as NCCL's own buffers cut them; at most kMaxConfSettings names.
std::map<std::string, std::string> parse_nccl_conf(std::string_view text);

// The file at `machine_path` (/etc/nccl.conf or $NCCL_CONF_FILE), with its modification time.
// Absent (Why::kAbsent) when there is no file.
Result<NcclConfFile> read_nccl_conf(const Root& root, const std::string& machine_path);

// A systemd boolean: yes/no, true/false, on/off, 1/0, y/n, t/f, any case. None otherwise.
std::optional<bool> parse_systemd_bool(std::string_view text);

// The value one logind.conf file gives RemoveIPC: its last valid `RemoveIPC=` in the [Login]
// section (an invalid value is ignored, as logind ignores it). None when the file sets none.
std::optional<bool> parse_logind_remove_ipc(std::string_view text);

// /etc/passwd: uid -> user name; the first line of a uid wins (getpwuid's answer). Lines that
// are not name:password:uid:... are skipped.
std::map<uint32_t, std::string> parse_passwd(std::string_view text);

// logind's RemoveIPC as logind would read it: the main logind.conf (the first of /etc, /run,
// /usr/local/lib, /usr/lib systemd/), then the drop-ins logind.conf.d/*.conf of those folders
// sorted by file name, a name in an earlier folder masking the same name in later ones (and a
// link to /dev/null masking it outright); the last setting wins. The users spared: the names in
// /var/lib/systemd/linger, and the users with a user manager running (/run/user/<uid>, named
// through /etc/passwd, the uid when it has no name).
LogindIpc read_logind(const Root& root);

}  // namespace sparkdoc::net
