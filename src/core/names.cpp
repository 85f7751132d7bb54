#include "core/names.h"

namespace sparkdoc {

std::string pep503_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool in_run = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_run) out += '-';
      in_run = true;
      continue;
    }
    in_run = false;
    out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

}  // namespace sparkdoc
