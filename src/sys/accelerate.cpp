#include "sys/accelerate.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/strings.h"
#include "sys/text.h"

namespace sparkdoc::sys {
namespace {

constexpr std::string_view kYamlName = "default_config.yaml";
constexpr std::string_view kJsonName = "default_config.json";
constexpr size_t kMaxConfigBytes = 1 << 20;

std::string expand_home(std::string_view dir, std::string_view home) {
  bool tilde = dir == "~" || dir.starts_with("~/");
  if (tilde && !home.empty()) return std::string(home) + std::string(dir.substr(1));
  return std::string(dir);
}

bool is_text(std::string_view text) {
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
  }
  return true;
}

std::string_view strip_comment(std::string_view value) {
  // YAML starts a comment at a '#' that follows whitespace. A quoted value ends at its closing
  // quote, so a '#' inside quotes is kept.
  if (!value.empty() && (value.front() == '"' || value.front() == '\'')) {
    size_t close = value.find(value.front(), 1);
    if (close != std::string_view::npos) return value.substr(0, close + 1);
    return value;
  }
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '#' && (i == 0 || value[i - 1] == ' ' || value[i - 1] == '\t')) {
      return trim(value.substr(0, i));
    }
  }
  return value;
}

std::string_view unquote(std::string_view value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

bool is_empty_value(std::string_view value) {
  return value.empty() || value == "{}" || value == "[]" || value == "null" || value == "~" ||
         value == "''" || value == "\"\"";
}

struct YamlEntry {
  std::string key;
  std::string value;    // inline value, comment stripped
  bool nested = false;  // lines below it belong to it
};

AccelerateConfig from_entries(const std::vector<YamlEntry>& entries) {
  AccelerateConfig config;
  for (const auto& e : entries) {
    std::string_view value = unquote(e.value);
    if (e.key == "distributed_type") {
      config.distributed_type = valid_utf8(value);
    } else if (e.key == "num_processes") {
      config.num_processes = parse_i64(value);
    } else if (e.key == "num_machines") {
      config.num_machines = parse_i64(value);
    } else if (e.key == "fsdp_config") {
      config.has_fsdp_config = e.nested || !is_empty_value(e.value);
    } else if (e.key == "deepspeed_config") {
      config.has_deepspeed_config = e.nested || !is_empty_value(e.value);
    }
  }
  return config;
}

Result<AccelerateConfig> parse_yaml(std::string_view text) {
  std::vector<YamlEntry> entries;
  for (std::string_view raw : lines(text)) {
    std::string_view line = raw;
    if (line.ends_with('\r')) line.remove_suffix(1);
    std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    if (content == "---" || content == "...") continue;
    bool indented = line.front() == ' ' || line.front() == '\t';
    // PyYAML writes a list under a key without indenting it ("key:\n- a").
    bool list_item = line.front() == '-' && (line.size() == 1 || line[1] == ' ');
    if (indented || list_item) {
      if (entries.empty()) return fail("accelerate config: nested line without a parent key");
      // Below "key: value" an indented line continues a scalar; below "key:" it is content.
      if (entries.back().value.empty()) entries.back().nested = true;
      continue;
    }
    size_t colon = content.find(": ");
    if (colon == std::string_view::npos && content.back() == ':') colon = content.size() - 1;
    if (colon == std::string_view::npos || colon == 0) {
      return fail("accelerate config: top-level line is not 'key: value'");
    }
    YamlEntry e;
    e.key = std::string(unquote(trim(content.substr(0, colon))));
    e.value = std::string(strip_comment(trim(content.substr(colon + 1))));
    entries.push_back(std::move(e));
  }
  if (entries.empty()) return fail("accelerate config: no keys");
  return from_entries(entries);
}

std::optional<int64_t> json_int(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

bool json_non_empty(const nlohmann::json& v) {
  if (v.is_null()) return false;
  if (v.is_object() || v.is_array() || v.is_string()) return !v.empty();
  return true;
}

Result<AccelerateConfig> parse_json(std::string_view text) {
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return fail("accelerate config: not a JSON object");
  }
  AccelerateConfig config;
  if (auto it = doc.find("distributed_type"); it != doc.end() && it->is_string()) {
    config.distributed_type = it->get<std::string>();
  }
  if (auto it = doc.find("num_processes"); it != doc.end()) config.num_processes = json_int(*it);
  if (auto it = doc.find("num_machines"); it != doc.end()) config.num_machines = json_int(*it);
  if (auto it = doc.find("fsdp_config"); it != doc.end()) {
    config.has_fsdp_config = json_non_empty(*it);
  }
  if (auto it = doc.find("deepspeed_config"); it != doc.end()) {
    config.has_deepspeed_config = json_non_empty(*it);
  }
  return config;
}

}  // namespace

std::string accelerate_config_path(std::string_view hf_home, std::string_view xdg_cache_home,
                                   std::string_view home) {
  std::string dir;
  if (!hf_home.empty()) {
    dir = expand_home(hf_home, home);
  } else if (!xdg_cache_home.empty()) {
    dir = expand_home(xdg_cache_home, home) + "/huggingface";
  } else if (!home.empty()) {
    dir = std::string(home) + "/.cache/huggingface";
  } else {
    return "";
  }
  if (dir.empty() || dir.front() == '~') return "";
  return dir + "/accelerate/" + std::string(kYamlName);
}

Result<AccelerateConfig> parse_accelerate_config(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  if (!is_text(text)) return fail("accelerate config: not text");
  std::string_view body = trim(text);
  if (body.starts_with('{')) return parse_json(body);
  return parse_yaml(text);
}

Result<AccelerateConfig> read_accelerate_config(const Root& root, const std::string& path) {
  if (path.empty()) return fail(Why::kAbsent, "no HF_HOME, XDG_CACHE_HOME or HOME to find it by");
  std::string used = path;
  auto text = read_text(root.path(used), kMaxConfigBytes);
  if (!text && text.error().why == Why::kAbsent && path.ends_with(kYamlName)) {
    std::string json_path = path.substr(0, path.size() - kYamlName.size()) + std::string(kJsonName);
    auto json_text = read_text(root.path(json_path), kMaxConfigBytes);
    if (json_text || json_text.error().why != Why::kAbsent) {
      used = json_path;
      text = std::move(json_text);
    }
  }
  if (!text) {
    if (text.error().why == Why::kAbsent) return fail(Why::kAbsent, "no " + path);
    return tl::unexpected(text.error());
  }
  auto config = parse_accelerate_config(*text);
  if (!config) {
    return tl::unexpected(Error{config.error().why, used + ": " + config.error().message});
  }
  config->path = valid_utf8(used);
  return config;
}

}  // namespace sparkdoc::sys
