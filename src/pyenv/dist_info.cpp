#include "pyenv/dist_info.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "core/fs.h"
#include "core/names.h"
#include "core/paths.h"
#include "core/strings.h"

namespace sparkdoc::pyenv {
namespace {

struct WatchRule {
  std::string_view name;  // normalized
  bool is_prefix;
};

// The one list of distributions the snapshot records. Names are PEP 503 normalized.
constexpr WatchRule kWatched[] = {
    {"torch", false},         {"triton", false},      {"transformers", false},
    {"peft", false},          {"trl", false},         {"accelerate", false},
    {"unsloth", false},       {"unsloth-zoo", false}, {"bitsandbytes", false},
    {"flash-attn", false},    {"xformers", false},    {"mamba-ssm", false},
    {"causal-conv1d", false}, {"vllm", false},        {"deepspeed", false},
    {"safetensors", false},   {"sglang", false},      {"nvidia-", true},
    {"flashinfer-", true},
};

constexpr std::string_view kDistInfo = ".dist-info";
constexpr std::string_view kEggInfo = ".egg-info";
// METADATA's headers come first; the long description after them can be 100 KB.
constexpr size_t kMetadataHeadBytes = 16 * 1024;

bool starts_with_digit(std::string_view s) {
  return !s.empty() && std::isdigit(static_cast<unsigned char>(s.front()));
}

// Up to max_bytes from the start of a regular file; "" when it cannot be read (a FIFO planted
// as METADATA is refused, not waited on).
std::string read_head(const std::string& path, size_t max_bytes) {
  auto fd = open_regular_file(path);
  if (!fd) return "";
  std::string out(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = ::read(fd->get(), out.data() + got, max_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

// For a folder whose name does not say: METADATA (wheels), PKG-INFO (eggs), or the
// .egg-info file itself (distutils wrote a file, not a folder).
std::optional<NameVersion> from_metadata_file(const Root& root, const std::string& location,
                                              bool is_egg) {
  const std::string path = root.path(location);
  std::string text;
  if (!is_egg) {
    text = read_head(join_path(path, "METADATA"), kMetadataHeadBytes);
  } else if (is_dir(path)) {
    text = read_head(join_path(path, "PKG-INFO"), kMetadataHeadBytes);
  } else {
    text = read_head(path, kMetadataHeadBytes);
  }
  return parse_metadata(text);
}

}  // namespace

bool is_watched(std::string_view normalized_name) {
  for (const WatchRule& rule : kWatched) {
    if (rule.is_prefix ? normalized_name.starts_with(rule.name) : normalized_name == rule.name) {
      return true;
    }
  }
  return false;
}

std::optional<NameVersion> parse_dist_folder(std::string_view folder) {
  if (folder.ends_with(kDistInfo)) {
    std::string_view stem = folder.substr(0, folder.size() - kDistInfo.size());
    size_t dash = stem.find('-');
    if (dash == std::string_view::npos || stem.find('-', dash + 1) != std::string_view::npos) {
      return std::nullopt;
    }
    std::string_view name = stem.substr(0, dash);
    std::string_view version = stem.substr(dash + 1);
    if (name.empty() || !starts_with_digit(version)) return std::nullopt;
    return NameVersion{std::string(name), std::string(version)};
  }
  if (folder.ends_with(kEggInfo)) {
    // setuptools writes name-version[-pyX.Y[-platform]], with '-' in the name and version
    // replaced by '_'.
    std::string_view stem = folder.substr(0, folder.size() - kEggInfo.size());
    std::vector<std::string_view> parts = split(stem, '-');
    if (parts.size() < 2 || parts[0].empty() || !starts_with_digit(parts[1])) return std::nullopt;
    if (parts.size() > 2 && !parts[2].starts_with("py")) return std::nullopt;
    return NameVersion{std::string(parts[0]), std::string(parts[1])};
  }
  return std::nullopt;
}

std::optional<NameVersion> parse_metadata(std::string_view text) {
  std::optional<std::string> name, version;
  for (std::string_view line : lines(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) break;  // end of the header block
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string key = to_lower(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    if (key == "name" && !name) name = std::string(value);
    if (key == "version" && !version) version = std::string(value);
  }
  if (!name || !version || name->empty() || version->empty()) return std::nullopt;
  return NameVersion{std::move(*name), std::move(*version)};
}

Result<std::vector<Distribution>> scan_distributions(const Root& root, const std::string& dir) {
  auto names = list_dir(root.path(dir));
  if (!names) return tl::unexpected(std::move(names.error()));
  std::vector<Distribution> out;
  for (const std::string& folder : *names) {
    if (folder.starts_with('~')) continue;
    const bool is_egg = folder.ends_with(kEggInfo);
    if (!is_egg && !folder.ends_with(kDistInfo)) continue;
    const std::string location = join_path(dir, folder);
    std::optional<NameVersion> found = parse_dist_folder(folder);
    if (!found) found = from_metadata_file(root, location, is_egg);
    if (!found) continue;
    std::string name = pep503_name(found->name);
    if (!is_watched(name)) continue;
    out.push_back(Distribution{std::move(name), std::move(found->version), location});
  }
  return out;
}

}  // namespace sparkdoc::pyenv
