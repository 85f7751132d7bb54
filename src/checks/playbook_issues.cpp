// Rows from reference §5 (the NVIDIA/dgx-spark-playbooks tracker as read for that note);
// titles and gists are short paraphrases. Checked 2026-11-29 (kPlaybookTableChecked).
#include "checks/playbook_issues.h"

#include <array>
#include <string>

#include "checks/common.h"
#include "core/names.h"

namespace sparkdoc::checks {
namespace {

constexpr std::array<PlaybookIssue, 17> kIssues{{
    {"vlm-finetuning", 2, false, "Unable to build the VLM fine-tuning docker image", "2025-10",
     false, "the playbook was withdrawn for rework (maintainer, up to 2025-12-12)"},
    {"trt-llm", 3, false, "Qwen3-235B-A22B-FP4 very slow when served across two Sparks",
     "2025-10-22", true,
     "tensor parallelism (TP=2) across two Sparks crawls over ConnectX-7; keep TP in one node "
     "(G10)"},
    {"nccl", 7, false, "Error in \"NCCL for Two Sparks\"", "2025-10-25", true,
     "NCCL v2.28.3-1 breaks the nccl-tests build; the docs moved to v2.28.9-1 on 2025-12-15"},
    {"multi-agent-chatbot", 9, false, "Multi-Agent Chatbot Next.js error", "2025-10-27", false,
     "Next.js build error"},
    {"unsloth", 15, false, "Unsloth playbook issues", "2025-11-02", false,
     "curl fetched the GitHub blob page instead of the raw file, a trl version error and a "
     "missing hf_transfer"},
    {"unsloth", 14, true, "Unsloth playbook fixes (for #15)", "2025-11-02", true,
     "the fix for #15 (raw URL, trl pin, hf_transfer) is not merged; apply it by hand"},
    {"unsloth", 19, true, "Update instructions for Unsloth training", "2025-11-05", true,
     "a missing package ends in RuntimeError \"Unsloth: No config file found\""},
    {"platform", 22, false, "sm_121 lacks tcgen05, DSMEM, TMEM and TMA multicast", "2025-11-13",
     false, "SM12x uses the mma.* instruction family, not the datacenter Blackwell paths (G7)"},
    {"connect-two-sparks", 31, true, "Patch for the stacked Spark guide", "2025-12-03", true,
     "interface names, docker exec steps and the 25.11 container tag need the patch"},
    {"multi-agent-chatbot", 38, false, "Multi-agent chatbot: Turbopack not supported", "2025-12-11",
     true, "Turbopack is not supported; the referenced trt-llm docker-compose.yml returns 404"},
    {"vscode", 46, false, "NVIDIA Sync setup link broken", "2026-01-07", true,
     "the NVIDIA Sync setup link is dead"},
    {"pytorch-fine-tune", 50, true, "torch.compile + LoRA bug fix", "2026-01-13", true,
     "the LoRA scripts fail with --use_torch_compile; run without it"},
    {"sglang", 68, false, "SGLang: build.nvidia.com and GitHub name different images", "2026-03-22",
     true,
     "lmsysorg/sglang:spark (v0.5.3.post3) fails on Phi4MMForCausalLM; the repo uses "
     "nvcr.io/nvidia/sglang:26.02-py3"},
    {"vibe-coding", 80, false, "Vibe Coding VS Code instructions outdated", "2026-04-29", true,
     "the VS Code steps no longer match"},
    {"unsloth", 85, false, "test_unsloth.py trains a broken model (flat loss ~7)", "2026-07-17",
     true,
     "unsloth/Phi-3.5-mini-instruct (attention_factor 32) on pytorch:25.11-py3, transformers "
     "4.56.2, trl 0.26.1, unsloth 2026.7.3 trains to a flat loss; check the loss curve early"},
    {"llama-factory", 90, true, "Re-validate llama-factory", "2026-07-26", true,
     "prerequisites say CUDA 12.9 while the install pulls cu130 wheels"},
    {"vllm", 109, false, "nvidia/vllm is wrong, missing Ray", "2026-08-24", true,
     "current NGC vLLM images lack Ray (vllm #33445), so multi-node serving fails"},
}};

// Playbooks people name with --playbook. Row #22 is a platform note, not a playbook.
constexpr std::array<std::string_view, 12> kPlaybooks{
    "unsloth",
    "vllm",
    "sglang",
    "trt-llm",
    "nccl",
    "connect-two-sparks",
    "pytorch-fine-tune",
    "llama-factory",
    "vlm-finetuning",
    "multi-agent-chatbot",
    "vscode",
    "vibe-coding",
};

struct Alias {
  std::string_view alias;  // already normalised
  std::string_view playbook;
};

constexpr std::array<Alias, 16> kAliases{{
    {"trtllm", "trt-llm"},
    {"tensorrt-llm", "trt-llm"},
    {"tensorrtllm", "trt-llm"},
    {"two-sparks", "connect-two-sparks"},
    {"stacked-sparks", "connect-two-sparks"},
    {"stacked-spark", "connect-two-sparks"},
    {"nccl-for-two-sparks", "nccl"},
    {"pytorch-finetune", "pytorch-fine-tune"},
    {"pytorch-fine-tuning", "pytorch-fine-tune"},
    {"llamafactory", "llama-factory"},
    {"vlm-fine-tuning", "vlm-finetuning"},
    {"chatbot", "multi-agent-chatbot"},
    {"vs-code", "vscode"},
    {"nvidia-sync", "vscode"},
    {"unsloth-training", "unsloth"},
    {"sgl", "sglang"},
}};

}  // namespace

std::span<const PlaybookIssue> playbook_issues() {
  return kIssues;
}

std::span<const std::string_view> known_playbooks() {
  return kPlaybooks;
}

std::optional<std::string_view> canonical_playbook(std::string_view name) {
  // Spaces count as separators too: "Two Sparks" is a playbook title as people type it.
  std::string spaced(name);
  for (auto& c : spaced) {
    if (c == ' ' || c == '/') c = '-';
  }
  std::string wanted = pep503_name(spaced);
  for (std::string_view p : kPlaybooks) {
    if (p == wanted) return p;
  }
  for (const auto& a : kAliases) {
    if (a.alias == wanted) return a.playbook;
  }
  return std::nullopt;
}

}  // namespace sparkdoc::checks
