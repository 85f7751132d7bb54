#include "model/python_source.h"

namespace sparkdoc::job {

const PyValue* PyValue::entry(std::string_view key) const {
  if (kind != Kind::kDict) return nullptr;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    if (items[i].string() == key) return &items[i + 1];
  }
  return nullptr;
}

const PyValue* PyCall::keyword(std::string_view name) const {
  for (const PyArg& a : args) {
    if (a.keyword == name) return &a.value;
  }
  return nullptr;
}

const PyValue* PyCall::positional(size_t n) const {
  for (const PyArg& a : args) {
    if (!a.keyword.empty()) continue;
    if (n == 0) return &a.value;
    --n;
  }
  return nullptr;
}

std::string_view PyCall::method() const {
  std::string_view c = callee;
  size_t dot = c.rfind('.');
  return dot == std::string_view::npos ? c : c.substr(dot + 1);
}

const PyValue* PySource::value_of(std::string_view name, uint32_t line) const {
  const PyValue* found = nullptr;
  for (const PyAssignment& a : assignments) {
    if (a.line >= line) break;
    if (a.target == name) found = &a.value;
  }
  return found;
}

bool PySource::imports_from(std::string_view module) const {
  for (const PyImport& i : imports) {
    std::string_view q = i.qualified;
    if (q == module ||
        (q.starts_with(module) && q.size() > module.size() && q[module.size()] == '.')) {
      return true;
    }
  }
  return false;
}

}  // namespace sparkdoc::job
