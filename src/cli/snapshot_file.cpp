#include "cli/snapshot_file.h"

#include <fmt/format.h>

#include "core/fs.h"
#include "model/snapshot_json.h"

namespace sparkdoc::cli {

Result<Snapshot> load_snapshot_file(const std::string& path) {
  auto text = read_text(path, 256u << 20);
  if (!text) return tl::unexpected(text.error());
  auto parsed = snapshot_from_text(*text);
  if (!parsed) return fail(fmt::format("{}: {}", path, parsed.error().message));
  return parsed;
}

std::string file_label(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace sparkdoc::cli
