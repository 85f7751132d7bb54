#include "sys/nvidia_module.h"

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

bool is_version_word(std::string_view word) {
  if (word.empty() || word.front() < '0' || word.front() > '9') return false;
  bool dot = false;
  for (char c : word) {
    if (c == '.') {
      dot = true;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dot && word.back() != '.';
}

}  // namespace

Result<NvidiaKernelModule> parse_nvidia_version(std::string_view text) {
  constexpr std::string_view kPrefix = "NVRM version:";
  for (std::string_view raw : lines(text)) {
    std::string_view line = trim(raw);
    if (!line.starts_with(kPrefix)) continue;
    NvidiaKernelModule module;
    module.line = valid_utf8(line);
    module.flavor = contains(line, "Open Kernel Module") ? "open" : "proprietary";
    for (std::string_view word : split_ws(line.substr(kPrefix.size()))) {
      if (is_version_word(word)) {
        module.version = std::string(word);
        break;
      }
    }
    if (module.version.empty()) return fail("nvidia version: no version number on the NVRM line");
    return module;
  }
  return fail("nvidia version: no 'NVRM version:' line");
}

Result<NvidiaKernelModule> read_nvidia_module(const Root& root) {
  auto text = read_text(root.path("/proc/driver/nvidia/version"));
  if (!text) {
    if (text.error().why == Why::kAbsent) {
      return fail(Why::kAbsent, "nvidia kernel module not loaded");
    }
    return tl::unexpected(text.error());
  }
  return parse_nvidia_version(*text);
}

}  // namespace sparkdoc::sys
