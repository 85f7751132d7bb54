#include "model/native.h"

#include <fmt/format.h>

namespace sparkdoc::audit {
namespace {

std::string_view suffix(ArchVariant variant) {
  switch (variant) {
    case ArchVariant::kArchSpecific:
      return "a";
    case ArchVariant::kFamilySpecific:
      return "f";
    case ArchVariant::kPlain:
      break;
  }
  return "";
}

}  // namespace

std::string sass_name(GpuTarget target) {
  return fmt::format("sm_{}{}", target.sm, suffix(target.variant));
}

std::string ptx_name(GpuTarget target) {
  return fmt::format("compute_{}{}", target.sm, suffix(target.variant));
}

std::optional<GpuTarget> parse_target(std::string_view name) {
  if (name.starts_with("sm_")) {
    name.remove_prefix(3);
  } else if (name.starts_with("compute_")) {
    name.remove_prefix(8);
  } else {
    return std::nullopt;
  }
  GpuTarget t;
  if (!name.empty() && (name.back() == 'a' || name.back() == 'f')) {
    t.variant = name.back() == 'a' ? ArchVariant::kArchSpecific : ArchVariant::kFamilySpecific;
    name.remove_suffix(1);
  }
  // Two or three digits: sm_75 .. sm_121 (and what comes after).
  if (name.size() < 2 || name.size() > 3 || name.front() == '0') return std::nullopt;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    t.sm = t.sm * 10 + static_cast<uint32_t>(c - '0');
  }
  return t;
}

std::optional<gpu::ComputeCapability> parse_compute_capability(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 3 || text.size() != dot + 2) {
    return std::nullopt;
  }
  gpu::ComputeCapability cc;
  for (size_t i = 0; i < dot; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    cc.major = cc.major * 10 + (text[i] - '0');
  }
  const char minor = text[dot + 1];
  if (minor < '0' || minor > '9') return std::nullopt;
  cc.minor = minor - '0';
  if (cc.major == 0) return std::nullopt;
  return cc;
}

std::string compute_capability_text(const gpu::ComputeCapability& cc) {
  return fmt::format("{}.{}", cc.major, cc.minor);
}

}  // namespace sparkdoc::audit
