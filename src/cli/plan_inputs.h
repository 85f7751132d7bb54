// What `sparkdoc plan` is asked, read from its options before any engine runs: the request
// (method, setup, the CUDA context and hardware of the machine planned for), that machine's
// available memory, and where the checkpoint's headers come from (a path, the Hugging Face
// cache, or the Hub through hub/). plan_command.cpp parses the options, calls these, plans and
// prints.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/result.h"
#include "facts/platform.h"
#include "hub/fetch.h"
#include "hub/model_id.h"
#include "plan/plan.h"

namespace sparkdoc::cli {

struct PlanFlags {
  std::string model;
  bool full = false;
  uint64_t lora = 0;
  uint64_t qlora = 0;
  double alpha = 0;
  std::string targets;
  bool experts = false;
  std::string framework = "peft";
  std::string optim = "adamw";
  uint64_t seq = 2048;
  uint64_t batch = 1;
  bool grad_ckpt = false;
  std::string loader = "mmap";
  std::string dtype;
  std::string snapshot_file;
  std::string available;
  std::string cuda_context;
  std::string attention = "sdpa";
  std::string linear_attention = "torch";
  uint64_t samples = 0;
  uint64_t epochs = 1;
  uint64_t grad_accum = 1;
  uint64_t steps = 0;
  double tflops = 0;
  double bandwidth = 0;
  bool no_memory = false;
  bool strict_size = false;
  bool json = false;
  bool timing = false;
  std::string html;
  std::string revision;
  bool offline = false;
  bool refresh = false;
};

// The machine planned for: its available memory (--available, a recorded snapshot, or this
// machine by G3's headroom rule) and, when a machine was read, its platform and any recorded
// `sparkdoc bw` figure. Nothing is read with --no-memory.
struct PlanMachine {
  std::optional<plan::Available> available;
  std::optional<facts::Platform> platform;
  std::optional<double> measured_bandwidth_gbs;  // `sparkdoc bw`'s device copy, when recorded
};
// Errors: --available is no size, the snapshot cannot be read.
Result<PlanMachine> read_plan_machine(const PlanFlags& flags);

// The request the options describe, with the machine's CUDA context and hardware figures.
// Errors: options that contradict each other or name nothing sparkdoc knows.
Result<plan::PlanRequest> plan_request(const PlanFlags& flags, const PlanMachine& machine);

// Where the headers are read: MODEL as a path or a Hugging Face cache entry (nothing fetched),
// or a Hub model whose headers are fetched into sparkdoc's cache (`id` and `fetched` set).
struct PlanSource {
  std::string path;
  std::optional<hub::ModelId> id;
  std::optional<hub::FetchResult> fetched;
};
// Errors: --revision with a path, no such file and no Hub model, --strict-size with a model
// not downloaded, and every refusal of the fetch.
Result<PlanSource> plan_source(const PlanFlags& flags);
// For a fetched model: the plan says where its headers came from (resolved_from, a note), and
// the JSON's "hub" object.
void tell_source(plan::Plan& plan, const PlanSource& source);
nlohmann::json hub_json(const PlanSource& source);

}  // namespace sparkdoc::cli
