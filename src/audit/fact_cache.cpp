#include "audit/fact_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "core/bytes.h"
#include "core/cache_dir.h"
#include "core/fs.h"

namespace sparkdoc::audit {
namespace {

// Bumped whenever what a file's entry means changes; the sparkdoc version in the key already
// separates releases, this separates builds of one version during development.
// 2: code groups name the targets whose cubins hold the sm120-only guard (elf/guards.h).
// 3: the binary layout below (2 was JSON: nlohmann's parse of a full CUDA stack's 1 MB took
//    30 ms of a 58-73 ms warm check on an H200; this one's takes 4 ms).
constexpr uint32_t kFormat = 3;
constexpr std::string_view kMagic = "sparkdoc audit cache\n";
constexpr std::string_view kFolderName = "audit";
constexpr mode_t kFolderMode = 0700;
constexpr mode_t kFileMode = 0600;

// The layout, every number little-endian whatever the machine:
//   magic, u32 format, str site_packages, str architecture, str sparkdoc version,
//   u32 n, n x folder:  str folder, stamp, names folders, names files
//   u32 n, n x record:  str record, stamp, names files
//   u32 n, n x file:    str file, stamp, u8 has_machine [u8 class, u8 byte order, u16 machine],
//                       names needed, names rpath, names runpath,
//                       u32 n, n x group: targets sass, u32 n, n x (target, str isa),
//                                         u32 containers, targets sm120_only
//   u64 FNV-1a of every byte before it.
// str: u32 length and the bytes (names as the file system spells them, UTF-8 or not); names:
// u32 n and n str; stamp: u64 device, u64 inode, i64 size, i64 mtime_ns, i64 ctime_ns;
// target: u32 sm, u8 variant.

// FNV-1a, 64 bits, continued from `hash`.
uint64_t fnv1a(std::string_view bytes, uint64_t hash = 0xcbf29ce484222325) {
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3;
  }
  return hash;
}

class Writer {
 public:
  template <class T>
  void number(T value) {
    bytes::append_le(out_, value);
  }
  void count(size_t n) { number(static_cast<uint32_t>(n)); }
  void str(std::string_view s) {
    count(s.size());
    out_ += s;
  }
  void names(const std::vector<std::string>& list) {
    count(list.size());
    for (const std::string& s : list) str(s);
  }
  void stamp(const FileStamp& s) {
    number(s.device);
    number(s.inode);
    number(s.size);
    number(s.mtime_ns);
    number(s.ctime_ns);
  }
  void target(GpuTarget t) {
    number(t.sm);
    number(static_cast<uint8_t>(t.variant));
  }
  void targets(const std::vector<GpuTarget>& list) {
    count(list.size());
    for (GpuTarget t : list) target(t);
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

void put_file(Writer& w, const CachedFile& c) {
  w.stamp(c.stamp);
  const FileFacts& f = c.facts;
  w.number(static_cast<uint8_t>(f.machine ? 1 : 0));
  if (f.machine) {
    w.number(f.machine->elf_class);
    w.number(f.machine->byte_order);
    w.number(f.machine->machine);
  }
  w.names(f.needed);
  w.names(f.rpath);
  w.names(f.runpath);
  w.count(f.gpu_code.size());
  for (const CodeGroup& g : f.gpu_code) {
    w.targets(g.sass);
    w.count(g.ptx.size());
    for (const PtxEntry& p : g.ptx) {
      w.target(p.target);
      w.str(p.isa);
    }
    w.number(g.containers);
    w.targets(g.sm120_only);
  }
}

// Reads the layout above; every read is bounded by the bytes left, and the first that is not
// sets the error and reads nothing more (each later read then gives zeros and empties).
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  const std::string& error() const { return error_; }
  bool ok() const { return error_.empty(); }
  bool at_end() const { return rest_.empty(); }
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    rest_ = {};
  }
  template <class T>
  T number() {
    static_assert(std::is_integral_v<T>);
    if (rest_.size() < sizeof(T)) {
      fail("it ends early");
      return T{};
    }
    const auto u = bytes::load_le<std::make_unsigned_t<T>>(
        std::as_bytes(std::span<const char>(rest_.data(), sizeof(T))), 0);
    rest_.remove_prefix(sizeof(T));
    return static_cast<T>(u);
  }
  // A count of items of at least `min_bytes` each: never more than the bytes left could hold,
  // so that no damaged count makes a large allocation.
  size_t count(size_t min_bytes) {
    const auto n = number<uint32_t>();
    if (n > rest_.size() / std::max<size_t>(min_bytes, 1) || n > kMaxCacheEntries) {
      fail("a count larger than what follows");
      return 0;
    }
    return n;
  }
  std::string str() {
    const auto n = number<uint32_t>();
    if (n > rest_.size()) {
      fail("a name longer than what follows");
      return {};
    }
    std::string s(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return s;
  }
  std::vector<std::string> names() {
    std::vector<std::string> out(count(sizeof(uint32_t)));
    for (std::string& s : out) s = str();
    return out;
  }
  FileStamp stamp() {
    FileStamp s;
    s.device = number<uint64_t>();
    s.inode = number<uint64_t>();
    s.size = number<int64_t>();
    s.mtime_ns = number<int64_t>();
    s.ctime_ns = number<int64_t>();
    return s;
  }
  GpuTarget target() {
    GpuTarget t;
    t.sm = number<uint32_t>();
    const auto variant = number<uint8_t>();
    if (variant > static_cast<uint8_t>(ArchVariant::kFamilySpecific)) fail("no such variant");
    t.variant = static_cast<ArchVariant>(variant);
    return t;
  }
  std::vector<GpuTarget> targets() {
    std::vector<GpuTarget> out(count(5));
    for (GpuTarget& t : out) t = target();
    return out;
  }

 private:
  std::string_view rest_;
  std::string error_;
};

CachedFile take_file(Reader& r) {
  CachedFile c;
  c.stamp = r.stamp();
  FileFacts& f = c.facts;
  const auto has_machine = r.number<uint8_t>();
  if (has_machine > 1) r.fail("a machine flag that is neither 0 nor 1");
  if (has_machine == 1) {
    elf::ElfMachine m;
    m.elf_class = r.number<uint8_t>();
    m.byte_order = r.number<uint8_t>();
    m.machine = r.number<uint16_t>();
    f.machine = m;
  }
  f.needed = r.names();
  f.rpath = r.names();
  f.runpath = r.names();
  // The least a group takes: four empty lists' counts and its containers.
  f.gpu_code.resize(r.count(16));
  for (CodeGroup& g : f.gpu_code) {
    g.sass = r.targets();
    g.ptx.resize(r.count(9));
    for (PtxEntry& p : g.ptx) {
      p.target = r.target();
      p.isa = r.str();
    }
    g.containers = r.number<uint32_t>();
    g.sm120_only = r.targets();
  }
  return c;
}

// Each of a list's entries into `map` by its name: an entry listed twice is damage.
template <class Map, class Take>
void take_list(Reader& r, size_t min_bytes, Map& map, const Take& take) {
  const size_t n = r.count(min_bytes);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    std::string name = r.str();
    auto entry = take(r);
    if (!r.ok()) return;
    if (!map.emplace(std::move(name), std::move(entry)).second) r.fail("an entry listed twice");
  }
}

// The cache folder under `root`, read-only: nothing is made.
Result<Dir> open_folder(const std::string& root) {
  auto top = open_dir(root);
  if (!top) return top;
  return open_private_dir(*top, kFolderName, ::geteuid());
}

}  // namespace

std::string fact_cache_file_name(const FactCacheKey& key) {
  uint64_t hash = fnv1a({});
  auto add = [&hash](std::string_view s) {
    hash = fnv1a(s, hash);
    hash = fnv1a("\xff", hash);  // a separator no path or name holds
  };
  add(std::to_string(kFormat));
  add(key.site_packages);
  add(key.architecture);
  add(key.sparkdoc_version);
  return fmt::format("{:016x}.bin", hash);
}

std::string render_fact_cache(const FactCacheKey& key, const AuditCache& cache) {
  Writer w;
  w.bytes() += kMagic;
  w.number(kFormat);
  w.str(key.site_packages);
  w.str(key.architecture);
  w.str(key.sparkdoc_version);
  // Each list as its count, then each entry's name and what `put` writes of it.
  auto list = [&w](const auto& entries, const auto& put) {
    w.count(entries.size());
    for (const auto& [name, entry] : entries) {
      w.str(name);
      put(entry);
    }
  };
  list(cache.index.folders, [&w](const FolderListing& l) {
    w.stamp(l.stamp);
    w.names(l.folders);
    w.names(l.files);
  });
  list(cache.index.records, [&w](const RecordListing& l) {
    w.stamp(l.stamp);
    w.names(l.files);
  });
  list(cache.files, [&w](const CachedFile& c) { put_file(w, c); });
  w.number(fnv1a(w.bytes()));
  return std::move(w.bytes());
}

Result<AuditCache> parse_fact_cache(std::string_view bytes, const FactCacheKey& key) {
  if (bytes.size() > kMaxCacheBytes) return fail("the audit cache is larger than its limit");
  if (!bytes.starts_with(kMagic)) return fail("the audit cache is not one (no header)");
  if (bytes.size() < kMagic.size() + sizeof(uint32_t) + sizeof(uint64_t)) {
    return fail("the audit cache is damaged: it ends early");
  }
  Reader check(bytes.substr(bytes.size() - sizeof(uint64_t)));
  const std::string_view body = bytes.substr(0, bytes.size() - sizeof(uint64_t));
  Reader r(body.substr(kMagic.size()));
  if (r.number<uint32_t>() != kFormat) return fail("the audit cache is of another format");
  if (check.number<uint64_t>() != fnv1a(body)) {
    return fail("the audit cache is damaged: its checksum differs");
  }
  const FactCacheKey found{r.str(), r.str(), r.str()};
  if (r.ok() && found != key) return fail("the audit cache is another folder's or version's");
  AuditCache cache;
  // The least an entry takes: its name's length, its stamp and its lists' counts.
  take_list(r, 4 + 40 + 8, cache.index.folders, [](Reader& in) {
    FolderListing l;
    l.stamp = in.stamp();
    l.folders = in.names();
    l.files = in.names();
    return l;
  });
  take_list(r, 4 + 40 + 4, cache.index.records, [](Reader& in) {
    RecordListing l;
    l.stamp = in.stamp();
    l.files = in.names();
    return l;
  });
  take_list(r, 4 + 40 + 17, cache.files, take_file);
  if (r.ok() && !r.at_end()) r.fail("bytes after its last entry");
  if (!r.ok()) return fail("the audit cache is damaged: " + r.error());
  return cache;
}

Result<AuditCache> load_fact_cache(const std::string& root, const FactCacheKey& key) {
  auto folder = open_folder(root);
  if (!folder) return tl::unexpected(std::move(folder.error()));
  auto bytes = read_private_file(*folder, fact_cache_file_name(key), kMaxCacheBytes, ::geteuid());
  if (!bytes) return tl::unexpected(std::move(bytes.error()));
  return parse_fact_cache(*bytes, key);
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
