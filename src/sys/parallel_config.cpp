#include "sys/parallel_config.h"

#include <array>

#include "core/fs.h"
#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

constexpr size_t kMaxFiles = 200;
constexpr size_t kMaxFileBytes = 1 << 20;
constexpr int kMaxDepth = 2;

// Longest first, so that a key which is a prefix of another never shadows it.
constexpr std::array<std::string_view, 6> kParallelKeys = {
    "tensor_model_parallel_size",
    "tensor_parallel_size",
    "tensor-parallel-size",
    "tensor_parallel",
    "tp_degree",
    "tp_size",
};

constexpr std::array<std::string_view, 8> kConfigSuffixes = {
    ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".sh", ".env",
};

constexpr std::array<std::string_view, 4> kSkippedDirs = {
    "node_modules",
    "__pycache__",
    "site-packages",
    "venv",
};

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool matches_at(std::string_view line, size_t pos, std::string_view key) {
  if (line.size() - pos < key.size()) return false;
  for (size_t k = 0; k < key.size(); ++k) {
    if (lower(line[pos + k]) != key[k]) return false;
  }
  return true;
}

bool is_value_end(char c) {
  return c == ' ' || c == '\t' || c == ',' || c == ';' || c == '#' || c == '}' || c == ']' ||
         c == ')' || c == '\r';
}

// The value after a key ending at pos, or "" when there is none.
std::string_view value_after(std::string_view line, size_t pos, bool is_flag) {
  if (pos < line.size() && (line[pos] == '"' || line[pos] == '\'')) ++pos;  // closes a JSON key
  size_t start = pos;
  while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
  if (pos < line.size() && (line[pos] == ':' || line[pos] == '=')) {
    ++pos;
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
  } else if (!is_flag || pos == start) {
    return {};
  }
  if (pos >= line.size()) return {};
  char quote = line[pos];
  if (quote == '"' || quote == '\'') {
    size_t close = line.find(quote, pos + 1);
    if (close == std::string_view::npos) return {};
    return line.substr(pos + 1, close - pos - 1);
  }
  // A nested block ("tensor_parallel": {"tp_size": 2}) is no value; its own keys are found.
  if (quote == '{' || quote == '[') return {};
  size_t end = pos;
  // A shell expansion "${TP}" ends at its own brace, not at the first '}'.
  if (line.substr(pos).starts_with("${")) {
    size_t close = line.find('}', pos);
    if (close != std::string_view::npos) end = close + 1;
  }
  while (end < line.size() && !is_value_end(line[end])) ++end;
  std::string_view value = line.substr(pos, end - pos);
  // A bare flag followed by another flag has no value of its own.
  if (is_flag && value.starts_with("--")) return {};
  return value;
}

// The line without its comment: a commented-out setting ("# tensor_parallel_size: 4") is not
// in force. YAML, TOML, shell and env files comment with '#' at the start or after whitespace;
// INI files also with ';' at the start. A '#' inside a quoted value is rare enough to ignore.
std::string_view strip_line_comment(std::string_view line) {
  std::string_view body = trim(line);
  if (body.starts_with('#') || body.starts_with(';')) return {};
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '#' && (line[i - 1] == ' ' || line[i - 1] == '\t')) return line.substr(0, i);
  }
  return line;
}

void find_in_line(std::string_view full_line, unsigned line_no,
                  std::vector<ParallelConfigHit>& out) {
  std::string_view line = strip_line_comment(full_line);
  size_t pos = 0;
  while (pos < line.size()) {
    if (lower(line[pos]) != 't' || (pos > 0 && is_word_char(line[pos - 1]))) {
      ++pos;
      continue;
    }
    std::string_view key;
    for (std::string_view k : kParallelKeys) {
      size_t end = pos + k.size();
      if (matches_at(line, pos, k) &&
          (end == line.size() || (!is_word_char(line[end]) && line[end] != '-'))) {
        key = k;
        break;
      }
    }
    if (key.empty()) {
      ++pos;
      continue;
    }
    bool is_flag = pos >= 2 && line[pos - 1] == '-' && line[pos - 2] == '-';
    std::string_view value = value_after(line, pos + key.size(), is_flag);
    if (!value.empty()) {
      out.push_back(ParallelConfigHit{"", line_no, std::string(line.substr(pos, key.size())),
                                      valid_utf8(value)});
    }
    pos += key.size();
  }
}

bool is_config_file(std::string_view name) {
  for (std::string_view suffix : kConfigSuffixes) {
    if (name.ends_with(suffix)) return true;
  }
  return false;
}

bool skip_dir_name(std::string_view name) {
  if (name.starts_with('.')) return true;
  for (std::string_view skipped : kSkippedDirs) {
    if (name == skipped) return true;
  }
  return false;
}

// A Python or conda environment: skipped like site-packages.
bool is_environment(const std::vector<DirEntry>& entries) {
  for (const DirEntry& e : entries) {
    if (e.name == "pyvenv.cfg" || e.name == "conda-meta") return true;
  }
  return false;
}

struct Walk {
  std::string top;
  ParallelConfigScan scan;
};

// Entries are typed from the listing, not looked up one by one: after a reboot each lookup is
// a read from disk, and a working directory holds hundreds of entries that are no config file.
void walk(Walk& w, const std::string& rel, int depth) {
  std::string dir = rel.empty() ? w.top : w.top + "/" + rel;
  auto entries = list_dir_entries(dir);
  if (!entries) return;
  if (depth > 1 && is_environment(*entries)) return;
  std::vector<std::string> subdirs;
  for (const DirEntry& e : *entries) {
    if (w.scan.files_scanned >= kMaxFiles) return;
    const std::string& name = e.name;
    std::string path = dir + "/" + name;
    if (e.type == EntryType::kDir) {
      if (depth < kMaxDepth && !skip_dir_name(name)) {
        subdirs.push_back(rel.empty() ? name : rel + "/" + name);
      }
      continue;
    }
    if (!is_config_file(name)) continue;
    // A link to a regular file is read like the file; read_text refuses any other (a link to
    // a folder, a FIFO) and a file larger than kMaxFileBytes.
    if (e.type != EntryType::kFile && e.type != EntryType::kLink) continue;
    auto text = read_text(path, kMaxFileBytes);
    if (!text) continue;
    ++w.scan.files_scanned;
    std::string rel_path = rel.empty() ? name : rel + "/" + name;
    for (auto& hit : find_parallel_keys(*text)) {
      hit.file = valid_utf8(rel_path);
      w.scan.hits.push_back(std::move(hit));
    }
  }
  for (const auto& sub : subdirs) walk(w, sub, depth + 1);
}

}  // namespace

std::vector<ParallelConfigHit> find_parallel_keys(std::string_view text) {
  std::vector<ParallelConfigHit> hits;
  unsigned line_no = 0;
  for (std::string_view line : lines(text)) {
    ++line_no;
    find_in_line(line, line_no, hits);
  }
  return hits;
}

Result<ParallelConfigScan> scan_parallel_configs(const std::string& dir) {
  if (!is_dir(dir)) return fail(Why::kAbsent, "no directory " + dir);
  Walk w;
  w.top = dir;
  while (w.top.size() > 1 && w.top.back() == '/') w.top.pop_back();
  w.scan.directory = valid_utf8(dir);
  walk(w, "", 1);
  return w.scan;
}

}  // namespace sparkdoc::sys
