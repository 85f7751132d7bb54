#include "job/read.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "core/fs.h"
#include "core/strings.h"
#include "job/files.h"
#include "job/python_source.h"
#include "job/shell.h"

namespace sparkdoc::job {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 12> kSkippedFolders{
    ".git", ".hg",  ".svn",        "__pycache__",   "node_modules",  ".venv",
    "venv", ".tox", ".mypy_cache", ".pytest_cache", "site-packages", "dist-packages"};

constexpr std::array<std::string_view, 14> kConfigWords{
    "accelerate", "deepspeed", "ds_config", "zero", "fsdp", "trl",    "sft",
    "train",      "finetune",  "fine_tune", "lora", "peft", "launch", "config"};

bool ends_with_any(std::string_view s, std::initializer_list<std::string_view> suffixes) {
  return std::any_of(suffixes.begin(), suffixes.end(),
                     [&](std::string_view x) { return s.ends_with(x); });
}

}  // namespace

std::optional<FileKind> classify_job_file(std::string_view name) {
  const std::string lower = to_lower(name);
  std::string_view n = lower;
  if (n.ends_with(".py")) return FileKind::kPython;
  if (n == "dockerfile" || n.starts_with("dockerfile.") || n.ends_with(".dockerfile") ||
      n == "containerfile" || n.starts_with("containerfile.")) {
    return FileKind::kDockerfile;
  }
  if ((n.starts_with("docker-compose") || n.starts_with("compose")) &&
      ends_with_any(n, {".yml", ".yaml"})) {
    return FileKind::kCompose;
  }
  if (ends_with_any(n, {".sh", ".bash"})) return FileKind::kShell;
  if (n == "makefile" || n == "gnumakefile" || n.ends_with(".mk")) return FileKind::kMakefile;
  if (n == "pyproject.toml") return FileKind::kPyproject;
  if (n == "uv.lock") return FileKind::kUvLock;
  if (n == "cmakecache.txt") return FileKind::kCMakeCache;
  if (n.ends_with(".txt") && (n.find("requirement") != std::string_view::npos ||
                              n.find("constraint") != std::string_view::npos ||
                              n.find("freeze") != std::string_view::npos)) {
    return FileKind::kRequirements;
  }
  if (ends_with_any(n, {".yml", ".yaml", ".json"})) {
    for (std::string_view w : kConfigWords) {
      if (n.find(w) != std::string_view::npos) return FileKind::kConfig;
    }
  }
  return std::nullopt;
}

namespace {

// "# sparkdoc: ignore L23" comments of a file that is not Python: the first '#' of a line starts
// its comment (a '#' in quotes that says so would count too, which only silences a finding).
std::map<uint32_t, std::vector<std::string>> ignore_comments(std::string_view text) {
  std::map<uint32_t, std::vector<std::string>> out;
  uint32_t n = 0;
  for (std::string_view line : split(text, '\n')) {
    ++n;
    const size_t hash = line.find('#');
    if (hash == std::string_view::npos) continue;
    std::vector<std::string> ids = ignored_ids(line.substr(hash));
    if (ids.empty()) continue;
    auto& here = out[n];
    here.insert(here.end(), ids.begin(), ids.end());
    if (trim(line.substr(0, hash)).empty()) {
      auto& below = out[n + 1];
      below.insert(below.end(), ids.begin(), ids.end());
    }
  }
  return out;
}

}  // namespace

JobFile read_job_text(std::string path, FileKind kind, std::string_view text) {
  JobFile f;
  f.path = std::move(path);
  f.kind = kind;
  switch (kind) {
    case FileKind::kPython:
      f.python = parse_python_source(text);
      break;
    case FileKind::kDockerfile:
      f.docker = parse_dockerfile(text);
      f.commands = dockerfile_commands(f.docker);
      break;
    case FileKind::kCompose:
      f.config = parse_yaml(text);
      for (const ConfigValue& v : f.config) {
        std::string_view key = v.key;
        if (key.ends_with(".command") || key.ends_with(".entrypoint")) {
          for (Command& c : parse_shell(v.value, v.line)) f.commands.push_back(std::move(c));
        }
      }
      break;
    case FileKind::kShell:
    case FileKind::kCommandLine:
      f.commands = parse_shell(text);
      break;
    case FileKind::kMakefile:
      f.commands = makefile_commands(text);
      break;
    case FileKind::kRequirements:
      f.requirements = parse_requirements_txt(text);
      break;
    case FileKind::kPyproject: {
      TomlRead t = parse_pyproject(text);
      f.requirements = std::move(t.requirements);
      f.config = std::move(t.values);
      break;
    }
    case FileKind::kUvLock:
      f.requirements = parse_uv_lock(text);
      break;
    case FileKind::kConfig: {
      std::string_view trimmed = text;
      while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\n')) {
        trimmed.remove_prefix(1);
      }
      f.config =
          !trimmed.empty() && trimmed.front() == '{' ? parse_json_config(text) : parse_yaml(text);
      break;
    }
    case FileKind::kCMakeCache:
      f.config = parse_cmake_cache(text);
      break;
  }
  f.ignored = kind == FileKind::kPython ? f.python.ignored : ignore_comments(text);
  return f;
}

JobFile command_line_file(std::string_view command) {
  return read_job_text("--cmd", FileKind::kCommandLine, command);
}

Result<Job> read_job(const std::vector<std::string>& paths, const JobReadOptions& options) {
  Job job;
  job.roots = paths;
  struct Found {
    std::string path;   // to open
    std::string shown;  // in findings
    FileKind kind;
  };
  std::vector<Found> found;
  for (const std::string& root : paths) {
    std::error_code ec;
    auto status = fs::symlink_status(root, ec);
    if (ec || !fs::exists(status))
      return fail(Why::kAbsent, fmt::format("{}: no such file or folder", root));
    if (fs::is_symlink(status)) status = fs::status(root, ec);
    if (!fs::is_directory(status)) {
      std::string name = fs::path(root).filename().string();
      auto kind = classify_job_file(name);
      // A file named on the command line is read even when its name says nothing: a script
      // without .py that starts with a python shebang, else as shell commands.
      if (!kind) kind = FileKind::kShell;
      found.push_back(Found{root, root, *kind});
      continue;
    }
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    if (ec) return fail(Why::kError, fmt::format("{}: cannot list: {}", root, ec.message()));
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) {
        job.skipped.push_back(fmt::format("{}: {}", root, ec.message()));
        ec.clear();
        continue;
      }
      const fs::directory_entry& e = *it;
      const std::string name = e.path().filename().string();
      if (e.is_symlink(ec)) continue;  // links are not followed
      if (e.is_directory(ec)) {
        if (std::find(kSkippedFolders.begin(), kSkippedFolders.end(), name) !=
                kSkippedFolders.end() ||
            it.depth() >= 16) {
          it.disable_recursion_pending();
        }
        continue;
      }
      auto kind = classify_job_file(name);
      if (!kind) continue;
      if (found.size() >= options.max_files) {
        job.skipped.push_back(
            fmt::format("{}: more than {} files; the rest were not read", root, options.max_files));
        break;
      }
      std::string shown = fs::relative(e.path(), fs::path(root), ec).string();
      if (ec || shown.empty()) shown = e.path().string();
      if (paths.size() > 1) shown = (fs::path(root) / shown).lexically_normal().string();
      found.push_back(Found{e.path().string(), shown, *kind});
    }
  }
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.shown < b.shown; });
  // Files are independent: workers take them in order from a shared index, and the results
  // land in their sorted places, so the job reads the same whatever the thread count.
  struct Read {
    std::optional<JobFile> file;
    std::string skipped;
  };
  std::vector<Read> reads(found.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex progress_lock;
  auto work = [&] {
    for (size_t i = next++; i < found.size(); i = next++) {
      const Found& f = found[i];
      auto text = read_text(f.path, options.max_file_bytes);
      if (!text) {
        reads[i].skipped = fmt::format("{}: {}", f.shown, text.error().message);
      } else if (text->find('\0', 0) != std::string::npos && text->find('\0') < 8192) {
        reads[i].skipped = fmt::format("{}: binary, not read", f.shown);
      } else {
        FileKind kind = f.kind;
        if (kind == FileKind::kShell && text->starts_with("#!") &&
            text->substr(0, text->find('\n')).find("python") != std::string::npos) {
          kind = FileKind::kPython;
        }
        reads[i].file = read_job_text(f.shown, kind, *text);
      }
      const size_t finished = ++done;
      if (options.progress) {
        std::lock_guard<std::mutex> hold(progress_lock);
        options.progress(finished, found.size());
      }
    }
  };
  unsigned threads = options.threads;
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(found.size() / 4, 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (Read& r : reads) {
    if (r.file) {
      job.files.push_back(std::move(*r.file));
    } else {
      job.skipped.push_back(std::move(r.skipped));
    }
  }
  return job;
}

}  // namespace sparkdoc::job
