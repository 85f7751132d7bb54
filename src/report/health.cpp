#include "report/health.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/strings.h"

namespace sparkdoc::report {

bool momentary_check(std::string_view id) {
  constexpr std::array<std::string_view, 4> kMomentary{"G3", "G6", "S10", "F6"};
  for (std::string_view m : kMomentary) {
    if (m == id) return true;
  }
  return false;
}

std::string health_text(std::string_view text, size_t max) {
  std::string out;
  out.reserve(std::min(text.size(), max));
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (c >= 0x80) {
      // One "?" for a whole UTF-8 sequence: skip its continuation bytes.
      out += '?';
      while (i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) ++i;
    }
  }
  if (out.size() > max) {
    size_t keep = max >= 3 ? max - 3 : 0;
    out.resize(keep);
    out += std::string("...").substr(0, max - keep);
  }
  return out;
}

HealthLine render_health_line(const std::vector<checks::Finding>& findings, bool strict,
                              std::string_view left_out) {
  std::vector<const checks::Finding*> failing;
  std::vector<std::string> warned;
  unsigned passed = 0, skipped = 0;
  for (const checks::Finding& f : findings) {
    switch (f.verdict) {
      case checks::Verdict::kFail:
        failing.push_back(&f);
        break;
      case checks::Verdict::kWarn:
        warned.push_back(f.id);
        if (strict) failing.push_back(&f);
        break;
      case checks::Verdict::kPass:
        ++passed;
        break;
      case checks::Verdict::kSkip:
        ++skipped;
        break;
      case checks::Verdict::kInfo:
        break;
    }
  }
  HealthLine out;
  if (!failing.empty()) {
    // FAILs before WARNs (a strict run fails on both), each in table order.
    std::stable_partition(failing.begin(), failing.end(), [](const checks::Finding* f) {
      return f->verdict == checks::Verdict::kFail;
    });
    const checks::Finding& first = *failing.front();
    std::string more;
    if (failing.size() > 1) {
      std::vector<std::string> ids;
      for (size_t i = 1; i < failing.size(); ++i) ids.push_back(failing[i]->id);
      more = fmt::format(" (+{} more: {})", ids.size(), join(ids, ", "));
    }
    // The rest of the line is the first failure's detail, cut to leave room for the others.
    std::string head = fmt::format("{} {}: ", first.id, checks::verdict_word(first.verdict));
    std::string tail = health_text(more, kHealthLineMax / 2);
    size_t room =
        kHealthLineMax > head.size() + tail.size() ? kHealthLineMax - head.size() - tail.size() : 0;
    out.healthy = false;
    out.line = head + health_text(first.detail, room) + tail;
    return out;
  }
  std::string line = fmt::format("sparkdoc OK: {} passed, {} warning{}{}, {} skipped", passed,
                                 warned.size(), warned.size() == 1 ? "" : "s",
                                 warned.empty() ? "" : " (" + join(warned, ", ") + ")", skipped);
  if (!left_out.empty()) line += fmt::format("; {}", left_out);
  out.line = health_text(line, kHealthLineMax);
  return out;
}

}  // namespace sparkdoc::report
