#include "run/log_folder.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <string_view>

#include "core/paths.h"

namespace sparkdoc::run {
namespace {

constexpr std::string_view kRunsFolder = "sparkdoc-runs";
constexpr mode_t kFolderMode = 0755;

tl::unexpected<Error> refuse(const Error& why) {
  return fail(why.why, why.message + "; name a new folder with --log-dir (each run gets its own)");
}

// sparkdoc-runs in the working folder: made, or an existing private one.
Result<Dir> runs_folder(unsigned euid) {
  auto cwd = open_dir(".");
  if (!cwd) return tl::unexpected(std::move(cwd.error()));
  auto runs = open_private_dir(*cwd, kRunsFolder, euid);
  if (!runs && runs.error().why == Why::kAbsent) {
    runs = make_new_dir(*cwd, kRunsFolder, kFolderMode, false);
  }
  return runs;
}

// DIR as given: made new, or an existing private and empty one.
Result<Dir> given_folder(const std::string& log_dir, unsigned euid) {
  const std::string parent = parent_path(log_dir);
  const std::string name(file_name(log_dir));
  // The parents are the user's own path, links and all, as mkdir -p takes it.
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) return fail(fmt::format("cannot make the folder {}: {}", parent, ec.message()));
  auto above = open_dir(parent);
  if (!above) return tl::unexpected(std::move(above.error()));
  auto existing = open_private_dir(*above, name, euid);
  if (!existing) {
    if (existing.error().why != Why::kAbsent) return tl::unexpected(std::move(existing.error()));
    return make_new_dir(*above, name, kFolderMode, false);
  }
  auto empty = is_empty_dir(*existing);
  if (!empty) return tl::unexpected(std::move(empty.error()));
  if (!*empty) return fail(fmt::format("{} is not empty", existing->path));
  return existing;
}

}  // namespace

std::string run_folder_name(std::time_t now, pid_t pid) {
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return fmt::format("{}-{}", stamp, pid);
}

Result<Dir> make_log_folder(const std::string& log_dir, unsigned euid) {
  if (!log_dir.empty()) {
    auto folder = given_folder(log_dir, euid);
    if (!folder) return refuse(folder.error());
    return folder;
  }
  auto runs = runs_folder(euid);
  if (!runs) return refuse(runs.error());
  auto folder =
      make_new_dir(*runs, run_folder_name(std::time(nullptr), ::getpid()), kFolderMode, true);
  if (!folder) return refuse(folder.error());
  return folder;
}

}  // namespace sparkdoc::run
