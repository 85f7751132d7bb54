#include "sys/processes.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

// Enough for the program and module words of any server command line; the rest is arguments.
constexpr size_t kCmdlineReadBytes = 8192;

struct ServerRule {
  std::string_view kind;
  std::string_view program;                     // base name of the command word
  std::array<std::string_view, 2> subcommands;  // one must follow the program; none: any
  std::string_view module;                      // `-m <module>` or `-m <module>.<sub>`
  std::string_view title_prefix;                // a process title set with setproctitle
};

constexpr std::array kServerRules = {
    ServerRule{"vllm", "vllm", {"serve", ""}, "vllm", "VLLM::"},
    ServerRule{"ollama", "ollama", {"serve", "runner"}, "", ""},
    ServerRule{"ollama", "ollama_llama_server", {"", ""}, "", ""},
    ServerRule{"llama-server", "llama-server", {"", ""}, "", ""},
    ServerRule{"sglang", "", {"", ""}, "sglang.launch_server", "sglang::"},
    ServerRule{"tritonserver", "tritonserver", {"", ""}, "", ""},
    ServerRule{"gnome-remote-desktop", "gnome-remote-desktop-daemon", {"", ""}, "", ""},
};

// Words that start another program rather than being it.
constexpr std::array<std::string_view, 16> kLauncherWords = {
    "uv",      "uvx",  "run",    "nohup",  "env",  "exec",   "sudo", "taskset",
    "numactl", "nice", "ionice", "stdbuf", "time", "setsid", "sh",   "bash",
};

std::string_view base_name(std::string_view word) {
  size_t slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

bool is_launcher_word(std::string_view word) {
  std::string_view base = base_name(word);
  if (base.starts_with("python")) return true;
  if (word.starts_with('-') || word.find('=') != std::string_view::npos) return true;
  if (std::all_of(word.begin(), word.end(),
                  [](char c) { return (c >= '0' && c <= '9') || c == ',' || c == '-'; })) {
    return true;
  }
  return std::find(kLauncherWords.begin(), kLauncherWords.end(), base) != kLauncherWords.end();
}

bool module_matches(std::string_view word, std::string_view module) {
  return !module.empty() && word.starts_with(module) &&
         (word.size() == module.size() || word[module.size()] == '.');
}

bool subcommand_matches(const ServerRule& rule, std::string_view next) {
  if (rule.subcommands[0].empty()) return true;
  for (std::string_view s : rule.subcommands) {
    if (!s.empty() && s == next) return true;
  }
  return false;
}

std::optional<std::string> match_word(const std::vector<std::string_view>& words, size_t i) {
  std::string_view next = i + 1 < words.size() ? words[i + 1] : std::string_view();
  for (const auto& rule : kServerRules) {
    if (words[i] == "-m" && module_matches(next, rule.module)) return std::string(rule.kind);
    if (!rule.program.empty() && base_name(words[i]) == rule.program &&
        subcommand_matches(rule, next)) {
      return std::string(rule.kind);
    }
  }
  return std::nullopt;
}

// Reads at most max_bytes of a file: a command line can be megabytes long, and only its start
// is wanted.
Result<std::string> read_prefix(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno == EACCES ? Why::kNoPermission : Why::kAbsent, path);
  std::string out(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = ::read(fd, out.data() + got, max_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

std::optional<int> parse_pid(std::string_view name) {
  if (name.empty() ||
      !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  auto v = parse_u64(name);
  if (!v || *v > static_cast<uint64_t>(INT_MAX)) return std::nullopt;
  return static_cast<int>(*v);
}

// /dev/nvidia* targets of a process's fds, sorted and distinct; nullopt when the directory
// cannot be listed (why in *why).
std::optional<std::vector<std::string>> nvidia_fds(const std::string& proc_dir, Why* why) {
  std::string fd_dir = proc_dir + "/fd";
  auto names = list_dir(fd_dir);
  if (!names) {
    *why = names.error().why;
    return std::nullopt;
  }
  std::vector<std::string> devices;
  for (const auto& name : *names) {
    auto target = read_link(fd_dir + "/" + name);
    if (target && target->starts_with("/dev/nvidia")) devices.push_back(valid_utf8(*target));
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

}  // namespace

std::string format_cmdline(std::string_view raw, size_t max_chars) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::string out;
  out.reserve(std::min(raw.size(), max_chars));
  size_t i = 0;
  while (i < raw.size()) {
    size_t n = utf8_sequence_length(raw, i);
    if (n == 0) {
      if (out.size() + 1 > max_chars) break;
      out += '?';
      ++i;
      continue;
    }
    if (out.size() + n > max_chars) break;
    if (n == 1) {
      auto c = static_cast<unsigned char>(raw[i]);
      out += (c < 0x20 || c == 0x7F) ? ' ' : raw[i];
    } else {
      out.append(raw.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::optional<std::string> classify_server(std::string_view cmdline) {
  auto words = split_ws(cmdline);
  if (words.empty()) return std::nullopt;
  for (const auto& rule : kServerRules) {
    if (!rule.title_prefix.empty() && words[0].starts_with(rule.title_prefix)) {
      return std::string(rule.kind);
    }
  }
  bool after_python = false;
  for (size_t i = 0; i < words.size(); ++i) {
    if (auto kind = match_word(words, i)) return kind;
    // After an interpreter, "-m" names the program; elsewhere (numactl -m 0) it is a flag.
    if (after_python && words[i] == "-m") return std::nullopt;
    if (!is_launcher_word(words[i])) return std::nullopt;
    if (base_name(words[i]).starts_with("python")) after_python = true;
  }
  return std::nullopt;
}

Result<ProcessScan> scan_processes(const Root& root) {
  auto names = list_dir(root.path("/proc"));
  if (!names) return tl::unexpected(names.error());
  std::optional<int> self;
  if (root.live()) self = static_cast<int>(::getpid());

  ProcessScan scan;
  for (const auto& name : *names) {
    auto pid = parse_pid(name);
    if (!pid || pid == self) continue;
    std::string proc_dir = root.path("/proc/" + name);
    auto raw = read_prefix(proc_dir + "/cmdline", kCmdlineReadBytes);
    if (!raw) continue;
    ++scan.processes_seen;
    std::string full = format_cmdline(*raw, kCmdlineReadBytes);
    std::string cmdline = format_cmdline(full, kCmdlineMaxChars);

    if (auto kind = classify_server(full)) {
      scan.servers.push_back(KnownServer{*pid, *kind, cmdline});
    }

    Why why = Why::kError;
    auto devices = nvidia_fds(proc_dir, &why);
    if (!devices) {
      if (why == Why::kNoPermission) ++scan.fd_dirs_unreadable;
      continue;
    }
    if (devices->empty()) continue;
    GpuHolder holder;
    holder.pid = *pid;
    if (auto comm = read_prefix(proc_dir + "/comm", 64)) {
      std::string_view c = *comm;
      while (!c.empty() && c.back() == '\n') c.remove_suffix(1);
      holder.comm = format_cmdline(c, 64);
    }
    holder.cmdline = cmdline;
    holder.devices = std::move(*devices);
    scan.gpu_holders.push_back(std::move(holder));
  }
  auto by_pid = [](const auto& a, const auto& b) { return a.pid < b.pid; };
  std::sort(scan.gpu_holders.begin(), scan.gpu_holders.end(), by_pid);
  std::sort(scan.servers.begin(), scan.servers.end(), by_pid);
  return scan;
}

}  // namespace sparkdoc::sys
