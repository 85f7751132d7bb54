#include "sys/psi.h"

#include <optional>

#include "core/strings.h"

namespace sparkdoc::sys {
namespace {

Result<PsiLine> parse_psi_fields(const std::vector<std::string_view>& words) {
  PsiLine out;
  bool have_avg10 = false, have_avg60 = false, have_avg300 = false, have_total = false;
  for (size_t i = 1; i < words.size(); ++i) {
    size_t eq = words[i].find('=');
    if (eq == std::string_view::npos) return fail("psi: field without '='");
    std::string_view name = words[i].substr(0, eq);
    std::string_view value = words[i].substr(eq + 1);
    if (name == "total") {
      auto v = parse_u64(value);
      if (!v) return fail("psi: total is not a number");
      out.total_us = *v;
      have_total = true;
      continue;
    }
    double* target = nullptr;
    bool* seen = nullptr;
    if (name == "avg10") {
      target = &out.avg10;
      seen = &have_avg10;
    } else if (name == "avg60") {
      target = &out.avg60;
      seen = &have_avg60;
    } else if (name == "avg300") {
      target = &out.avg300;
      seen = &have_avg300;
    } else {
      continue;
    }
    auto v = parse_double(value);
    if (!v) return fail("psi: average is not a number");
    *target = *v;
    *seen = true;
  }
  if (!(have_avg10 && have_avg60 && have_avg300 && have_total)) {
    return fail("psi: line lacks avg10, avg60, avg300 or total");
  }
  return out;
}

}  // namespace

Result<Psi> parse_psi(std::string_view text) {
  std::optional<PsiLine> some;
  std::optional<PsiLine> full;
  for (std::string_view line : lines(text)) {
    auto words = split_ws(trim(line));
    if (words.empty()) continue;
    std::optional<PsiLine>* slot = nullptr;
    if (words[0] == "some") {
      slot = &some;
    } else if (words[0] == "full") {
      slot = &full;
    } else {
      return fail("psi: line is neither 'some' nor 'full'");
    }
    auto parsed = parse_psi_fields(words);
    if (!parsed) return tl::unexpected(parsed.error());
    *slot = *parsed;
  }
  if (!some) return fail("psi: no 'some' line");
  return Psi{*some, full};
}

Result<Psi> read_memory_pressure(const Root& root) {
  auto text = read_text(root.path("/proc/pressure/memory"));
  if (!text) {
    if (text.error().why == Why::kAbsent) return fail(Why::kAbsent, "kernel without PSI");
    return tl::unexpected(text.error());
  }
  return parse_psi(*text);
}

}  // namespace sparkdoc::sys
