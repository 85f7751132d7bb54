// One pass over /proc: processes that hold /dev/nvidia* files open (orphans, other users of the
// GPU memory; gb10-nvml-dcgm §3.5) and known GPU servers found by their command lines (G6;
// gnome-remote-desktop holds about 6 GB, 000 §6). It runs in every `sparkdoc check`, whose
// whole budget is 0.25 s, so per process it reads only cmdline, the fd directory's links, and
// comm of GPU holders; nothing else.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/fs.h"
#include "core/result.h"
#include "model/sys.h"

namespace sparkdoc::sys {

inline constexpr size_t kCmdlineMaxChars = 512;

// /proc/PID/cmdline's NUL-separated arguments joined by single spaces (trailing NULs dropped),
// cut to at most max_chars bytes without splitting a UTF-8 character. Control characters
// become spaces and bytes that are not UTF-8 become '?', so the result is printable text.
std::string format_cmdline(std::string_view raw, size_t max_chars = kCmdlineMaxChars);

// The kind of a known GPU server, from a command line as format_cmdline makes it:
//   "vllm"                  `vllm serve`, `python -m vllm.<module>`, or the "VLLM::EngineCore"
//                           style title vLLM's engine processes give themselves
//   "ollama"                `ollama serve`, `ollama runner`, or `ollama_llama_server`
//   "llama-server"          llama.cpp's `llama-server`
//   "sglang"                `python -m sglang.launch_server`, or an "sglang::scheduler" title
//   "tritonserver"          `tritonserver`
//   "gnome-remote-desktop"  `gnome-remote-desktop-daemon`
// Programs are matched by base name, as the first word or after launcher words (python*, uv,
// nohup, env, taskset, ..., their flags and VAR=value assignments), so `tail vllm.log` or
// `grep tritonserver` are not servers. nullopt for anything else.
std::optional<std::string> classify_server(std::string_view cmdline);

// Scans <root>/proc/[0-9]*. GPU holders list the distinct /dev/nvidia* link targets of their
// fd directories, sorted; servers carry their kind. Both are sorted by pid. An fd directory
// that cannot be listed for lack of permission (other users' processes when not root) counts
// in fd_dirs_unreadable; a process that exits mid-scan is skipped. On the live root the
// scanning process itself is left out: its own GPU probes hold /dev/nvidia* open.
// processes_seen counts processes whose cmdline was read. Error only when <root>/proc
// cannot be listed.
Result<ProcessScan> scan_processes(const Root& root);

}  // namespace sparkdoc::sys
