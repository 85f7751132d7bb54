#include "hub/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/paths.h"

namespace sparkdoc::hub {
namespace {

constexpr mode_t kFolderMode = 0755;
constexpr size_t kMaxMarkerBytes = 64 * 1024;

// Removes the folder `name` in `parent` and the files in it (a revision folder holds nothing
// else). Best effort: what cannot be removed stays.
void remove_flat_dir(const Dir& parent, const std::string& name) {
  int fd = ::openat(parent.fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  if (DIR* listing = ::fdopendir(fd)) {
    while (struct dirent* e = ::readdir(listing)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      ::unlinkat(::dirfd(listing), e->d_name, 0);
    }
    ::closedir(listing);
  } else {
    ::close(fd);
  }
  ::unlinkat(parent.fd.get(), name.c_str(), AT_REMOVEDIR);
}

Result<Dir> duplicate(const Dir& dir) {
  int fd = ::fcntl(dir.fd.get(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return fail(fmt::format("cannot open {} again: {}", dir.path, std::strerror(errno)));
  return Dir{Fd(fd), dir.path};
}

std::string string_member(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

uint64_t count_member(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

}  // namespace

std::string render_cache_marker(const CacheMarker& m) {
  nlohmann::json j = {
      {"endpoint", m.endpoint},     {"commit", m.commit},
      {"fetched_at", m.fetched_at}, {"shards", m.shards},
      {"body_bytes", m.body_bytes}, {"checkpoint_file_bytes", m.checkpoint_file_bytes}};
  return j.dump(2) + "\n";
}

std::optional<CacheMarker> parse_cache_marker(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return CacheMarker{string_member(j, "endpoint"),   string_member(j, "commit"),
                     string_member(j, "fetched_at"), count_member(j, "shards"),
                     count_member(j, "body_bytes"),  count_member(j, "checkpoint_file_bytes")};
}

Staging::Staging(Dir parent, Dir dir, std::string name)
    : parent_(std::move(parent)), dir_(std::move(dir)), name_(std::move(name)) {}

Staging::Staging(Staging&& other) noexcept
    : parent_(std::move(other.parent_)),
      dir_(std::move(other.dir_)),
      name_(std::move(other.name_)),
      committed_(std::exchange(other.committed_, true)) {}

Staging::~Staging() {
  if (!committed_) remove_flat_dir(parent_, name_);
}

Result<void> Staging::write(std::string_view name, std::string_view contents) {
  return write_new_file(dir_, name, contents);
}

Result<ModelCache> ModelCache::open(const std::string& root, const ModelId& id) {
  auto refuse = [&](const Error& e) {
    return fail(e.why,
                e.message + "; set SPARKDOC_CACHE to a folder of yours for sparkdoc's cache");
  };
  // The root is the user's own path, links and all, as mkdir -p takes it.
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) return refuse(Error{Why::kError, fmt::format("cannot make {}: {}", root, ec.message())});
  auto top = open_dir(root);
  if (!top) return refuse(top.error());
  auto hub = open_or_make_private_dir(*top, "hub", kFolderMode);
  if (!hub) return refuse(hub.error());
  auto model = open_or_make_private_dir(*hub, cache_entry_name(id), kFolderMode);
  if (!model) return refuse(model.error());
  return ModelCache(std::move(*model));
}

std::optional<std::string> ModelCache::complete(std::string_view revision) const {
  auto dir = open_private_dir(dir_, revision, ::geteuid());
  if (!dir) return std::nullopt;
  struct stat st {};
  if (::fstatat(dir->fd.get(), std::string(kMarkerName).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  return dir->path;
}

std::optional<CacheMarker> ModelCache::marker(std::string_view revision) const {
  auto folder = complete(revision);
  if (!folder) return std::nullopt;
  auto text = read_text(join_path(*folder, kMarkerName), kMaxMarkerBytes);
  if (!text) return std::nullopt;
  return parse_cache_marker(*text);
}

Result<Staging> ModelCache::stage(std::string_view revision) const {
  auto parent = duplicate(dir_);
  if (!parent) return tl::unexpected(std::move(parent.error()));
  auto dir = make_new_dir(dir_, fmt::format(".fetch-{}", revision), kFolderMode, true);
  if (!dir) return tl::unexpected(std::move(dir.error()));
  std::string name(file_name(dir->path));
  return Staging(std::move(*parent), std::move(*dir), std::move(name));
}

Result<std::string> ModelCache::commit(Staging& staging, std::string_view revision,
                                       const CacheMarker& marker) const {
  if (auto written = staging.write(kMarkerName, render_cache_marker(marker)); !written) {
    return tl::unexpected(std::move(written.error()));
  }
  const int dir = dir_.fd.get();
  const std::string entry(revision);
  const std::string target = dir_.child(revision);
  if (::renameat(dir, staging.name_.c_str(), dir, entry.c_str()) == 0) {
    staging.committed_ = true;
    return target;
  }
  if (errno != EEXIST && errno != ENOTEMPTY) {
    return fail(fmt::format("cannot put {} in place of {}: {}", staging.path(), target,
                            std::strerror(errno)));
  }
  // An older or unfinished fetch is there: swapped for the new one in one step where the file
  // system can (the staging name then holds the old folder, removed with the Staging), else
  // moved aside first.
  if (::renameat2(dir, staging.name_.c_str(), dir, entry.c_str(), RENAME_EXCHANGE) == 0) {
    return target;
  }
  const std::string aside = fmt::format(".stale-{}-{}", revision, ::getpid());
  if (::renameat(dir, entry.c_str(), dir, aside.c_str()) != 0 ||
      ::renameat(dir, staging.name_.c_str(), dir, entry.c_str()) != 0) {
    return fail(fmt::format("cannot replace {}: {}", target, std::strerror(errno)));
  }
  staging.committed_ = true;
  remove_flat_dir(dir_, aside);
  return target;
}

}  // namespace sparkdoc::hub
