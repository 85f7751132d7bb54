#include "job/files.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <string>

#include "core/names.h"
#include "core/strings.h"
#include "job/shell.h"

namespace sparkdoc::job {
namespace {

std::string_view strip(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The text's lines with their 1-based numbers.
std::vector<std::pair<uint32_t, std::string_view>> numbered_lines(std::string_view text) {
  std::vector<std::pair<uint32_t, std::string_view>> out;
  uint32_t n = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(n++, text.substr(start, end - start));
    if (end == text.size()) break;
    start = end + 1;
  }
  return out;
}

// The first position outside '...' and "..." where `at(line, i)` holds; npos when none.
template <class Pred>
size_t find_unquoted(std::string_view line, Pred at) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      continue;
    }
    if (at(line, i)) return i;
  }
  return std::string_view::npos;
}

// A '#' comment outside quotes, removed.
std::string_view without_comment(std::string_view line) {
  size_t hash = find_unquoted(line, [](std::string_view l, size_t i) {
    return l[i] == '#' && (i == 0 || l[i - 1] == ' ' || l[i - 1] == '\t');
  });
  return hash == std::string_view::npos ? line : line.substr(0, hash);
}

std::string unquote(std::string_view s) {
  s = strip(s);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    return std::string(s.substr(1, s.size() - 2));
  }
  return std::string(s);
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

// The strings of a TOML or flow-YAML array text: ["a", 'b', {c = 1}]; `offsets`, when given, gets
// where in `s` each item starts.
std::vector<std::string> array_items(std::string_view s, std::vector<size_t>* offsets = nullptr) {
  std::vector<std::string> out;
  const char* const base = s.data();
  s = strip(s);
  if (s.empty() || s.front() != '[') return out;
  s.remove_prefix(1);
  if (!s.empty() && s.back() == ']') s.remove_suffix(1);
  std::string item;
  size_t start = 0;
  char quote = 0;
  int depth = 0;
  auto flush = [&] {
    if (!strip(item).empty()) {
      out.push_back(unquote(item));
      if (offsets != nullptr) offsets->push_back(start);
    }
    item.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (item.empty() || strip(item).empty()) start = static_cast<size_t>(s.data() + i - base);
    if (quote) {
      if (c == quote) quote = 0;
      item += c;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      flush();
      continue;
    }
    item += c;
  }
  flush();
  return out;
}

}  // namespace

std::vector<DockerInstruction> parse_dockerfile(std::string_view text) {
  std::vector<DockerInstruction> out;
  std::string pending;
  uint32_t pending_line = 0;
  for (auto [n, raw] : numbered_lines(text)) {
    std::string_view line = strip(raw);
    if (pending.empty() && (line.empty() || line.front() == '#')) continue;
    if (!pending.empty() && !line.empty() && line.front() == '#') continue;  // inside a RUN
    bool continued = !line.empty() && line.back() == '\\';
    if (continued) line.remove_suffix(1);
    if (pending.empty()) pending_line = n;
    pending += std::string(line);
    pending += continued ? "\\\n" : "";
    if (continued) continue;
    std::string_view whole = strip(pending);
    size_t sp = whole.find_first_of(" \t");
    DockerInstruction d;
    d.keyword = std::string(whole.substr(0, sp));
    for (char& c : d.keyword) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    d.args = sp == std::string_view::npos ? "" : std::string(strip(whole.substr(sp)));
    d.line = pending_line;
    out.push_back(std::move(d));
    pending.clear();
  }
  return out;
}

std::vector<Command> dockerfile_commands(const std::vector<DockerInstruction>& instructions) {
  std::vector<Command> out;
  for (const DockerInstruction& d : instructions) {
    if (d.keyword != "RUN") continue;
    std::string_view args = d.args;
    // RUN --mount=... --network=... flags come before the command.
    while (args.starts_with("--")) {
      size_t sp = args.find_first_of(" \t\n");
      if (sp == std::string_view::npos) {
        args = {};
        break;
      }
      args = strip(args.substr(sp));
    }
    if (!args.empty() && args.front() == '[') {
      auto j = nlohmann::json::parse(args, nullptr, false);
      if (j.is_array()) {
        Command c;
        c.line = d.line;
        c.text = std::string(args);
        for (const auto& w : j) {
          if (w.is_string()) c.argv.push_back(w.get<std::string>());
        }
        // ["sh", "-c", "..."] runs the string as a shell line.
        if (c.argv.size() == 3 && c.argv[1] == "-c") {
          for (Command& inner : parse_shell(c.argv[2], d.line)) out.push_back(std::move(inner));
        } else if (!c.argv.empty()) {
          out.push_back(std::move(c));
        }
        continue;
      }
    }
    for (Command& c : parse_shell(args, d.line)) out.push_back(std::move(c));
  }
  return out;
}

std::optional<Requirement> parse_requirement(std::string_view text, uint32_t line) {
  text = strip(text);
  if (text.empty()) return std::nullopt;
  Requirement r;
  r.line = line;
  // "-e git+https://...#egg=name" and bare URLs name themselves with #egg=.
  if (text.starts_with("-e ") || text.starts_with("--editable ") ||
      text.find("://") < text.find(' ')) {
    size_t egg = text.find("#egg=");
    if (egg == std::string_view::npos) return std::nullopt;
    std::string_view name = text.substr(egg + 5);
    size_t end = 0;
    while (end < name.size() && name_char(name[end])) ++end;
    if (end == 0) return std::nullopt;
    r.name = pep503_name(name.substr(0, end));
    std::string_view url = strip(text.substr(text.find(' ') + 1));
    r.specifier = "@ " + std::string(url.substr(0, url.find('#')));
    return r;
  }
  size_t end = 0;
  while (end < text.size() && name_char(text[end])) ++end;
  if (end == 0 || !std::isalnum(static_cast<unsigned char>(text[0]))) return std::nullopt;
  r.name = pep503_name(text.substr(0, end));
  std::string_view rest = strip(text.substr(end));
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    rest = close == std::string_view::npos ? std::string_view() : strip(rest.substr(close + 1));
  }
  rest = strip(rest.substr(0, rest.find(';')));
  if (rest.starts_with("@")) {
    r.specifier = std::string(rest);
    return r;
  }
  if (!rest.empty() && rest.find_first_of("=<>!~") != 0) return std::nullopt;
  for (char c : rest) {
    if (c != ' ') r.specifier += c;
  }
  return r;
}

std::vector<Requirement> parse_requirements_txt(std::string_view text) {
  std::vector<Requirement> out;
  for (auto [n, raw] : numbered_lines(text)) {
    std::string_view line = strip(without_comment(raw));
    if (line.empty()) continue;
    if (line.front() == '-' && !line.starts_with("-e ") && !line.starts_with("--editable ")) {
      continue;  // -r, -c, --index-url, --extra-index-url, --hash ...
    }
    if (line.back() == '\\') line = strip(line.substr(0, line.size() - 1));
    if (auto r = parse_requirement(line, n)) out.push_back(std::move(*r));
  }
  return out;
}

TomlRead parse_pyproject(std::string_view text) {
  TomlRead out;
  std::string table;
  bool dependency_table = false;
  auto lines = numbered_lines(text);
  for (size_t k = 0; k < lines.size(); ++k) {
    auto [n, raw] = lines[k];
    std::string_view line = strip(without_comment(raw));
    if (line.empty()) continue;
    if (line.front() == '[') {
      std::string_view header = line;
      while (!header.empty() && (header.front() == '[' || header.front() == ' '))
        header.remove_prefix(1);
      while (!header.empty() && (header.back() == ']' || header.back() == ' '))
        header.remove_suffix(1);
      table = std::string(header);
      dependency_table = table.ends_with("dependencies") || table.ends_with("dev-dependencies") ||
                         table == "dependency-groups";
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key = unquote(line.substr(0, eq));
    std::string value(strip(line.substr(eq + 1)));
    // A multi-line array: gather lines up to the closing bracket, noting where each starts.
    std::vector<std::pair<size_t, uint32_t>> line_starts{{0, n}};
    if (value.starts_with("[") && value.find(']') == std::string::npos) {
      while (k + 1 < lines.size()) {
        ++k;
        std::string_view more = strip(without_comment(lines[k].second));
        value += " ";
        line_starts.emplace_back(value.size(), lines[k].first);
        value += more;
        if (more.find(']') != std::string_view::npos) break;
      }
    }
    auto line_at = [&line_starts](size_t offset) {
      uint32_t at = line_starts.front().second;
      for (const auto& [from, line_number] : line_starts) {
        if (from <= offset) at = line_number;
      }
      return at;
    };
    const std::string path = table.empty() ? key : table + "." + key;
    out.values.push_back(ConfigValue{path, value, n});
    const bool list = value.starts_with("[");
    if (list && (key == "dependencies" || key == "dev-dependencies" || dependency_table ||
                 table == "project.optional-dependencies")) {
      std::vector<size_t> offsets;
      const std::vector<std::string> items = array_items(value, &offsets);
      for (size_t i = 0; i < items.size(); ++i) {
        if (auto r = parse_requirement(items[i], line_at(offsets[i]))) {
          out.requirements.push_back(std::move(*r));
        }
      }
    } else if (dependency_table && !list && key != "python") {
      // name = "==5.2.0" or name = { version = "==5.2.0", ... }
      std::string spec = unquote(value);
      if (value.starts_with("{")) {
        size_t v = value.find("version");
        spec.clear();
        if (v != std::string::npos) {
          size_t q = value.find_first_of("\"'", v);
          size_t q2 = q == std::string::npos ? q : value.find(value[q], q + 1);
          if (q2 != std::string::npos) spec = value.substr(q + 1, q2 - q - 1);
        }
      }
      Requirement r;
      r.name = pep503_name(key);
      r.line = n;
      // Poetry's caret and tilde ranges stay as written; a bare version means ==.
      r.specifier =
          !spec.empty() && std::isdigit(static_cast<unsigned char>(spec[0])) ? "==" + spec : spec;
      out.requirements.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Requirement> parse_uv_lock(std::string_view text) {
  std::vector<Requirement> out;
  bool in_package = false;
  Requirement current;
  for (auto [n, raw] : numbered_lines(text)) {
    std::string_view line = strip(raw);
    if (line.starts_with("[")) {
      if (in_package && !current.name.empty()) out.push_back(current);
      in_package = line == "[[package]]";
      current = Requirement{};
      continue;
    }
    if (!in_package) continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(strip(line.substr(0, eq)));
    std::string value = unquote(line.substr(eq + 1));
    if (key == "name") {
      current.name = pep503_name(value);
      current.line = n;
    } else if (key == "version") {
      current.specifier = "==" + value;
    }
  }
  if (in_package && !current.name.empty()) out.push_back(current);
  return out;
}

std::vector<ConfigValue> parse_yaml(std::string_view text) {
  std::vector<ConfigValue> out;
  // The open blocks: keys whose value is a nested block, and sequence items.
  struct Level {
    int indent;
    std::string key;
    bool item = false;
    int items = 0;  // items seen in this block, when it is a sequence
  };
  std::vector<Level> path;
  auto key_of = [&](const std::string& leaf) {
    std::string k;
    for (const Level& l : path) k += (k.empty() ? "" : ".") + l.key;
    return leaf.empty() ? k : (k.empty() ? leaf : k + "." + leaf);
  };
  auto lines = numbered_lines(text);
  for (size_t k = 0; k < lines.size(); ++k) {
    auto [n, raw] = lines[k];
    std::string_view content = without_comment(raw);
    std::string_view stripped = strip(content);
    if (stripped.empty() || stripped == "---" || stripped == "...") continue;
    int indent = 0;
    while (static_cast<size_t>(indent) < content.size() && content[indent] == ' ') ++indent;
    std::string_view line = stripped;
    const bool item = line.starts_with("- ") || line == "-";
    while (!path.empty()) {
      const Level& top = path.back();
      if (top.indent < indent) break;
      // A sequence may sit at its key's own indentation ("key:\n- a").
      if (item && top.indent == indent && !top.item) break;
      path.pop_back();
    }
    while (line.starts_with("- ") || line == "-") {
      int index = path.empty() ? 0 : path.back().items++;
      path.push_back(Level{indent, std::to_string(index), true});
      line = line == "-" ? std::string_view() : strip(line.substr(2));
      indent += 2;
    }
    if (line.empty()) continue;
    const size_t colon = find_unquoted(line, [](std::string_view l, size_t i) {
      return l[i] == ':' && (i + 1 == l.size() || l[i + 1] == ' ');
    });
    if (colon == std::string_view::npos) {
      out.push_back(ConfigValue{key_of(""), unquote(line), n});
      continue;
    }
    std::string key = unquote(line.substr(0, colon));
    std::string_view value = strip(line.substr(colon + 1));
    if (value.empty()) {
      path.push_back(Level{indent, key});
      continue;
    }
    if (value == "|" || value == ">" || value == "|-" || value == ">-" || value == "|+" ||
        value == ">+") {
      std::string block;
      while (k + 1 < lines.size()) {
        std::string_view next = lines[k + 1].second;
        int ni = 0;
        while (static_cast<size_t>(ni) < next.size() && next[ni] == ' ') ++ni;
        if (!strip(next).empty() && ni <= indent) break;
        ++k;
        if (strip(next).empty()) continue;
        block += std::string(strip(next));
        block += value.front() == '|' ? "\n" : " ";
      }
      while (!block.empty() && (block.back() == ' ' || block.back() == '\n')) block.pop_back();
      out.push_back(ConfigValue{key_of(key), block, n});
      continue;
    }
    out.push_back(ConfigValue{key_of(key), unquote(value), n});
    if (value.front() == '[') {
      auto items = array_items(value);
      for (size_t i = 0; i < items.size(); ++i) {
        out.push_back(ConfigValue{key_of(key) + "." + std::to_string(i), items[i], n});
      }
    }
  }
  return out;
}

std::vector<ConfigValue> parse_json_config(std::string_view text) {
  std::vector<ConfigValue> out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return out;
  // The line of a key: where "key" first appears (a good guess for config files).
  auto line_of = [&](const std::string& key) -> uint32_t {
    size_t at = text.find("\"" + key + "\"");
    if (at == std::string_view::npos) return 0;
    uint32_t n = 1;
    for (size_t i = 0; i < at; ++i) n += text[i] == '\n';
    return n;
  };
  std::vector<std::pair<std::string, const nlohmann::json*>> stack{{"", &j}};
  size_t visited = 0;
  while (!stack.empty() && visited < 100000) {
    ++visited;
    auto [prefix, node] = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      for (auto it = node->begin(); it != node->end(); ++it) {
        stack.emplace_back(prefix.empty() ? it.key() : prefix + "." + it.key(), &it.value());
      }
    } else if (node->is_array()) {
      for (size_t i = 0; i < node->size(); ++i) {
        stack.emplace_back(prefix + "." + std::to_string(i), &(*node)[i]);
      }
    } else {
      std::string leaf = prefix.substr(prefix.rfind('.') + 1);
      std::string value = node->is_string() ? node->get<std::string>() : node->dump();
      out.push_back(ConfigValue{prefix, value, line_of(leaf)});
    }
  }
  return out;
}

std::vector<ConfigValue> parse_cmake_cache(std::string_view text) {
  std::vector<ConfigValue> out;
  for (auto [n, raw] : numbered_lines(text)) {
    std::string_view line = strip(raw);
    if (line.empty() || line.starts_with("#") || line.starts_with("//")) continue;
    size_t colon = line.find(':');
    size_t eq = line.find('=');
    if (colon == std::string_view::npos || eq == std::string_view::npos || colon > eq) continue;
    out.push_back(
        ConfigValue{std::string(line.substr(0, colon)), std::string(line.substr(eq + 1)), n});
  }
  return out;
}

std::vector<Command> makefile_commands(std::string_view text) {
  std::vector<Command> out;
  auto lines = numbered_lines(text);
  for (size_t k = 0; k < lines.size(); ++k) {
    auto [n, raw] = lines[k];
    if (raw.empty() || raw.front() != '\t') continue;
    std::string recipe(raw.substr(1));
    while (!recipe.empty() && recipe.back() == '\\' && k + 1 < lines.size()) {
      recipe += "\n";
      recipe += std::string(strip(lines[++k].second));
    }
    std::string_view r = recipe;
    while (!r.empty() && (r.front() == '@' || r.front() == '-' || r.front() == '+'))
      r.remove_prefix(1);
    for (Command& c : parse_shell(r, n)) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace sparkdoc::job
