#include "compare/stream.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <utility>

#include "model/snapshot_json.h"

namespace sparkdoc::compare {
namespace {

constexpr size_t kMaxLabel = 255;  // a host name
constexpr size_t kShown = 120;     // bytes of a garbage line quoted in a problem

bool label_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}

// The label of a line and where its text starts: "node1: {" (pdsh, clush) or "  0: {" (srun
// --label pads task numbers with spaces). No line `sparkdoc snapshot` writes starts this way:
// its lines start with a brace, a bracket, spaces and a quote, or spaces and a value.
std::optional<std::pair<std::string_view, size_t>> line_label(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const size_t start = i;
  const bool padded = start > 0;
  while (i < line.size() && i - start < kMaxLabel &&
         (padded ? digit(line[i]) : label_char(line[i])))
    ++i;
  if (i == start || i >= line.size() || line[i] != ':') return std::nullopt;
  if (i + 1 < line.size() && line[i + 1] != ' ') return std::nullopt;
  std::string_view label = line.substr(start, i - start);
  size_t text = std::min(line.size(), i + 2);
  return std::make_pair(label, text);
}

struct Group {
  std::string label;
  std::string text;
};

std::string quoted(std::string_view line) {
  std::string out(line.substr(0, kShown));
  if (line.size() > kShown) out += "...";
  return out;
}

// Cuts one label's text into documents.
class Cutter {
 public:
  Cutter(const Group& group, std::string_view origin, Documents& out)
      : group_(group), text_(group.text), origin_(origin), out_(out) {}

  void run() {
    size_t i = 0;
    while (i < text_.size()) {
      char c = text_[i];
      if (c == '\n') {
        ++line_;
        ++i;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
      } else if (c == '{') {
        i = document(i);
      } else {
        size_t end = std::min(text_.find('\n', i), text_.size());
        garbage(text_.substr(i, end - i));
        i = end;
      }
    }
    finish();
  }

 private:
  std::string where(size_t line) const {
    if (!group_.label.empty()) return group_.label;
    return fmt::format("{}:{}", origin_, line);
  }

  void garbage(std::string_view line) {
    if (garbage_lines_++ == 0) {
      first_garbage_ = quoted(line);
      garbage_line_ = line_;
    }
  }

  void broken(size_t line, std::string message) {
    out_.problems.push_back({where(line), std::move(message), true});
    ++broken_;
  }

  // The document that starts at `start` (a "{"); returns where scanning goes on.
  size_t document(size_t start) {
    const size_t first_line = line_;
    size_t depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (size_t j = start; j < text_.size(); ++j) {
      char c = text_[j];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        } else if (c == '\n') {
          ++line_;
          broken(first_line, fmt::format("a document from line {} is cut short at line {} (a line "
                                         "break inside a string): skipped",
                                         first_line, line_ - 1));
          return resync(j + 1);
        }
        continue;
      }
      switch (c) {
        case '"':
          in_string = true;
          break;
        case '{':
        case '[':
          if (++depth > kMaxDepth) {
            broken(first_line, fmt::format("a document from line {} nests deeper than {}: "
                                           "skipped",
                                           first_line, kMaxDepth));
            return resync(j + 1);
          }
          break;
        case '}':
        case ']':
          if (--depth == 0) {
            out_.documents.push_back(
                {group_.label, std::string(text_.substr(start, j + 1 - start)), first_line});
            return j + 1;
          }
          break;
        case '\n':
          ++line_;
          // A "{" that opens a line inside a document starts the next one: this one was cut
          // short (a node that died while printing).
          if (j + 1 < text_.size() && text_[j + 1] == '{') {
            broken(first_line, fmt::format("a document from line {} is cut short at line {}: "
                                           "skipped",
                                           first_line, line_ - 1));
            return j + 1;
          }
          break;
        default:
          break;
      }
    }
    broken(first_line,
           fmt::format("a document from line {} is cut short at the end: skipped", first_line));
    return text_.size();
  }

  // After a broken document: on at the next line that opens a document.
  size_t resync(size_t from) {
    for (size_t j = from; j < text_.size(); ++j) {
      if (text_[j] == '{' && (j == 0 || text_[j - 1] == '\n')) return j;
      if (text_[j] == '\n') ++line_;
    }
    return text_.size();
  }

  void finish() {
    if (garbage_lines_ == 0) return;
    std::string more =
        garbage_lines_ > 1 ? fmt::format(" (and {} more lines)", garbage_lines_ - 1) : "";
    if (documents_before() == 0 && broken_ == 0) {
      out_.problems.push_back({where(garbage_line_),
                               fmt::format("printed no snapshot: {}{}", first_garbage_, more),
                               true});
    } else {
      out_.problems.push_back(
          {where(garbage_line_),
           fmt::format("printed text that is not JSON beside its snapshot: {}{}", first_garbage_,
                       more),
           false});
    }
  }

  size_t documents_before() const { return out_.documents.size() - documents_at_start_; }

  const Group& group_;
  std::string_view text_;
  std::string_view origin_;
  Documents& out_;
  size_t documents_at_start_ = out_.documents.size();
  size_t line_ = 1;
  size_t broken_ = 0;
  size_t garbage_lines_ = 0;
  size_t garbage_line_ = 0;
  std::string first_garbage_;
};

}  // namespace

Documents split_stream(std::string_view bytes, std::string_view origin) {
  std::vector<Group> groups;
  std::map<std::string, size_t, std::less<>> index;
  size_t at = 0;
  while (at < bytes.size()) {
    size_t end = bytes.find('\n', at);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view line = bytes.substr(at, end - at);
    at = end + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    std::string_view label;
    if (auto found = line_label(line)) {
      label = found->first;
      line.remove_prefix(found->second);
    }
    auto it = index.find(label);
    if (it == index.end()) {
      it = index.emplace(std::string(label), groups.size()).first;
      groups.push_back({std::string(label), {}});
    }
    std::string& text = groups[it->second].text;
    text.append(line);
    text.push_back('\n');
  }
  Documents out;
  for (const Group& group : groups) Cutter(group, origin, out).run();
  return out;
}

NodeSet read_nodes(const std::vector<Input>& inputs) {
  NodeSet out;
  std::map<std::string, unsigned> taken;
  auto unique = [&](std::string name) {
    unsigned& n = taken[name];
    if (n++ == 0) return name;
    for (;;) {
      std::string candidate = fmt::format("{}#{}", name, n);
      if (taken.try_emplace(candidate, 1).second) return candidate;
      ++n;
    }
  };
  for (const Input& input : inputs) {
    Documents docs = split_stream(input.bytes, input.origin);
    out.problems.insert(out.problems.end(), docs.problems.begin(), docs.problems.end());
    size_t ordinal = 0;
    for (Document& doc : docs.documents) {
      ++ordinal;
      auto snapshot = snapshot_from_text(doc.text);
      std::string where =
          !doc.label.empty() ? doc.label : fmt::format("{}:{}", input.origin, doc.line);
      if (!snapshot) {
        out.problems.push_back(
            {where, fmt::format("not a snapshot: {}: skipped", snapshot.error().message), true});
        continue;
      }
      std::string name = doc.label;
      if (name.empty() && snapshot->host.hostname.ok() && !snapshot->host.hostname->empty()) {
        name = *snapshot->host.hostname;
      }
      if (name.empty()) {
        name =
            input.file_name.empty() ? fmt::format("{}#{}", input.origin, ordinal) : input.file_name;
      }
      out.nodes.push_back({unique(std::move(name)), std::move(*snapshot)});
    }
  }
  return out;
}

}  // namespace sparkdoc::compare
