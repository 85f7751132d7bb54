#include "elf/loader.h"

#include "core/paths.h"
#include "core/strings.h"

namespace sparkdoc::elf {

std::string_view found_via_name(FoundVia via) {
  switch (via) {
    case FoundVia::kNotFound:
      return "not_found";
    case FoundVia::kPath:
      return "path";
    case FoundVia::kLoaded:
      return "loaded";
    case FoundVia::kRpath:
      return "rpath";
    case FoundVia::kLdLibraryPath:
      return "ld_library_path";
    case FoundVia::kRunpath:
      return "runpath";
    case FoundVia::kLdCache:
      return "ld_cache";
    case FoundVia::kDefaultDir:
      return "default_dir";
  }
  return "not_found";
}

std::vector<std::string> default_directories(std::string_view multiarch) {
  std::vector<std::string> dirs;
  if (!multiarch.empty()) {
    dirs.push_back("/lib/" + std::string(multiarch));
    dirs.push_back("/usr/lib/" + std::string(multiarch));
  }
  for (const char* dir : {"/lib", "/usr/lib", "/lib64", "/usr/lib64"}) dirs.emplace_back(dir);
  return dirs;
}

std::vector<std::string> expand_origin(const std::vector<std::string>& dirs,
                                       std::string_view origin) {
  std::vector<std::string> out;
  out.reserve(dirs.size());
  for (const std::string& dir : dirs) {
    std::string expanded;
    for (size_t i = 0; i < dir.size();) {
      std::string_view rest = std::string_view(dir).substr(i);
      if (rest.starts_with("${ORIGIN}")) {
        expanded += origin;
        i += 9;
      } else if (rest.starts_with("$ORIGIN")) {
        expanded += origin;
        i += 7;
      } else {
        expanded += dir[i++];
      }
    }
    out.push_back(normalize_path(expanded));
  }
  return out;
}

LoaderModel::LoaderModel(LibrarySearch options) : options_(std::move(options)) {
  for (std::string_view dir : split(options_.ld_library_path, ':')) {
    if (!dir.empty() && dir.front() == '/') ld_library_path_.push_back(normalize_path(dir));
  }
  if (options_.default_dirs.empty()) options_.default_dirs = default_directories(host_multiarch());
  for (const LdCacheEntry& entry : options_.ld_cache) {
    if (options_.ld_cache_flags != 0 && entry.flags != options_.ld_cache_flags) continue;
    cache_.emplace(entry.soname, entry.path);  // the first entry wins, as in the loader
  }
}

bool LoaderModel::has(const std::string& dir, std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = listings_.find(dir);
  if (it == listings_.end()) {
    std::set<std::string, std::less<>> names;
    if (auto listed = list_dir(options_.root.path(dir))) {
      names.insert(listed->begin(), listed->end());
    }
    it = listings_.emplace(dir, std::move(names)).first;
  }
  return it->second.count(name) != 0;
}

bool LoaderModel::loadable(const std::string& path) const {
  if (options_.machine.elf_class == 0) return true;
  if (auto it = options_.known_machines.find(path); it != options_.known_machines.end()) {
    return it->second == options_.machine;
  }
  std::shared_ptr<Verdict> verdict;
  {
    std::lock_guard lock(mutex_);
    auto [it, added] = loadable_.try_emplace(path);
    if (added) it->second = std::make_shared<Verdict>();
    verdict = it->second;
  }
  std::call_once(verdict->once, [&] {
    auto machine = read_elf_machine(options_.root.path(path));
    verdict->take = !machine || *machine == options_.machine;
  });
  return verdict->take;
}

bool LoaderModel::file_exists(const std::string& path) const {
  {
    std::lock_guard lock(mutex_);
    if (auto it = exists_.find(path); it != exists_.end()) return it->second;
  }
  const bool there = exists(options_.root.path(path));
  std::lock_guard lock(mutex_);
  exists_.emplace(path, there);
  return there;
}

std::optional<std::string> LoaderModel::search(const std::vector<std::string>& dirs,
                                               std::string_view soname) const {
  for (const std::string& dir : dirs) {
    if (!has(dir, soname)) continue;
    std::string path = join_path(dir == "/" ? "" : dir, soname);
    if (loadable(path)) return path;
  }
  return std::nullopt;
}

Resolution LoaderModel::find(std::string_view object_path, const DynamicInfo& object,
                             std::string_view soname,
                             const std::vector<std::vector<std::string>>& loader_rpaths) const {
  Resolution r;
  r.soname = std::string(soname);
  auto found = [&](std::string path, FoundVia via) {
    r.path = std::move(path);
    r.via = via;
    return r;
  };
  if (soname.find('/') != std::string_view::npos) {
    if (exists(options_.root.path(std::string(soname)))) return found(std::string(soname), FoundVia::kPath);
    return r;
  }
  if (auto it = options_.loaded.find(std::string(soname)); it != options_.loaded.end()) {
    return found(it->second, FoundVia::kLoaded);
  }
  const std::string origin = parent_path(normalize_path(object_path));
  if (object.runpath.empty()) {
    if (auto hit = search(expand_origin(object.rpath, origin), soname)) {
      return found(*hit, FoundVia::kRpath);
    }
    for (const auto& rpath : loader_rpaths) {
      if (auto hit = search(rpath, soname)) return found(*hit, FoundVia::kRpath);
    }
  }
  if (auto hit = search(ld_library_path_, soname)) return found(*hit, FoundVia::kLdLibraryPath);
  if (auto hit = search(expand_origin(object.runpath, origin), soname)) {
    return found(*hit, FoundVia::kRunpath);
  }
  if (auto it = cache_.find(soname); it != cache_.end()) {
    // The cache may be stale (a library removed since ldconfig ran): the loader then fails
    // the open and goes on to the default directories.
    if (file_exists(it->second) && loadable(it->second)) {
      return found(it->second, FoundVia::kLdCache);
    }
  }
  if (auto hit = search(options_.default_dirs, soname)) return found(*hit, FoundVia::kDefaultDir);
  return r;
}

}  // namespace sparkdoc::elf
