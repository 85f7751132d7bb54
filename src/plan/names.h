// Dotted module paths ("model.layers.0.mlp.gate_proj"): the last segment and what is above it.
// Internal to the plan component.
#pragma once

#include <string_view>

namespace sparkdoc::plan::detail {

inline std::string_view leaf_of(std::string_view path) {
  auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

inline std::string_view parent_of(std::string_view path) {
  auto dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

}  // namespace sparkdoc::plan::detail
