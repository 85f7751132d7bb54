// torch/triton pairs are the triton release each torch minor's wheels require; the Unsloth/
// transformers pairs are 001's confirmed stack (Unsloth 2026.3.4 with transformers 5.2.0,
// 2026.3.17 with 5.3.0). Dated kKnownGoodMatrixDate.
#include "checks/known_good_matrix.h"

#include <array>

#include "core/version_compare.h"
#include "facts/python.h"

namespace sparkdoc::checks {
namespace {

constexpr std::array<TorchTriton, 7> kTorchTriton{{
    {"2.5", "3.1"},
    {"2.6", "3.2"},
    {"2.7", "3.3"},
    {"2.8", "3.4"},
    {"2.9", "3.5"},
    {"2.10", "3.6"},
    {"2.11", "3.6"},
}};

constexpr std::array<UnslothTransformers, 2> kUnslothTransformers{{
    {"2026.3.4", "5.2.0"},
    {"2026.3.17", "5.3.0"},
}};

}  // namespace

std::span<const TorchTriton> torch_triton_pairs() {
  return kTorchTriton;
}

std::span<const UnslothTransformers> unsloth_transformers_pairs() {
  return kUnslothTransformers;
}

std::optional<std::string_view> expected_triton(std::string_view torch_version) {
  for (const auto& pair : kTorchTriton) {
    if (same_release_prefix(torch_version, pair.torch, 2)) return pair.triton;
  }
  return std::nullopt;
}

std::optional<std::string_view> expected_transformers(std::string_view unsloth_version) {
  for (const auto& pair : kUnslothTransformers) {
    if (compare_versions(unsloth_version, pair.unsloth) == 0) return pair.transformers;
  }
  return std::nullopt;
}

}  // namespace sparkdoc::checks
