// The readers of a job's other files on the recipes' own texts (000's Dockerfile and docker run
// line, 001's pyproject pin and llama.cpp commands) and on the forms around them.
#include "job/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "job/shell.h"

namespace sparkdoc::job {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::string value(const std::vector<ConfigValue>& values, std::string_view key) {
  for (const auto& v : values) {
    if (v.key == key) return v.value;
  }
  return "<none>";
}

TEST(Shell, SplitsCommandsQuotesAndEnvironment) {
  auto c = parse_shell(
      "sync && ionice -c 2 -n 7 docker run --privileged \\\n  -e NVIDIA_VISIBLE_DEVICES=all "
      "--ulimit memlock=-1 img python3 -c \"import torch; print('x')\" | tee log; "
      "MAX_JOBS=8 CUDA_HOME=/usr/local/cuda pip install mamba-ssm --no-build-isolation # why\n"
      "echo $(date +%s) 'a b'",
      10);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_THAT(c[0].argv, ElementsAre("sync"));
  EXPECT_EQ(c[1].argv[0], "ionice");
  EXPECT_TRUE(c[1].has_pair("docker", "run"));
  EXPECT_EQ(c[1].option({"-e"}), "NVIDIA_VISIBLE_DEVICES=all");
  EXPECT_EQ(c[1].option({"--ulimit"}), "memlock=-1");
  EXPECT_EQ(c[1].argv.back(), "import torch; print('x')");
  EXPECT_EQ(c[1].line, 10u);
  EXPECT_THAT(c[2].argv, ElementsAre("tee", "log"));
  EXPECT_EQ(c[2].line, 11u) << "after the joined line";
  EXPECT_THAT(c[3].env, ElementsAre(Pair("MAX_JOBS", "8"), Pair("CUDA_HOME", "/usr/local/cuda")));
  EXPECT_THAT(c[3].argv, ElementsAre("pip", "install", "mamba-ssm", "--no-build-isolation"));
  EXPECT_THAT(c[4].argv, ElementsAre("echo", "$(date +%s)", "a b"));
  EXPECT_EQ(c[4].line, 12u);
}

// 000 §2, as written.
constexpr std::string_view kNemotronDockerfile = R"(FROM nvcr.io/nvidia/pytorch:26.04-py3
RUN pip install \
    "transformers==5.5.3" \
    "peft==0.14.0"
# causal-conv1d - must force-build
RUN CAUSAL_CONV1D_FORCE_BUILD=TRUE \
    TORCH_CUDA_ARCH_LIST="8.0;8.6;8.7;8.9;9.0;12.0;12.1+PTX" \
    CUDA_HOME=/usr/local/cuda \
    MAX_JOBS=8 \
    pip install causal-conv1d --no-binary causal-conv1d --no-build-isolation
ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True HF_HOME=/cache
CMD ["python3", "train.py"]
)";

TEST(Dockerfile, InstructionsAndTheCommandsOfRunLines) {
  auto d = parse_dockerfile(kNemotronDockerfile);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].keyword, "FROM");
  EXPECT_EQ(d[0].args, "nvcr.io/nvidia/pytorch:26.04-py3");
  EXPECT_EQ(d[2].line, 6u);
  EXPECT_EQ(d[3].keyword, "ENV");
  auto runs = dockerfile_commands(d);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_THAT(runs[0].argv, ElementsAre("pip", "install", "transformers==5.5.3", "peft==0.14.0"));
  EXPECT_EQ(runs[1].env_value("TORCH_CUDA_ARCH_LIST"), "8.0;8.6;8.7;8.9;9.0;12.0;12.1+PTX");
  EXPECT_EQ(runs[1].env_value("MAX_JOBS"), "8");
  EXPECT_EQ(runs[1].line, 6u);
  auto exec =
      dockerfile_commands(parse_dockerfile("RUN [\"sh\", \"-c\", \"pip install x && y\"]\n"));
  ASSERT_EQ(exec.size(), 2u);
  EXPECT_THAT(exec[0].argv, ElementsAre("pip", "install", "x"));
}

TEST(Requirements, Pep508AndItsForms) {
  auto r = parse_requirements_txt(
      "# pins\ntransformers==5.5.3\npeft >= 0.14 ; python_version > '3.8'\n"
      "--extra-index-url https://download.pytorch.org/whl/cu130\ntorch==2.11.0+cu130\n"
      "Unsloth_Zoo\nunsloth[cu130] @ git+https://github.com/unslothai/unsloth.git\n"
      "-e git+https://github.com/state-spaces/mamba.git#egg=mamba_ssm\n");
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].name, "transformers");
  EXPECT_EQ(r[0].pinned(), "5.5.3");
  EXPECT_EQ(r[0].line, 2u);
  EXPECT_EQ(r[1].specifier, ">=0.14");
  EXPECT_FALSE(r[1].pinned());
  EXPECT_EQ(r[2].pinned(), "2.11.0+cu130");
  EXPECT_EQ(r[3].name, "unsloth-zoo");
  EXPECT_EQ(r[4].specifier, "@ git+https://github.com/unslothai/unsloth.git");
  EXPECT_EQ(r[5].name, "mamba-ssm");
}

TEST(Pyproject, DependencyListsAndTables) {
  auto t = parse_pyproject(R"([project]
name = "ner"
dependencies = [
  "transformers==5.2.0",  # Unsloth 2026.3.4
  "peft==0.18.1",
]
[tool.uv.sources]
unsloth = { git = "https://github.com/unslothai/unsloth" }
[tool.poetry.dependencies]
python = "^3.12"
transformers = "==5.2.0"
accelerate = { version = "1.3.0" }
)");
  std::vector<std::string> names;
  for (const auto& r : t.requirements) names.push_back(r.name + r.specifier);
  EXPECT_THAT(names, ElementsAre("transformers==5.2.0", "peft==0.18.1", "transformers==5.2.0",
                                 "accelerate==1.3.0"));
  EXPECT_EQ(t.requirements[0].line, 4u);  // each item of a multi-line array on its own line
  EXPECT_EQ(t.requirements[1].line, 5u);
  EXPECT_EQ(value(t.values, "project.name"), "\"ner\"");
}

TEST(UvLock, PackagesWithTheirVersions) {
  auto r = parse_uv_lock(R"(version = 1
[[package]]
name = "transformers"
version = "5.3.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "Unsloth"
version = "2026.3.17"
)");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "transformers");
  EXPECT_EQ(r[0].pinned(), "5.3.0");
  EXPECT_EQ(r[0].line, 3u);
  EXPECT_EQ(r[1].name, "unsloth");
}

TEST(Yaml, ComposeAndAccelerateConfigs) {
  auto c = parse_yaml(R"(services:
  train:
    image: "nvcr.io/nvidia/pytorch:25.10-py3"
    ipc: host   # shared memory
    environment:
    - NVIDIA_VISIBLE_DEVICES=all
    - TOKENIZERS_PARALLELISM=false
    ulimits:
      memlock: -1
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
    command: >
      python train.py
      --epochs 3
)");
  EXPECT_EQ(value(c, "services.train.image"), "nvcr.io/nvidia/pytorch:25.10-py3");
  EXPECT_EQ(value(c, "services.train.ipc"), "host");
  EXPECT_EQ(value(c, "services.train.environment.0"), "NVIDIA_VISIBLE_DEVICES=all");
  EXPECT_EQ(value(c, "services.train.environment.1"), "TOKENIZERS_PARALLELISM=false");
  EXPECT_EQ(value(c, "services.train.ulimits.memlock"), "-1");
  EXPECT_EQ(value(c, "services.train.deploy.resources.reservations.devices.0.driver"), "nvidia");
  EXPECT_EQ(value(c, "services.train.deploy.resources.reservations.devices.0.count"), "all");
  EXPECT_EQ(value(c, "services.train.deploy.resources.reservations.devices.0.capabilities.0"),
            "gpu");
  EXPECT_EQ(value(c, "services.train.command"), "python train.py --epochs 3");

  auto a = parse_yaml(
      "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\n"
      "fsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\nnum_processes: 2\n");
  EXPECT_EQ(value(a, "distributed_type"), "FSDP");
  EXPECT_EQ(value(a, "fsdp_config.fsdp_sharding_strategy"), "FULL_SHARD");
  EXPECT_EQ(value(a, "num_processes"), "2");
}

TEST(JsonConfig, DeepSpeedKeysByPath) {
  auto j = parse_json_config(
      "{\n  \"zero_optimization\": {\n    \"stage\": 3\n  },\n"
      "  \"bf16\": {\"enabled\": true}\n}");
  EXPECT_EQ(value(j, "zero_optimization.stage"), "3");
  EXPECT_EQ(value(j, "bf16.enabled"), "true");
  EXPECT_TRUE(parse_json_config("not json").empty());
}

TEST(CMakeCache, LlamaCppBuildOptions) {
  auto c = parse_cmake_cache(
      "# This is the CMakeCache file.\n//Flag\nGGML_CUDA:BOOL=ON\n"
      "CMAKE_CUDA_ARCHITECTURES:STRING=121\nGGML_CUDA_FORCE_CUBLAS:BOOL=OFF\n");
  EXPECT_EQ(value(c, "GGML_CUDA"), "ON");
  EXPECT_EQ(value(c, "CMAKE_CUDA_ARCHITECTURES"), "121");
  EXPECT_EQ(c[1].line, 4u);
}

TEST(Makefile, RecipeLinesAreCommands) {
  auto c = makefile_commands("train:\n\t@MAX_JOBS=8 pip install \\\n\t  flash-attn\nx = 1\n");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_THAT(c[0].argv, ElementsAre("pip", "install", "flash-attn"));
  EXPECT_EQ(c[0].env_value("MAX_JOBS"), "8");
  EXPECT_EQ(c[0].line, 2u);
}

TEST(JobReaders, AnythingIsAccepted) {
  for (std::string_view junk : {std::string_view("\x01\xff\"'[{"), std::string_view("RUN \\"),
                                std::string_view("- - - :\n  : :\n"), std::string_view("[[[")}) {
    (void)parse_shell(junk);
    (void)dockerfile_commands(parse_dockerfile(junk));
    (void)parse_requirements_txt(junk);
    (void)parse_pyproject(junk);
    (void)parse_uv_lock(junk);
    (void)parse_yaml(junk);
    (void)parse_json_config(junk);
    (void)parse_cmake_cache(junk);
    (void)makefile_commands(junk);
  }
}

}  // namespace
}  // namespace sparkdoc::job
