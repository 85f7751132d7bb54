#include "pyenv/torch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "core/cuda_sonames.h"
#include "core/fs.h"
#include "core/strings.h"
#include "elf/dynamic.h"
#include "elf/ld_cache.h"
#include "elf/loader.h"
#include "elf/sections.h"
#include "core/paths.h"

namespace sparkdoc::pyenv {
namespace {

constexpr size_t kVersionPyMaxBytes = 1 << 20;
// The literal is about 40 bytes ("sm_75 ... sm_120"); a run this long is not an arch list.
constexpr size_t kMaxArchListBytes = 512;
// Small enough that the buffer's pages, faulted in once, stay in cache across reads.
constexpr size_t kScanChunkBytes = 1 << 20;
// More than kMaxArchListBytes, so a list cut by a chunk boundary is whole in the next chunk.
constexpr size_t kScanOverlapBytes = 1024;
constexpr uint32_t kShtProgbits = 1;
// Without section headers the whole file has to be read; past this size that would eat the
// check command's budget (a 600 MB file takes a few hundred ms even warm), so such a file is
// reported unscanned instead.
constexpr uint64_t kMaxWholeFileScanBytes = 64 << 20;

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// End of an "sm_90a" or "compute_120" token starting at `i`; 0 when there is none.
size_t token_end(std::string_view bytes, size_t i, bool allow_compute) {
  if (i >= bytes.size()) return 0;
  size_t j = i;
  if (bytes.substr(i).starts_with("sm_")) {
    j += 3;
  } else if (allow_compute && bytes.substr(i).starts_with("compute_")) {
    j += 8;
  } else {
    return 0;
  }
  size_t digits = j;
  while (j < bytes.size() && j - digits < 4 && std::isdigit(static_cast<unsigned char>(bytes[j]))) {
    ++j;
  }
  if (j == digits) return 0;
  if (j < bytes.size() && bytes[j] >= 'a' && bytes[j] <= 'z') ++j;
  return j;
}

// End (the NUL) of an arch list starting at `start`, or 0.
size_t arch_list_end(std::string_view bytes, size_t start) {
  size_t i = start;
  int tokens = 0;
  for (;;) {
    size_t end = token_end(bytes, i, tokens > 0);
    if (end == 0) return 0;
    ++tokens;
    i = end;
    if (i - start > kMaxArchListBytes) return 0;
    if (i < bytes.size() && bytes[i] == ' ') {
      ++i;
      continue;
    }
    break;
  }
  if (tokens < 2 || i >= bytes.size() || bytes[i] != '\0') return 0;
  return i;
}

// One quoted Python string or None; nullopt for None or anything else.
std::optional<std::string> python_literal(std::string_view value) {
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"')) {
    size_t close = value.find(value.front(), 1);
    if (close != std::string_view::npos) return std::string(value.substr(1, close - 1));
  }
  return std::nullopt;
}

struct Needer {
  std::string file;  // torch/lib file name
  elf::DynamicInfo dynamic;
};

// The dynamic loader's search as the audit emulates it (elf/loader.h), for torch's own
// libraries: every file in torch/lib counts as already loaded (torch's libraries are in the
// process before any of them asks), then each needer's RPATH, LD_LIBRARY_PATH, RUNPATH, the
// loader's cache and the default directories.
elf::LoaderModel loader_for(const DiscoveryOptions& options, const std::string& torch_lib,
                            const std::vector<std::string>& torch_lib_names) {
  elf::LibrarySearch o;
  o.root = options.root;
  o.ld_library_path = options.ld_library_path;
  if (options.ld_cache) {
    o.ld_cache = *options.ld_cache;
  } else if (auto cache = elf::read_ld_cache(options.root)) {
    o.ld_cache = std::move(*cache);
  }
  o.ld_cache_flags = options.ld_cache_flags;
  o.machine = options.machine;
  o.default_dirs = elf::default_directories(options.multiarch);
  for (const std::string& name : torch_lib_names) o.loaded.emplace(name, join_path(torch_lib, name));
  return elf::LoaderModel(std::move(o));
}

Reading<std::vector<SonameNeed>> read_cuda_sonames(const DiscoveryOptions& options,
                                                   const std::string& torch_lib) {
  const Root& root = options.root;
  auto names = list_dir(root.path(torch_lib));
  if (!names) {
    return Reading<std::vector<SonameNeed>>::absent(names.error().why, "cannot list " + torch_lib);
  }
  std::vector<Needer> needers;
  for (const std::string& name : *names) {
    if (!name.ends_with(".so") && name.find(".so.") == std::string::npos) continue;
    struct stat st;
    const std::string path = root.path(join_path(torch_lib, name));
    // Links would count one library twice; the file they point at is listed too.
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    auto dynamic = elf::read_dynamic(path);
    if (dynamic) needers.push_back(Needer{name, std::move(*dynamic)});
  }
  std::map<std::string, std::vector<size_t>> needed;  // soname -> needers
  for (size_t i = 0; i < needers.size(); ++i) {
    for (const std::string& soname : needers[i].dynamic.needed) {
      if (!is_cuda_soname(soname)) continue;
      auto& list = needed[soname];
      if (list.empty() || list.back() != i) list.push_back(i);
    }
  }
  std::vector<SonameNeed> out;
  if (needed.empty()) return out;  // a CPU build: no need to read the loader's cache
  const elf::LoaderModel loader = loader_for(options, torch_lib, *names);
  for (const auto& [soname, indexes] : needed) {
    SonameNeed need;
    need.soname = soname;
    for (size_t i : indexes) {
      need.needed_by.push_back(needers[i].file);
      if (!need.found) {
        need.found = loader.find(join_path(torch_lib, needers[i].file), needers[i].dynamic, soname).path;
      }
    }
    out.push_back(std::move(need));
  }
  return out;
}

}  // namespace

TorchVersionFile parse_torch_version_py(std::string_view text) {
  TorchVersionFile out;
  bool seen_hip = false;
  for (std::string_view raw : lines(text)) {
    std::string_view line = trim(raw);
    size_t name_end = 0;
    while (name_end < line.size() && is_word_char(line[name_end])) ++name_end;
    std::string_view name = line.substr(0, name_end);
    std::string_view rest = trim(line.substr(name_end));
    if (name.empty() || rest.empty() || (rest.front() != '=' && rest.front() != ':')) continue;
    size_t eq = rest.find('=');  // after an annotation ("cuda: Optional[str] = ...")
    if (eq == std::string_view::npos || rest.substr(eq).starts_with("==")) continue;
    std::optional<std::string> value = python_literal(trim(rest.substr(eq + 1)));
    if (name == "__version__" && !out.version) {
      out.version = std::move(value);
    } else if (name == "cuda" && !out.has_cuda_line) {
      out.has_cuda_line = true;
      out.cuda = std::move(value);
    } else if (name == "hip" && !seen_hip) {
      seen_hip = true;
      out.hip = std::move(value);
    }
  }
  return out;
}

std::optional<std::string> find_arch_list(std::string_view bytes) {
  std::string_view best;
  // memchr for the '_' of "sm_" runs about ten times faster than memmem for the whole
  // needle (12 GB/s against 1.5 GB/s over libLLVM's 32 MB of .rodata), hits included.
  size_t pos = 2;
  while (pos < bytes.size()) {
    const void* hit = std::memchr(bytes.data() + pos, '_', bytes.size() - pos);
    if (hit == nullptr) break;
    const size_t underscore = static_cast<size_t>(static_cast<const char*>(hit) - bytes.data());
    pos = underscore + 1;
    if (bytes[underscore - 2] != 's' || bytes[underscore - 1] != 'm') continue;
    const size_t start = underscore - 2;
    // The list is a C string of its own: what precedes it ends another string (a NUL) or is
    // other data, never a letter or a space. A space would mean the tail of a longer text
    // ("built for: sm_80 sm_90"), or of a run too long to be a list.
    if (start > 0 && (is_word_char(bytes[start - 1]) || bytes[start - 1] == ' ')) continue;
    const size_t end = arch_list_end(bytes, start);
    if (end == 0) continue;
    if (end - start > best.size()) best = bytes.substr(start, end - start);
    pos = end;
  }
  if (best.empty()) return std::nullopt;
  return std::string(best);
}

Result<std::optional<std::string>> scan_arch_list_file(const std::string& path) {
  auto opened = open_regular_file(path);
  if (!opened) {
    Why why = opened.error().why == Why::kAbsent ? Why::kAbsent : Why::kError;
    return fail(why, opened.error().message);
  }
  const int fd = opened->get();  // closed with `opened` on every way out
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail(fmt::format("cannot stat {}", path));
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [begin, end)
  auto sections = elf::read_sections(path);
  if (sections && !sections->empty()) {
    for (const elf::SectionInfo& s : *sections) {
      if (s.type != kShtProgbits || !s.name.starts_with(".rodata")) continue;
      uint64_t begin = std::min(s.file_offset, file_bytes);
      uint64_t end = s.size_bytes > file_bytes - begin ? file_bytes : begin + s.size_bytes;
      if (end > begin) ranges.emplace_back(begin, end);
    }
  } else if (file_bytes <= kMaxWholeFileScanBytes) {
    ranges.emplace_back(0, file_bytes);
  } else {
    return fail(Why::kNotSupported,
                fmt::format("{} has no section headers and is too large to scan whole", path));
  }
  uint64_t largest = 0;
  for (const auto& [begin, end] : ranges) largest = std::max(largest, end - begin);
  const size_t buffer_bytes =
      static_cast<size_t>(std::min<uint64_t>(kScanChunkBytes, largest)) + kScanOverlapBytes;
  std::unique_ptr<char[]> buffer(new char[buffer_bytes]);
  std::optional<std::string> best;
  for (const auto& [begin, end] : ranges) {
    size_t carried = 0;
    for (uint64_t at = begin; at < end;) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(buffer_bytes - carried, end - at));
      ssize_t got = ::pread(fd, buffer.get() + carried, want, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        int err = errno;
        return fail(fmt::format("cannot read {}: {}", path, std::strerror(err)));
      }
      if (got == 0) break;
      std::string_view view(buffer.get(), carried + static_cast<size_t>(got));
      if (auto found = find_arch_list(view); found && (!best || found->size() > best->size())) {
        best = std::move(found);
      }
      carried = std::min(kScanOverlapBytes, view.size());
      std::memmove(buffer.get(), view.data() + view.size() - carried, carried);
      at += static_cast<uint64_t>(got);
    }
  }
  return best;
}

int cuda_major_of_soname(std::string_view soname) {
  return sparkdoc::cuda_major_of_soname(soname).value_or(0);
}

TorchInfo read_torch(const DiscoveryOptions& options, const std::string& torch_dir) {
  const Root& root = options.root;
  TorchInfo info;
  info.location = torch_dir;
  const std::string version_py = join_path(torch_dir, "version.py");
  bool cpu_build = false;
  auto text = read_text(root.path(version_py), kVersionPyMaxBytes);
  if (!text) {
    std::string detail = fmt::format("cannot read {}", version_py);
    info.version = Reading<std::string>::absent(text.error().why, detail);
    info.cuda = Reading<std::string>::absent(text.error().why, detail);
  } else {
    TorchVersionFile parsed = parse_torch_version_py(*text);
    info.version = parsed.version ? Reading<std::string>(*parsed.version)
                                  : Reading<std::string>::absent(Why::kError,
                                                                 "no __version__ in " + version_py);
    if (parsed.cuda) {
      info.cuda = *parsed.cuda;
    } else if (parsed.has_cuda_line) {
      cpu_build = !parsed.hip;
      info.cuda = Reading<std::string>::absent(
          Why::kAbsent, parsed.hip
                            ? "torch.version.cuda is None: a ROCm build (hip " + *parsed.hip + ")"
                            : std::string("torch.version.cuda is None: a CPU build"));
    } else {
      info.cuda = Reading<std::string>::absent(Why::kError, "no cuda = line in " + version_py);
    }
  }

  const std::string torch_lib = join_path(torch_dir, "lib");
  const std::string python_lib = join_path(torch_lib, "libtorch_python.so");
  if (!options.scan_arch_list) {
    info.arch_list = Reading<std::string>::absent(Why::kAbsent, "not scanned");
  } else {
    auto scanned = scan_arch_list_file(root.path(python_lib));
    if (!scanned) {
      std::string detail;
      switch (scanned.error().why) {
        case Why::kAbsent:
          detail = "no " + python_lib;
          break;
        case Why::kNotSupported:
          detail = "not scanned: " + python_lib + " has no section headers and is too large";
          break;
        default:
          detail = "cannot read " + python_lib;
          break;
      }
      info.arch_list = Reading<std::string>::absent(scanned.error().why, detail);
    } else if (!*scanned) {
      info.arch_list = Reading<std::string>::absent(
          Why::kAbsent,
          fmt::format("no sm_XX arch list in {}{}", python_lib, cpu_build ? " (a CPU build)" : ""));
    } else {
      info.arch_list = std::move(**scanned);
    }
  }
  info.cuda_sonames = read_cuda_sonames(options, torch_lib);
  return info;
}

}  // namespace sparkdoc::pyenv
