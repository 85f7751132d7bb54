// The native files of a site-packages folder and the distributions that own them, found
// without starting Python: one walk of the folder for shared objects, and each dist-info's
// RECORD for ownership.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "audit/stamp.h"
#include "core/fs.h"
#include "core/result.h"

namespace sparkdoc::audit {

// "x.so", "libfoo.so.13", "libcudnn.so.9.19.0" - the names the loader and Python import;
// not "x.so.bak" or "data.sorted".
bool is_shared_object_name(std::string_view name);

// The first field of a RECORD line (PEP 376 CSV: quoted when it holds a comma or quote).
std::string record_path(std::string_view line);

// A distribution that owns native files, as its metadata folder names it (not the full
// pyenv::Distribution of the Python environment's probe).
struct Owner {
  std::string name;     // as the metadata folder spells it ("flash_attn")
  std::string version;
};

struct SitePackages {
  std::string dir;                  // machine path of the folder
  std::vector<std::string> files;   // shared objects, relative to dir, sorted
  std::map<std::string, std::string> owner;  // relative file -> distribution name
  std::map<std::string, Owner> distributions;  // by name
};

// What the index takes of one folder: the names of its subfolders and of its shared objects, as
// listed under the folder's stamp (an equal stamp: the same names).
struct FolderListing {
  FileStamp stamp;
  std::vector<std::string> folders;
  std::vector<std::string> files;
  bool operator==(const FolderListing&) const = default;
};

// What the index takes of a metadata folder's RECORD: the shared objects it lists, normalised.
struct RecordListing {
  FileStamp stamp;
  std::vector<std::string> files;
  bool operator==(const RecordListing&) const = default;
};

// Listings kept between audits (audit/fact_cache.h), so that an index of an unchanged folder
// stats its folders instead of reading them: on a cold disk a folder's listing is a read of its
// own, and torch alone has over a thousand folders.
struct IndexCache {
  std::map<std::string, FolderListing, std::less<>> folders;  // by path relative to dir; "": dir
  std::map<std::string, RecordListing, std::less<>> records;  // by metadata folder name
  bool operator==(const IndexCache&) const = default;
};

// How index_site_packages uses and fills an IndexCache, and what it did.
struct IndexCaching {
  // Listings to take where the stamp is the same; each one taken moves from here to `next`,
  // so that no listing is held twice.
  IndexCache* cached = nullptr;
  IndexCache* next = nullptr;     // receives every listing taken or read that may be kept
  // Every listing in `cached` was stamped just before the index and holds its stamp still
  // (audit.cpp drops those that do not): each is then taken without a stat of its own.
  bool cached_verified = false;
  int64_t settled_before_ns = 0;  // stamp.h settled()
  size_t read = 0;                // folders listed and RECORDs read
  size_t taken = 0;               // listings taken from `cached`
  bool kept_new = false;          // a listing read now went into `next`
};

// Walks `dir` (a machine path opened through root): every regular file with a shared-object
// name, below any depth up to 32, except in __pycache__ and metadata folders; symbolic links
// are not followed (the file they name is listed where it lies). With `caching`, a folder or
// RECORD whose stamp is the cached one is not read: the result is the same. Errors: the folder
// cannot be listed.
Result<SitePackages> index_site_packages(const Root& root, const std::string& dir,
                                         IndexCaching* caching = nullptr);

// Whether Python source imports `module` only inside a try block: no `import module` at the
// top level, and one indented under a `try:` (000 §4's patch of mamba-ssm's
// selective_scan_interface.py has exactly this form).
bool import_is_guarded(std::string_view source, std::string_view module);

// The distribution owning `relative`: its RECORD entry, else the one whose files share the
// first path component ("selective_scan_cuda.cpython-312-x86_64-linux-gnu.so" has none:
// then the file's own name up to the first '.').
std::string owner_of(const SitePackages& site, const std::string& relative);

}  // namespace sparkdoc::audit
