// `sparkdoc plan`: will this model and training method fit. Pure: the checkpoint's headers and
// config.json come in already read (plan/locate.h reads them), available memory comes in as a
// number (the CLI takes it from a live snapshot or a recorded one), and the result renders as
// text or JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "plan/config.h"
#include "plan/lora.h"
#include "plan/memory.h"
#include "plan/model.h"
#include "plan/time.h"
#include "safetensors/checkpoint.h"

namespace sparkdoc::plan {

struct PlanRequest {
  Training training = Training::kLora;
  LoraRequest lora;           // ignored for full fine-tuning
  std::optional<double> alpha;
  TrainingSetup setup;
  std::string dtype_override; // "bf16", "fp16", "fp32" or "" (config.json's dtype)
  // Where setup.cuda_context_bytes comes from, for the budget's source column ("" : the H200's
  // measured context, Constants::cuda_context_bytes).
  std::string cuda_context_source;
  // The time estimate: made when hardware figures are given.
  std::optional<Hardware> hardware;
  RunShape run;
};

struct Available {
  uint64_t bytes = 0;
  std::string source;  // "live: MemAvailable + SwapFree - 8 GiB floor", "snapshot x.json", ...
};

// The seq x batch frontier around the plan: what training needs at each micro-batch size (rows)
// and sequence length (columns), the plan's own among them. Powers of two (batch 1-16, seq
// 512-32768, seven columns), with the plan's seq and batch put in where they are not.
struct Frontier {
  std::vector<uint64_t> seqs;               // ascending
  std::vector<uint64_t> batches;            // ascending
  std::vector<std::vector<uint64_t>> need;  // [batch][seq]: Budget::need there
};

// How a frontier cell stands against `available`: the need fits with a tenth to spare, fits
// within that tenth (the estimate's error: Constants' allocator slack keeps the measured runs
// within +-10 %), or does not fit.
enum class Margin { kFits, kTight, kDoesNotFit };
Margin margin(uint64_t need, uint64_t available);

struct Fit {
  bool known = false;          // an available figure was given
  Available available;
  bool fits = false;           // training and the chosen loader's load both fit
  bool training_fits = false;  // need <= available
  bool load_fits = false;      // the chosen loader's peak <= available
  bool mmap_load_fits = false;
  uint64_t max_tokens = 0;     // largest seq×batch whose need fits (0: none)
  uint64_t max_seq_at_batch = 0;
  uint64_t max_batch_at_seq = 0;
  Frontier frontier;
};

struct Plan {
  std::string model_dir;
  std::string resolved_from;
  std::string architecture;    // architectures[0] or model_type
  size_t shards = 0;
  uint64_t checkpoint_bytes = 0;  // tensor data on disk
  bool header_only = false;       // some shard holds no (or not all) data
  ModelView model;
  PlanRequest request;
  std::optional<LoraCount> lora;
  uint64_t total_params = 0;      // the base model
  uint64_t trainable = 0;
  uint64_t all_params = 0;        // PEFT's all_param: base + adapters
  Budget budget;
  StepTime time;
  Fit fit;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

// Each budget term and where its number comes from (a measurement, a formula, a seed), in the
// order the plan prints them: {"weights", "bf16, 2 bytes per parameter (config.json)"}, ...
std::vector<std::pair<std::string, std::string>> budget_sources(
    const Plan& plan, const Constants& constants = default_constants());

Result<Plan> make_plan(const safetensors::Checkpoint& checkpoint, const ModelConfig& config,
                       const PlanRequest& request, const Constants& constants = default_constants());

// Judges the plan against available memory and finds the largest seq×batch that fits.
void judge_fit(Plan& plan, const Available& available,
               const Constants& constants = default_constants());

std::string render_plan_text(const Plan& plan);
nlohmann::json render_plan_json(const Plan& plan);

// 1234567 -> "1,234,567".
std::string with_commas(uint64_t n);

}  // namespace sparkdoc::plan
