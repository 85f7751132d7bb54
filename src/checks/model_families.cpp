#include "checks/model_families.h"

#include <array>

#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

constexpr std::array<Pin, 4> kNemotronPins{
    {{"transformers", "5.5.3"}, {"peft", "0.14.0"}, {"trl", "0.15.2"}, {"accelerate", "1.3.0"}}};
constexpr std::array<ValidatedStack, 1> kNemotronStacks{
    {{"NGC PyTorch 26.04 (000 §2)", kNemotronPins}}};

constexpr std::array<Pin, 4> kQwenPins1{{{"transformers", "5.2.0"},
                                         {"unsloth", "2026.3.4"},
                                         {"peft", "0.18.1"},
                                         {"torch", "2.11.0+cu130"}}};
constexpr std::array<Pin, 4> kQwenPins2{{{"transformers", "5.3.0"},
                                         {"unsloth", "2026.3.17"},
                                         {"peft", "0.18.1"},
                                         {"torch", "2.11.0+cu130"}}};
constexpr std::array<ValidatedStack, 2> kQwenStacks{
    {{"Unsloth 2026.3.4 (001)", kQwenPins1}, {"Unsloth 2026.3.17 (001)", kQwenPins2}}};

const ModelFamily kNemotronH{.model_type = "nemotron_h",
                             .name = "Nemotron-H (Nemotron 3 Nano, Super)",
                             .moe = true,
                             .mamba_hybrid = true,
                             .native_since = "5.5.3",
                             .stacks = kNemotronStacks,
                             .source = "000 §2"};

const ModelFamily kQwen35Moe{.model_type = "qwen3_5_moe",
                             .name = "Qwen3.5 MoE (Qwen3.5-35B-A3B)",
                             .moe = true,
                             .vision_language = true,
                             .native_since = "5.2.0",
                             .stacks = kQwenStacks,
                             .seq_validated = 2048,
                             .seq_oom = 8192,
                             .source = "001"};

const ModelFamily kOtherMoe{.name = "a mixture-of-experts model", .moe = true, .source = "001"};

bool has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// "-a3b", "-a22b", "_a3b": an active-parameter suffix that names an MoE.
bool active_suffix(std::string_view s) {
  for (size_t i = 0; i + 2 < s.size(); ++i) {
    if ((s[i] == '-' || s[i] == '_') && s[i + 1] == 'a' && s[i + 2] >= '0' && s[i + 2] <= '9') {
      size_t j = i + 2;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
      if (j < s.size() && (s[j] == 'b' || s[j] == '.')) return true;
    }
  }
  return false;
}

constexpr std::array<const ModelFamily*, 2> kKnown{&kNemotronH, &kQwen35Moe};

}  // namespace

std::span<const ModelFamily* const> known_families() {
  return kKnown;
}

const ModelFamily* family_for_model(std::string_view id_or_type) {
  const std::string s = to_lower(id_or_type);
  if (s == "nemotron_h" || has(s, "nemotron-h") || has(s, "nemotronh") ||
      has(s, "nemotron-3-nano") || has(s, "nemotron-3-super") || has(s, "nemotron-3-ultra") ||
      has(s, "nemotron_h")) {
    return &kNemotronH;
  }
  if (s == "qwen3_5_moe" || ((has(s, "qwen3.5") || has(s, "qwen3_5")) && active_suffix(s))) {
    return &kQwen35Moe;
  }
  if (active_suffix(s) || has(s, "mixtral") || has(s, "gpt-oss") || has(s, "olmoe") ||
      has(s, "deepseek-v") || has(s, "-moe") || has(s, "_moe")) {
    return &kOtherMoe;
  }
  return nullptr;
}

}  // namespace sparkdoc::checks
