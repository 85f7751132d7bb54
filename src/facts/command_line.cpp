#include "facts/command_line.h"

#include <algorithm>

#include "core/strings.h"

namespace sparkdoc::facts {

namespace {

std::string normalize_flag(std::string_view flag) {
  std::string out(flag);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

}  // namespace

std::vector<std::string> command_words(std::string_view command) {
  std::vector<std::string> out;
  std::string word;
  for (char c : command) {
    bool sep = c == ' ' || c == '\t' || c == '\n' || c == '"' || c == '\'' || c == ',' ||
               c == '(' || c == ')' || c == ';';
    if (sep) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

std::optional<std::string> option_value(std::string_view command,
                                        const std::vector<std::string_view>& flags) {
  auto words = command_words(command);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    auto eq = word.find('=');
    std::string name = normalize_flag(word.substr(0, eq));
    for (std::string_view flag : flags) {
      if (name != normalize_flag(flag)) continue;
      if (eq != std::string_view::npos) return std::string(word.substr(eq + 1));
      if (i + 1 < words.size()) return words[i + 1];
    }
  }
  return std::nullopt;
}

bool is_tensor_parallel_key(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  key = to_lower(key);
  while (!key.empty() && (key.front() == '-' || key.front() == '+')) key.erase(key.begin());
  if (auto dot = key.rfind('.'); dot != std::string::npos) key = key.substr(dot + 1);
  return key == "tensor-parallel-size" || key == "tp" || key == "tp-size" ||
         key == "tensor-model-parallel-size" || key == "tensor-parallel-degree";
}

}  // namespace sparkdoc::facts
