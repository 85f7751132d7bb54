#include "hub/model_id.h"

#include <fmt/format.h>

#include <tuple>

#include "core/strings.h"

namespace sparkdoc::hub {
namespace {

constexpr size_t kMaxNameChars = 96;
constexpr size_t kMaxRevisionChars = 128;

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

// Why `part` cannot be a folder name in the cache, or "" when it can.
std::string part_problem(std::string_view part, size_t max_chars, bool dashes_may_pair) {
  if (part.empty()) return "is empty";
  if (part.size() > max_chars) return fmt::format("is longer than {} characters", max_chars);
  for (char c : part) {
    if (!name_char(c)) {
      return "holds a character other than a letter, a digit, '-', '_' or '.'";
    }
  }
  if (contains(part, "..")) return "holds \"..\"";
  if (!dashes_may_pair && contains(part, "--")) return "holds \"--\"";
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.') {
    return "starts or ends with '-' or '.'";
  }
  return "";
}

}  // namespace

bool looks_like_model_id(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) return false;
  if (text.find('/', slash + 1) != std::string_view::npos) return false;
  return text.front() != '.' && text.front() != '~';
}

Result<ModelId> parse_model_id(std::string_view text, std::string_view revision_option) {
  if (!looks_like_model_id(text)) {
    return fail(
        fmt::format("a Hub model is named ORG/NAME (optionally ORG/NAME@REVISION), "
                    "not \"{}\"",
                    text));
  }
  ModelId id;
  std::string_view repo = text;
  size_t at = text.find('@');
  if (at != std::string_view::npos) {
    repo = text.substr(0, at);
    id.revision = std::string(text.substr(at + 1));
    id.revision_given = true;
  }
  if (!revision_option.empty()) {
    if (id.revision_given && id.revision != revision_option) {
      return fail(fmt::format("{} names revision {}, and --revision {}: name one", text,
                              id.revision, revision_option));
    }
    id.revision = std::string(revision_option);
    id.revision_given = true;
  }
  size_t slash = repo.find('/');
  if (slash == std::string_view::npos) {
    return fail(fmt::format("\"{}\": the model before '@' must be ORG/NAME", text));
  }
  id.org = std::string(repo.substr(0, slash));
  id.name = std::string(repo.substr(slash + 1));
  for (auto [what, part, max] :
       {std::tuple{"organisation", std::string_view(id.org), kMaxNameChars},
        std::tuple{"name", std::string_view(id.name), kMaxNameChars},
        std::tuple{"revision", std::string_view(id.revision), kMaxRevisionChars}}) {
    std::string problem = part_problem(part, max, std::string_view(what) == "revision");
    if (!problem.empty()) {
      return fail(fmt::format("the {} of Hub model \"{}\" {}{}", what, text, problem,
                              std::string_view(what) == "revision"
                                  ? " (a branch, a tag or a commit hash; refs/pr/N is not taken)"
                                  : ""));
    }
  }
  return id;
}

std::string cache_entry_name(const ModelId& id) {
  return fmt::format("models--{}--{}", id.org, id.name);
}

}  // namespace sparkdoc::hub
