#include "core/reading.h"

namespace sparkdoc {

std::string_view why_name(Why why) {
  switch (why) {
    case Why::kAbsent: return "absent";
    case Why::kNotSupported: return "not_supported";
    case Why::kNoPermission: return "no_permission";
    case Why::kError: return "error";
  }
  return "error";
}

std::optional<Why> why_from_name(std::string_view name) {
  if (name == "absent") return Why::kAbsent;
  if (name == "not_supported") return Why::kNotSupported;
  if (name == "no_permission") return Why::kNoPermission;
  if (name == "error") return Why::kError;
  return std::nullopt;
}

}  // namespace sparkdoc
