// Fixture access shared by the fake NVML and CUDA libraries (test-only; see fake_nvml.cpp for
// the fixture format). Each fake is its own shared library and keeps its own copy of this.
#pragma once

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace sparkdoc::fake {

using nlohmann::json;

inline constexpr const char* kFixtureEnv = "SPARKDOC_FAKE_GPU_FIXTURE";

// The fixture named by SPARKDOC_FAKE_GPU_FIXTURE; null when the variable is unset, the file
// cannot be read, or it is not JSON. Read afresh on each call, so a test may switch fixtures
// between library initialisations.
inline json load_fixture() {
  const char* path = std::getenv(kFixtureEnv);
  if (path == nullptr) return nullptr;
  std::ifstream in(path);
  if (!in) return nullptr;
  json parsed = json::parse(in, nullptr, false);
  return parsed.is_discarded() ? json(nullptr) : parsed;
}

// `section[key]` when `section` is an object that has it, else nullptr.
inline const json* member(const json& section, std::string_view key) {
  if (!section.is_object()) return nullptr;
  auto it = section.find(key);
  return it == section.end() ? nullptr : &*it;
}

// A status code as a fixture writes it: a number, or a vendor constant's name with or without
// its prefix ("NOT_SUPPORTED" or "NVML_ERROR_NOT_SUPPORTED"). `names` pairs bare names with
// codes; an unknown name gives `unknown`.
template <class Code, class Names>
Code code_from(const json& value, const Names& names, std::string_view prefix, Code unknown) {
  if (value.is_number_integer()) return static_cast<Code>(value.get<int>());
  if (!value.is_string()) return unknown;
  std::string_view name = value.get_ref<const std::string&>();
  if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
  for (const auto& [bare, code] : names) {
    if (bare == name) return code;
  }
  return unknown;
}

// The error injected for `symbol`: looked up in `scope["errors"]`.
template <class Code, class Names>
std::optional<Code> injected(const json& scope, const char* symbol, const Names& names,
                             std::string_view prefix, Code unknown) {
  const json* errors = member(scope, "errors");
  if (errors == nullptr) return std::nullopt;
  const json* error = member(*errors, symbol);
  if (error == nullptr) return std::nullopt;
  return code_from(*error, names, prefix, unknown);
}

}  // namespace sparkdoc::fake
