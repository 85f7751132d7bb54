// What several lint rules look for in a job: the model-loading calls of Python scripts and the
// model they load, the container runs of shell lines, source builds, and what a job sets in its
// environment. Internal to the checks; pure.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checks/model_families.h"
#include "model/job.h"

namespace sparkdoc::checks::lint {

// Every call of every Python file, with its file.
void for_each_call(const job::Job& job,
                   const std::function<void(const job::JobFile&, const job::PyCall&)>& fn);

// from_pretrained of transformers, peft or unsloth (AutoModel*, *ForCausalLM, FastModel,
// FastLanguageModel, ...), whatever the alias.
bool is_model_load(const job::PyCall& call);
bool is_tokenizer_load(const job::PyCall& call);
// The model a load names: its first argument or model_name= / pretrained_model_name_or_path=.
std::optional<std::string> loaded_model(const job::PyCall& call);
// The family of the first model a file loads (nullptr when unknown).
const ModelFamily* file_model_family(const job::JobFile& file);

// The keyword value of a call, following a name to the value the script assigned it
// (`args = SFTConfig(...)`; `trainer = SFTTrainer(args=args)`).
const job::PyValue* resolved(const job::JobFile& file, const job::PyValue* value, uint32_t line);

// Where a finding about a call's argument points: the line of the value (a keyword spread over
// lines of its own, or the assignment a name was followed to), else the call's.
uint32_t line_of(const job::PyCall& call, const job::PyValue* value);

// Whether `call` constructs one of these classes (by its last part: "SFTConfig").
bool constructs(const job::PyCall& call, std::initializer_list<std::string_view> classes);

// A `docker run` (or podman/nerdctl run, docker container run) and its options: the words
// between "run" and the image.
struct ContainerRun {
  const job::JobFile* file = nullptr;
  const job::Command* command = nullptr;
  std::vector<std::string> options;
  std::string image;
  size_t run_at = 0;  // index of "run" in argv
  // Whether an option is present ("--ipc=host" matches "--ipc host" and "--ipc=host").
  bool has(std::string_view name, std::string_view value = "") const;
  std::vector<std::string> values(std::string_view name) const;  // every value of a repeated option
  bool uses_gpu() const;  // --gpus, --runtime=nvidia, nvidia devices, or NVIDIA_VISIBLE_DEVICES
  // A container that only does a job on the host, as 000 §6's cleanup does: a small base image
  // (alpine, busybox, debian, ubuntu, ...) running a shell, with no GPU asked for by name. The
  // training-container rules do not apply to it.
  bool host_maintenance() const;
  // A container that runs one inline Python snippet (`python3 -c "..."`), as 000 §6's GPU-memory
  // preflight does: a check, not a training process.
  bool inline_python() const;
  // uses_gpu(), not host_maintenance() and not inline_python(): the rules about a training
  // container apply.
  bool training() const { return uses_gpu() && !host_maintenance() && !inline_python(); }
};
std::vector<ContainerRun> container_runs(const job::Job& job);

// Whether a shell-ish file (shell, Dockerfile, Makefile, compose, --cmd) is a command file.
bool has_commands(const job::JobFile& file);

// A value the job's file sets for an environment variable before `line` (Dockerfile ENV/ARG,
// `export X=`, `X=... cmd` on the line itself, os.environ["X"] = ...), or nullopt.
std::optional<std::string> env_set(const job::JobFile& file, std::string_view name, uint32_t line,
                                   const job::Command* command = nullptr);

// A value a job sets, with where: an environment variable (ENV/ARG, export, NAME=value before a
// command) or a CMake cache variable (-DNAME=VALUE, CMakeCache.txt).
struct Setting {
  const job::JobFile* file = nullptr;
  uint32_t line = 0;
  std::string value;
};

// `pip install` / `uv pip install` / `uv add` commands and the packages they name (PEP 503).
struct Install {
  const job::JobFile* file = nullptr;
  const job::Command* command = nullptr;
  std::vector<std::string> packages;  // normalised names, git URLs reduced to the repo name
  bool no_deps = false;
  bool no_build_isolation = false;
  bool no_binary = false;
  bool names(std::string_view package) const;
};
std::vector<Install> installs(const job::Job& job);

}  // namespace sparkdoc::checks::lint
