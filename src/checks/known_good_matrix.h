// Dated known-good version pairs for G9's drift check on bare-pip environments. One static
// table each; a pair outside them is not judged.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "facts/python.h"

namespace sparkdoc::checks {

inline constexpr std::string_view kKnownGoodMatrixDate = "2026-11-29";

// torch major.minor -> the triton major.minor its wheels pin.
struct TorchTriton {
  std::string_view torch;
  std::string_view triton;
};
std::span<const TorchTriton> torch_triton_pairs();

// Unsloth release -> the transformers release it was validated with (001).
struct UnslothTransformers {
  std::string_view unsloth;
  std::string_view transformers;
};
std::span<const UnslothTransformers> unsloth_transformers_pairs();

// The triton release expected for a torch version ("2.9.1+cu130" -> "3.5"); nullopt if unknown.
std::optional<std::string_view> expected_triton(std::string_view torch_version);
// The transformers release expected for an Unsloth version; nullopt if not in the table.
std::optional<std::string_view> expected_transformers(std::string_view unsloth_version);

}  // namespace sparkdoc::checks
