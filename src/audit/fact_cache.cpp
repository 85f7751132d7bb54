#include "audit/fact_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <exception>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/cache_dir.h"
#include "core/fs.h"
#include "core/json.h"

namespace sparkdoc::audit {
namespace {

using nlohmann::json;

// Bumped whenever what a file's entry means changes; the sparkdoc version in the key already
// separates releases, this separates builds of one version during development.
// 2: code groups name the targets whose cubins hold the sm120-only guard (elf/guards.h).
constexpr int kFormat = 2;
constexpr std::string_view kFolderName = "audit";
constexpr mode_t kFolderMode = 0700;
constexpr mode_t kFileMode = 0600;

json stamp_json(const FileStamp& s) {
  return json::array({s.device, s.inode, s.size, s.mtime_ns, s.ctime_ns});
}

// A target as its two numbers: cuobjdump's names do not spell every SM a header may hold.
json target_json(GpuTarget t) {
  return json::array({t.sm, static_cast<int>(t.variant)});
}

// An entry's object, begun with its name (as `member`) and its stamp.
json entry_head(const char* member, std::string_view name, const FileStamp& stamp) {
  json j = json::object();
  j[member] = name;
  j["stamp"] = stamp_json(stamp);
  return j;
}

// A list of names as `member`, left out when empty.
void put_names(json& j, const char* member, const std::vector<std::string>& names) {
  if (!names.empty()) j[member] = names;
}

json entry_json(std::string_view file, const CachedFile& c) {
  json j = entry_head("file", file, c.stamp);
  const FileFacts& f = c.facts;
  if (f.machine) {
    j["machine"] = json::array({f.machine->elf_class, f.machine->byte_order, f.machine->machine});
  }
  put_names(j, "needed", f.needed);
  put_names(j, "rpath", f.rpath);
  put_names(j, "runpath", f.runpath);
  if (!f.gpu_code.empty()) {
    json groups = json::array();
    for (const CodeGroup& g : f.gpu_code) {
      json sass = json::array();
      for (GpuTarget t : g.sass) sass.push_back(target_json(t));
      json ptx = json::array();
      for (const PtxEntry& p : g.ptx) {
        json e = target_json(p.target);
        e.push_back(p.isa);
        ptx.push_back(std::move(e));
      }
      json group = json::object();
      group["sass"] = std::move(sass);
      group["ptx"] = std::move(ptx);
      group["containers"] = g.containers;
      if (!g.sm120_only.empty()) {
        json guarded = json::array();
        for (GpuTarget t : g.sm120_only) guarded.push_back(target_json(t));
        group["sm120_only"] = std::move(guarded);
      }
      groups.push_back(std::move(group));
    }
    j["gpu"] = std::move(groups);
  }
  return j;
}

json folder_json(std::string_view folder, const FolderListing& l) {
  json j = entry_head("folder", folder, l.stamp);
  put_names(j, "folders", l.folders);
  put_names(j, "files", l.files);
  return j;
}

json record_json(std::string_view record, const RecordListing& l) {
  json j = entry_head("record", record, l.stamp);
  put_names(j, "files", l.files);
  return j;
}

// Errors are thrown inside the parse (JsonRangeError, nlohmann's) and caught at its edge.
[[noreturn]] void bad(const std::string& what) {
  throw JsonRangeError("", what);
}

const json& at(const json& j, size_t i) {
  if (!j.is_array() || i >= j.size()) bad("expected an array of " + std::to_string(i + 1));
  return j[i];
}

GpuTarget target_from(const json& j) {
  GpuTarget t;
  t.sm = json_get<uint32_t>(at(j, 0));
  const auto variant = json_get<uint8_t>(at(j, 1));
  if (variant > static_cast<uint8_t>(ArchVariant::kFamilySpecific)) bad("no such variant");
  t.variant = static_cast<ArchVariant>(variant);
  return t;
}

std::vector<std::string> strings_member(const json& j, std::string_view key) {
  return json_member(j, key, std::vector<std::string>{});
}

FileStamp stamp_from(const json& j) {
  auto s = j.find("stamp");
  if (s == j.end() || !s->is_array() || s->size() != 5) bad("a stamp is not 5 numbers");
  return FileStamp{json_get<uint64_t>((*s)[0]), json_get<uint64_t>((*s)[1]),
                   json_get<int64_t>((*s)[2]), json_get<int64_t>((*s)[3]),
                   json_get<int64_t>((*s)[4])};
}

std::pair<std::string, FolderListing> folder_from(const json& j) {
  if (!j.is_object() || !j.contains("folder")) bad("a folder entry without its folder");
  FolderListing l;
  l.stamp = stamp_from(j);
  l.folders = strings_member(j, "folders");
  l.files = strings_member(j, "files");
  return {json_member(j, "folder", std::string()), std::move(l)};
}

std::pair<std::string, RecordListing> record_from(const json& j) {
  if (!j.is_object()) bad("a record entry is not an object");
  auto record = json_member(j, "record", std::string());
  if (record.empty()) bad("a record entry without its folder");
  RecordListing l;
  l.stamp = stamp_from(j);
  l.files = strings_member(j, "files");
  return {std::move(record), std::move(l)};
}

std::pair<std::string, CachedFile> entry_from(const json& j) {
  if (!j.is_object()) bad("a file entry is not an object");
  auto file = json_member(j, "file", std::string());
  if (file.empty()) bad("a file entry without its file");
  CachedFile c;
  c.stamp = stamp_from(j);
  if (auto m = j.find("machine"); m != j.end()) {
    if (!m->is_array() || m->size() != 3) bad("a machine is not 3 numbers");
    c.facts.machine = elf::ElfMachine{json_get<uint8_t>((*m)[0]), json_get<uint8_t>((*m)[1]),
                                      json_get<uint16_t>((*m)[2])};
  }
  c.facts.needed = strings_member(j, "needed");
  c.facts.rpath = strings_member(j, "rpath");
  c.facts.runpath = strings_member(j, "runpath");
  if (auto groups = j.find("gpu"); groups != j.end()) {
    if (!groups->is_array()) bad("gpu is not an array");
    for (const json& g : *groups) {
      if (!g.is_object()) bad("a code group is not an object");
      CodeGroup group;
      for (const json& t : json_member(g, "sass", json::array()))
        group.sass.push_back(target_from(t));
      for (const json& p : json_member(g, "ptx", json::array())) {
        group.ptx.push_back(PtxEntry{target_from(p), json_get<std::string>(at(p, 2))});
      }
      group.containers = json_member(g, "containers", uint32_t{0});
      for (const json& t : json_member(g, "sm120_only", json::array()))
        group.sm120_only.push_back(target_from(t));
      c.facts.gpu_code.push_back(std::move(group));
    }
  }
  return {std::move(file), std::move(c)};
}

// The cache folder under `root`, read-only: nothing is made.
Result<Dir> open_folder(const std::string& root) {
  auto top = open_dir(root);
  if (!top) return top;
  return open_private_dir(*top, kFolderName, ::geteuid());
}

}  // namespace

std::string fact_cache_file_name(const FactCacheKey& key) {
  uint64_t hash = 0xcbf29ce484222325;  // FNV-1a, 64 bits
  auto add = [&hash](std::string_view s) {
    for (char c : s) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3;
    }
    hash ^= 0xff;  // a separator no path or name holds
    hash *= 0x100000001b3;
  };
  add(std::to_string(kFormat));
  add(key.site_packages);
  add(key.architecture);
  add(key.sparkdoc_version);
  return fmt::format("{:016x}.json", hash);
}

std::string render_fact_cache(const FactCacheKey& key, const AuditCache& cache) {
  // Entry by entry, so that no document of every entry is ever held: the text is all there is.
  json head = {{"format", kFormat},
               {"sparkdoc", key.sparkdoc_version},
               {"site_packages", key.site_packages},
               {"architecture", key.architecture}};
  std::string out = head.dump(-1, ' ', false, json::error_handler_t::replace);
  out.pop_back();  // the closing brace: the lists follow
  auto list = [&out](std::string_view name, const auto& entries, const auto& to_json) {
    out += fmt::format(",\"{}\":[", name);
    bool first = true;
    for (const auto& [name_in_list, entry] : entries) {
      out += first ? "\n" : ",\n";
      first = false;
      out += to_json(name_in_list, entry).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    out += "\n]";
  };
  list("folders", cache.index.folders, folder_json);
  list("records", cache.index.records, record_json);
  list("files", cache.files, entry_json);
  out += "}\n";
  return out;
}

namespace {

// A file's bytes through a buffer of 64 KB, as nlohmann's parser takes its input: one character
// at a time through an input iterator. The cache file is streamed, never held whole (its text
// is half a MB for a full CUDA stack, which check's resident set would carry at its peak).
class FileChars {
 public:
  explicit FileChars(int fd) : fd_(fd) {}
  bool next(char& c) {
    if (at_ == end_) {
      ssize_t n;
      do {
        n = ::read(fd_, buffer_, sizeof buffer_);
      } while (n < 0 && errno == EINTR);
      if (n < 0) failed_ = true;
      if (n <= 0) return false;
      total_ += static_cast<size_t>(n);
      if (total_ > kMaxCacheBytes) {
        failed_ = true;
        return false;
      }
      at_ = 0;
      end_ = static_cast<size_t>(n);
    }
    c = buffer_[at_++];
    return true;
  }
  bool failed() const { return failed_; }

 private:
  int fd_;
  char buffer_[64 * 1024];
  size_t at_ = 0;
  size_t end_ = 0;
  size_t total_ = 0;
  bool failed_ = false;
};

class CharIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  CharIterator() = default;  // the end
  explicit CharIterator(FileChars* chars) : chars_(chars) { ++*this; }
  reference operator*() const { return c_; }
  CharIterator& operator++() {
    if (chars_ != nullptr && !chars_->next(c_)) chars_ = nullptr;
    return *this;
  }
  bool operator==(const CharIterator& other) const { return chars_ == other.chars_; }

 private:
  FileChars* chars_ = nullptr;
  char c_ = 0;
};

// parse_fact_cache over any input iterators of characters.
template <class Iterator>
Result<AuditCache> parse_chars(Iterator first, Iterator last, const FactCacheKey& key) {
  AuditCache cache;
  std::string member;  // the top-level member being parsed
  std::string error;
  auto add = [](auto& map, auto&& entry) {
    if (map.size() >= kMaxCacheEntries) bad("more entries than the limit");
    if (!map.emplace(std::move(entry.first), std::move(entry.second)).second) {
      bad("an entry listed twice");
    }
  };
  // Each entry is taken as soon as it is parsed and dropped from the document, so that memory
  // holds one entry's JSON at a time, not the whole file's (a few MB for a full CUDA stack).
  auto take = [&](int depth, json::parse_event_t event, json& parsed) {
    if (!error.empty()) return false;
    try {
      if (depth == 1 && event == json::parse_event_t::key) {
        member = parsed.get<std::string>();
      } else if (depth == 2 && event == json::parse_event_t::object_end) {
        if (member == "files") {
          add(cache.files, entry_from(parsed));
        } else if (member == "folders") {
          add(cache.index.folders, folder_from(parsed));
        } else if (member == "records") {
          add(cache.index.records, record_from(parsed));
        } else {
          return true;
        }
        return false;
      }
    } catch (const std::exception& e) {
      error = e.what();
      return false;
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(std::move(first), std::move(last), take, false);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty()) return fail("the audit cache is damaged: " + error);
  if (doc.is_discarded() || !doc.is_object()) return fail("the audit cache is not a JSON object");
  try {
    if (json_member(doc, "format", 0) != kFormat)
      return fail("the audit cache is of another format");
    // Every entry was taken out as it was parsed: anything left in a list is no entry.
    for (const char* list : {"folders", "records", "files"}) {
      auto it = doc.find(list);
      if (it == doc.end() || !it->is_array() || !it->empty()) {
        return fail(fmt::format("the audit cache's {} are not a list of entries", list));
      }
    }
    const FactCacheKey found{json_member(doc, "site_packages", std::string()),
                             json_member(doc, "architecture", std::string()),
                             json_member(doc, "sparkdoc", std::string())};
    if (found != key) return fail("the audit cache is another folder's or version's");
  } catch (const std::exception& e) {
    return fail(std::string("the audit cache is damaged: ") + e.what());
  }
  return cache;
}

}  // namespace

Result<AuditCache> parse_fact_cache(std::string_view text, const FactCacheKey& key) {
  if (text.size() > kMaxCacheBytes) return fail("the audit cache is larger than its limit");
  return parse_chars(text.begin(), text.end(), key);
}

Result<AuditCache> load_fact_cache(const std::string& root, const FactCacheKey& key) {
  auto folder = open_folder(root);
  if (!folder) return tl::unexpected(std::move(folder.error()));
  auto fd = open_private_file(*folder, fact_cache_file_name(key), kMaxCacheBytes, ::geteuid());
  if (!fd) return tl::unexpected(std::move(fd.error()));
  auto chars = std::make_unique<FileChars>(fd->get());
  auto cache = parse_chars(CharIterator(chars.get()), CharIterator(), key);
  if (chars->failed()) return fail("the audit cache could not be read to its end");
  return cache;
}

Result<void> store_fact_cache(const std::string& root, const FactCacheKey& key,
                              const AuditCache& cache) {
  auto top = open_cache_root(root);
  if (!top) return tl::unexpected(std::move(top.error()));
  auto folder = open_or_make_private_dir(*top, kFolderName, kFolderMode);
  if (!folder) return tl::unexpected(std::move(folder.error()));
  const std::string name = fact_cache_file_name(key);
  // In a folder only this user can write, a link or FIFO at the name is this user's leftover:
  // removed (the link itself, never its target) so that the cache can be written again.
  struct stat st {};
  if (::fstatat(folder->fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    ::unlinkat(folder->fd.get(), name.c_str(), 0);
  }
  return write_file_in(*folder, name, render_fact_cache(key, cache), kFileMode);
}

}  // namespace sparkdoc::audit
