// Where the dynamic loader would find each DT_NEEDED library of an object: glibc's search
// order (ld.so(8); shared/reference/fatbin-and-elf.md §3.3), emulated over a Root so fixture
// trees stand in for machines.
//
//   1. a name with '/' is a path;
//   2. a library already loaded under that soname is reused: for Python extension modules
//      that is what `import torch` loaded first (torch/lib and its preloaded CUDA libraries);
//   3. the object's DT_RPATH when it has no DT_RUNPATH, then its loaders' DT_RPATH up the
//      chain (for an extension module the chain is python, which has none);
//   4. LD_LIBRARY_PATH;
//   5. the object's DT_RUNPATH (its direct needs only);
//   6. /etc/ld.so.cache (entries for this architecture);
//   7. the default directories.
// $ORIGIN and ${ORIGIN} expand to the object's directory. $LIB and $PLATFORM are left as they
// are (no library in a wheel uses them). A file of another ELF class, byte order or machine
// than the loader's is skipped wherever it is found, and the search goes on (elf/machine.h);
// so are ld.so.cache entries whose flags are another architecture's. Not emulated:
// glibc-hwcaps subdirectories (they hold optimised copies of libraries found anyway) and
// -z nodeflib.
//
// A LoaderModel is built once per audit; find() is thread-safe (directory listings are cached
// under a lock, so each directory is listed once however many objects search it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "elf/ld_cache.h"
#include "elf/machine.h"
#include "model/elf.h"

namespace sparkdoc::elf {

// How a library was found. The names leave the process (audit JSON): append only.
enum class FoundVia : uint8_t {
  kNotFound,
  kPath,           // the needed name held a '/'
  kLoaded,         // already in the process under that soname
  kRpath,          // the object's DT_RPATH
  kLdLibraryPath,  // LD_LIBRARY_PATH
  kRunpath,        // the object's DT_RUNPATH
  kLdCache,        // /etc/ld.so.cache
  kDefaultDir,     // the loader's built-in directories
};
std::string_view found_via_name(FoundVia via);  // "rpath", "ld_library_path", ...

struct Resolution {
  std::string soname;
  std::optional<std::string> path;  // machine path; none when not found
  FoundVia via = FoundVia::kNotFound;
  bool operator==(const Resolution&) const = default;
};

// What the dynamic loader's library search reads: the machine, LD_LIBRARY_PATH, ld.so.cache,
// its built-in directories and the libraries the process already holds.
struct LibrarySearch {
  Root root;
  std::string ld_library_path;  // the variable's value; relative entries are ignored
  std::vector<LdCacheEntry> ld_cache;
  int32_t ld_cache_flags = host_ld_cache_flags();  // 0: any entry
  // The loader's own class, byte order and machine: a file of another is skipped. Class 0:
  // any file is taken.
  ElfMachine machine = host_architecture().machine;
  // The built-in directories, in order. Empty: default_directories(multiarch).
  std::vector<std::string> default_dirs;
  // Sonames already in the process, and the files they came from.
  std::map<std::string, std::string> loaded;
  // Machines of files already read, by machine path (the audit's own files): a file named here
  // is judged loadable or not by this, and its header is not read again.
  std::map<std::string, ElfMachine, std::less<>> known_machines;
};

// "/lib/<multiarch>", "/usr/lib/<multiarch>", "/lib", "/usr/lib" (Debian and Ubuntu;
// multiarch "aarch64-linux-gnu" on a Spark), then "/lib64", "/usr/lib64" for other layouts.
std::vector<std::string> default_directories(std::string_view multiarch);

// $ORIGIN and ${ORIGIN} in each entry replaced by `origin` (the object's directory).
std::vector<std::string> expand_origin(const std::vector<std::string>& dirs,
                                       std::string_view origin);

class LoaderModel {
 public:
  explicit LoaderModel(LibrarySearch options);

  // Resolves `soname`, needed by the object at machine path `object_path` whose dynamic
  // section is `object`. `loader_rpaths` are the DT_RPATH lists (already $ORIGIN-expanded) of
  // the objects that loaded it, nearest first; they apply only while the object has no
  // DT_RUNPATH.
  Resolution find(std::string_view object_path, const DynamicInfo& object, std::string_view soname,
                  const std::vector<std::vector<std::string>>& loader_rpaths = {}) const;

  const LibrarySearch& options() const { return options_; }

 private:
  // Whether `dir` (a machine path) holds an entry `name`; directories are listed once.
  bool has(const std::string& dir, std::string_view name) const;
  // Whether the loader would take the file at machine path `path` (not one of another
  // machine); each file's header is read once. A file whose header cannot be read is taken:
  // the loader then fails on it instead of searching on.
  bool loadable(const std::string& path) const;
  // Whether a file exists at machine path `path` (a stale ld.so.cache entry does not); each
  // path is looked up once.
  bool file_exists(const std::string& path) const;
  std::optional<std::string> search(const std::vector<std::string>& dirs,
                                    std::string_view soname) const;

  LibrarySearch options_;
  std::vector<std::string> ld_library_path_;
  std::map<std::string, std::string, std::less<>> cache_;  // soname -> first matching path
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::set<std::string, std::less<>>, std::less<>> listings_;
  // A header is read once even when several threads ask for it at the same time.
  struct Verdict {
    std::once_flag once;
    bool take = true;
  };
  mutable std::map<std::string, std::shared_ptr<Verdict>, std::less<>> loadable_;
  mutable std::map<std::string, bool, std::less<>> exists_;
};

}  // namespace sparkdoc::elf
