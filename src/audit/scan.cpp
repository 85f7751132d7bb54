#include "audit/scan.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

#include "core/paths.h"
#include "core/strings.h"
#include "pyenv/dist_info.h"

namespace sparkdoc::audit {
namespace {

constexpr int kMaxDepth = 32;

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The listing of the folder at machine path `dir`, read; nullopt when it cannot be listed.
std::optional<FolderListing> read_listing(const Root& root, const std::string& dir) {
  auto entries = list_dir_entries(root.path(dir));
  if (!entries) return std::nullopt;
  FolderListing listing;
  for (DirEntry& e : *entries) {
    if (e.type == EntryType::kDir) {
      listing.folders.push_back(std::move(e.name));
    } else if (e.type == EntryType::kFile && is_shared_object_name(e.name)) {
      listing.files.push_back(std::move(e.name));
    }
  }
  return listing;
}

// What is taken of the file or folder at `path`: the cached listing when it holds the same
// stamp, else what `read` reads (nullopt: nothing could be read), kept when it may be.
// `member` picks the map (folders or records) of an IndexCache.
template <class Listing, class Read>
std::optional<Listing> take(IndexCaching* caching,
                            std::map<std::string, Listing, std::less<>> IndexCache::*member,
                            const std::string& key, const std::string& path, const Read& read) {
  if (caching == nullptr) return read();
  auto& next = caching->next->*member;
  if (caching->cached != nullptr && caching->cached_verified) {
    auto& cached = caching->cached->*member;
    if (auto it = cached.find(key); it != cached.end()) {
      ++caching->taken;
      return next.insert(cached.extract(it)).position->second;
    }
  }
  const std::optional<FileStamp> before = stamp_of(path);
  if (caching->cached != nullptr && before) {
    auto& cached = caching->cached->*member;
    if (auto it = cached.find(key); it != cached.end() && it->second.stamp == *before) {
      ++caching->taken;
      // The node itself moves: neither its name nor its listing is copied.
      return next.insert(cached.extract(it)).position->second;
    }
  }
  std::optional<Listing> listing = read();
  ++caching->read;
  if (listing && settled(before, stamp_of(path), caching->settled_before_ns)) {
    listing->stamp = *before;
    next.insert_or_assign(key, *listing);
    caching->kept_new = true;
  }
  return listing;
}

void walk(const Root& root, IndexCaching* caching, const std::string& dir,
          const std::string& relative, int depth, std::vector<std::string>& files,
          std::vector<std::string>& metadata) {
  if (depth > kMaxDepth) return;
  auto listing = take(caching, &IndexCache::folders, relative, root.path(dir),
                      [&] { return read_listing(root, dir); });
  if (!listing) return;
  for (const std::string& name : listing->files) {
    files.push_back(relative.empty() ? name : relative + "/" + name);
  }
  for (const std::string& name : listing->folders) {
    std::string rel = relative.empty() ? name : relative + "/" + name;
    if (depth == 0 && (name.ends_with(".dist-info") || name.ends_with(".egg-info"))) {
      metadata.push_back(name);
    } else if (name != "__pycache__") {
      walk(root, caching, join_path(dir, name), rel, depth + 1, files, metadata);
    }
  }
}

// The shared objects a RECORD lists, normalised; nullopt when it cannot be read.
std::optional<RecordListing> read_record(const std::string& path) {
  auto record = read_text(path, 64 << 20);
  if (!record) return std::nullopt;
  RecordListing listing;
  for (std::string_view line : split(*record, '\n')) {
    if (line.find(".so") == std::string_view::npos) continue;
    std::string file = record_path(line);
    if (file.empty() || file.starts_with("..") || file.front() == '/') continue;
    if (is_shared_object_name(file_name(file))) listing.files.push_back(normalize_path(file));
  }
  return listing;
}

}  // namespace

bool is_shared_object_name(std::string_view name) {
  size_t so = name.find(".so");
  while (so != std::string_view::npos) {
    std::string_view rest = name.substr(so + 3);
    if (rest.empty()) return so > 0;
    if (rest.front() == '.') {
      bool numeric = true;
      for (std::string_view part : split(rest.substr(1), '.')) numeric &= is_digits(part);
      if (numeric && so > 0) return true;
    }
    so = name.find(".so", so + 1);
  }
  return false;
}

std::string record_path(std::string_view line) {
  if (line.empty()) return {};
  if (line.front() != '"') return std::string(line.substr(0, line.find(',')));
  std::string out;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '"') {
      if (i + 1 < line.size() && line[i + 1] == '"') {
        out += '"';
        ++i;
        continue;
      }
      break;
    }
    out += line[i];
  }
  return out;
}

Result<SitePackages> index_site_packages(const Root& root, const std::string& dir,
                                         IndexCaching* caching) {
  if (!is_dir(root.path(dir))) {
    auto listed = list_dir(root.path(dir));
    if (!listed) return tl::unexpected(std::move(listed.error()));
    return fail(Why::kError, dir + " is not a folder");
  }
  SitePackages site;
  site.dir = dir;
  std::vector<std::string> metadata;
  walk(root, caching, dir, "", 0, site.files, metadata);
  std::sort(site.files.begin(), site.files.end());
  std::sort(metadata.begin(), metadata.end());
  for (const std::string& folder : metadata) {
    Owner owner;
    if (auto nv = pyenv::parse_dist_folder(folder)) {
      owner = Owner{nv->name, nv->version};
    } else {
      for (const char* file : {"/METADATA", "/PKG-INFO"}) {
        auto text = read_text(root.path(join_path(dir, folder) + file), 1 << 20);
        if (!text) continue;
        if (auto meta = pyenv::parse_metadata(*text)) owner = Owner{meta->name, meta->version};
        break;
      }
    }
    if (owner.name.empty()) continue;
    // RECORD lists every installed file; only shared objects matter here.
    const std::string record = root.path(join_path(dir, folder) + "/RECORD");
    auto listed =
        take(caching, &IndexCache::records, folder, record, [&] { return read_record(record); });
    if (listed) {
      for (const std::string& path : listed->files) site.owner.emplace(path, owner.name);
    }
    site.distributions.emplace(owner.name, std::move(owner));
  }
  return site;
}

std::string owner_of(const SitePackages& site, const std::string& relative) {
  if (auto it = site.owner.find(relative); it != site.owner.end()) return it->second;
  size_t slash = relative.find('/');
  std::string top = relative.substr(0, slash == std::string::npos ? relative.find('.') : slash);
  // Another file under the same top folder that a RECORD names tells whose folder it is.
  auto it = site.owner.lower_bound(top + "/");
  if (slash != std::string::npos && it != site.owner.end() && it->first.starts_with(top + "/")) {
    return it->second;
  }
  return top;
}

bool import_is_guarded(std::string_view source, std::string_view module) {
  const std::string statement = "import " + std::string(module);
  bool guarded = false;
  std::string_view previous;  // the last line that was not blank, stripped
  for (std::string_view line : split(source, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view stripped = trim(line);
    if (stripped.empty()) continue;
    if (stripped == statement) {
      if (line.front() != ' ' && line.front() != '\t') return false;  // a top-level import
      if (previous == "try:") guarded = true;
    }
    previous = stripped;
  }
  return guarded;
}

}  // namespace sparkdoc::audit
