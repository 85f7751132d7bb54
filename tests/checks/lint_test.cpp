// The lint rules on files: every rule has a folder of files it fires on, with the findings it
// must give (tests/fixtures/lint/rules/L<n>/fires/expected), and a folder it must stay quiet on
// (rules/L<n>/quiet); the recipes' own files (recipes/000, recipes/001) lint with no FAIL and
// give exactly their expected findings; and each seed mistake planted into a recipe gives
// exactly one new finding, on the planted line.
#include "checks/lint.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "job/read.h"

namespace sparkdoc::checks {
namespace {

namespace fs = std::filesystem;

const fs::path kLint = fs::path(SPARKDOC_FIXTURES) / "lint";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "L9 FAIL train.py:29": what a finding is pinned to; the detail is the rule's business.
std::string where(const LintFinding& f) {
  return fmt::format("{} {} {}:{}", f.id, verdict_word(f.verdict), f.file, f.line);
}

std::vector<std::string> lint_folder(const fs::path& dir,
                                     const std::vector<std::string>& only = {}) {
  auto job = job::read_job({dir.string()});
  EXPECT_TRUE(job.has_value()) << dir;
  if (!job) return {};
  std::vector<std::string> out;
  for (const LintFinding& f : run_lint(*job, LintContext{}, only)) out.push_back(where(f));
  return out;
}

// The lines of an `expected` file, without blank lines and # comments.
std::vector<std::string> expected_lines(const fs::path& p) {
  std::vector<std::string> out;
  const std::string text = slurp(p);
  for (std::string_view line : split(text, '\n')) {
    line = trim(line);
    if (line.empty() || line.starts_with("#")) continue;
    out.emplace_back(line);
  }
  return out;
}

TEST(LintRules, EveryRuleFiresOnItsFixtureAndStaysQuietOnTheOther) {
  size_t rules = 0;
  for (const CheckInfo& rule : all_lint_rules()) {
    ++rules;
    const fs::path dir = kLint / "rules" / std::string(rule.id);
    SCOPED_TRACE(rule.id);
    ASSERT_TRUE(fs::is_regular_file(dir / "fires" / "expected"))
        << "every rule needs a fixture it fires on: " << dir / "fires";
    ASSERT_TRUE(fs::is_directory(dir / "quiet"))
        << "every rule needs a fixture it stays quiet on: " << dir / "quiet";
    std::vector<std::string> expected = expected_lines(dir / "fires" / "expected");
    ASSERT_FALSE(expected.empty()) << "an empty expectation shows nothing";
    EXPECT_EQ(lint_folder(dir / "fires", {std::string(rule.id)}), expected);
    EXPECT_THAT(lint_folder(dir / "quiet", {std::string(rule.id)}), ::testing::IsEmpty());
  }
  EXPECT_GE(rules, 42U);
}

TEST(LintRules, FixtureFoldersNameOnlyRulesThatExist) {
  std::set<std::string> ids;
  for (const CheckInfo& rule : all_lint_rules()) ids.emplace(rule.id);
  for (const auto& entry : fs::directory_iterator(kLint / "rules")) {
    EXPECT_TRUE(ids.contains(entry.path().filename().string())) << entry.path();
  }
}

// An ignore comment silences its rule on its line, or, alone on a line, on the line below: in
// shell files as in Python.
TEST(LintIgnore, ACommentSilencesItsRuleOnItsLineAndALoneCommentTheLineBelow) {
  auto findings = [](std::string_view text) {
    job::Job job;
    job.files.push_back(job::read_job_text("run.sh", job::FileKind::kShell, text));
    std::vector<std::string> out;
    for (const LintFinding& f : run_lint(job, LintContext{}, {"L22", "L27"}))
      out.push_back(where(f));
    return out;
  };
  const std::string run = "docker run --privileged --ipc=host img python3 train.py";
  EXPECT_THAT(findings(run + "\n"), ::testing::ElementsAre("L22 INFO run.sh:1"));
  EXPECT_THAT(findings(run + "  # sparkdoc: ignore L22\n"), ::testing::IsEmpty());
  EXPECT_THAT(findings("# sparkdoc: ignore L22 -- it needs /proc/sys\n" + run + "\n"),
              ::testing::IsEmpty());
  EXPECT_THAT(findings("# sparkdoc: ignore L27\n" + run + "\n"),
              ::testing::ElementsAre("L22 INFO run.sh:2"));
  EXPECT_THAT(findings("# sparkdoc: ignore L22\n\n" + run + "\n"),
              ::testing::ElementsAre("L22 INFO run.sh:3"));
}

TEST(LintRecipes, TheRecipesOwnFilesLintWithNoFailAndTheirExpectedFindings) {
  for (const char* recipe : {"000", "001"}) {
    SCOPED_TRACE(recipe);
    std::vector<std::string> got = lint_folder(kLint / "recipes" / recipe);
    for (const std::string& g : got) EXPECT_EQ(g.find(" FAIL "), std::string::npos) << g;
    EXPECT_EQ(got, expected_lines(kLint / "recipes" / (std::string(recipe) + ".expected")));
  }
}

// A seed's mistake planted into a recipe: `from` (text on one line of `file`) becomes `to`, and
// the recipe then gives exactly one finding more than before.
struct Planted {
  const char* recipe;
  const char* file;
  const char* from;
  const char* to;
  const char* finding;  // "L2 WARN train.py:34"
};

std::ostream& operator<<(std::ostream& o, const Planted& p) {
  return o << p.recipe << "/" << p.file << ": " << p.finding;
}

class LintPlanted : public ::testing::TestWithParam<Planted> {};

TEST_P(LintPlanted, GivesExactlyTheExpectedFindingOnItsLine) {
  const Planted& p = GetParam();
  const fs::path from = kLint / "recipes" / p.recipe;
  const fs::path dir = fs::path(::testing::TempDir()) / fmt::format("planted-{}", ::getpid());
  fs::remove_all(dir);
  fs::copy(from, dir, fs::copy_options::recursive);
  std::string text = slurp(dir / p.file);
  const size_t at = text.find(p.from);
  ASSERT_NE(at, std::string::npos) << p.from;
  ASSERT_EQ(text.find(p.from, at + 1), std::string::npos) << "ambiguous: " << p.from;
  text.replace(at, std::string_view(p.from).size(), p.to);
  std::ofstream(dir / p.file, std::ios::trunc) << text;

  std::vector<std::string> before = lint_folder(from);
  std::vector<std::string> after = lint_folder(dir);
  fs::remove_all(dir);
  std::vector<std::string> added;
  std::multiset<std::string> old(before.begin(), before.end());
  for (const std::string& a : after) {
    if (auto it = old.find(a); it != old.end()) {
      old.erase(it);
    } else {
      added.push_back(a);
    }
  }
  EXPECT_THAT(added, ::testing::ElementsAre(p.finding));
  EXPECT_THAT(old, ::testing::IsEmpty()) << "the plant silenced a finding";
}

INSTANTIATE_TEST_SUITE_P(
    SeedMistakes, LintPlanted,
    ::testing::Values(
        // 000 §3: the deprecated keyword and the loading flags.
        Planted{"000", "train.py", "    dtype=torch.bfloat16,", "    torch_dtype=torch.bfloat16,",
                "L2 WARN train.py:34"},
        Planted{"000", "train.py", "low_cpu_mem_usage=True,", "low_cpu_mem_usage=False,",
                "L3 WARN train.py:36"},
        Planted{"000", "train.py", "device_map={\"\": 0},", "device_map=\"auto\",",
                "L4 WARN train.py:35"},
        // 000 §8: gradient checkpointing through the model's own switch.
        Planted{"000", "train.py",
                "model.base_model.model._set_gradient_checkpointing(enable=True, "
                "gradient_checkpointing_func=_gc_func)",
                "model.gradient_checkpointing_enable()", "L20 WARN train.py:42"},
        // 000 §2 / §4: source builds.
        Planted{"000", "Dockerfile",
                "RUN TORCH_CUDA_ARCH_LIST=\"8.0;8.6;8.7;8.9;9.0;12.0;12.1+PTX\" \\\n    CUDA_HOME",
                "RUN TORCH_CUDA_ARCH_LIST=\"8.0;8.6;8.7;8.9;9.0\" \\\n    CUDA_HOME",
                "L29 FAIL Dockerfile:18"},
        Planted{"000", "Dockerfile", "RUN CAUSAL_CONV1D_FORCE_BUILD=TRUE \\\n", "RUN \\\n",
                "L32 WARN Dockerfile:12"},
        Planted{"000", "Dockerfile", "-DCOMPUTE_CAPABILITY=\"80;86;87;89;90;120;121\"",
                "-DCOMPUTE_CAPABILITY=\"80;86;87;89;90\"", "L34 WARN Dockerfile:34"},
        Planted{"000", "Dockerfile", "pip install unsloth unsloth_zoo --no-deps",
                "pip install unsloth unsloth_zoo", "L11 WARN Dockerfile:41"},
        // 000 §1 / §6: the container.
        Planted{"000", "run.sh", "  --ipc=host \\\n", "", "L23 WARN run.sh:13"},
        Planted{"000", "run.sh", "  --ulimit memlock=-1 \\\n", "", "L24 WARN run.sh:13"},
        // 001: Unsloth and TRL.
        Planted{"001", "train.py", "from unsloth import FastModel  # correct for MoE",
                "from unsloth import FastLanguageModel as FastModel", "L8 WARN train.py:18"},
        Planted{"001", "train.py", "lora_dropout=0.0,", "lora_dropout=0.05,",
                "L9 FAIL train.py:29"},
        Planted{"001", "train.py", "use_gradient_checkpointing=\"unsloth\",",
                "use_gradient_checkpointing=True,", "L10 INFO train.py:35"},
        Planted{"001", "train.py", "    warmup_steps=5,", "    warmup_ratio=0.03,",
                "L16 WARN train.py:47"},
        Planted{"001", "train.py", "    packing=False,", "    packing=True,",
                "L18 INFO train.py:53"},
        Planted{"001", "train.py", "dataset_num_proc=1,", "dataset_num_proc=8,",
                "L19 WARN train.py:54"},
        Planted{"001", "train.py", "    load_in_4bit=False,  # bf16, not QLoRA",
                "    load_in_4bit=True,", "L6 WARN train.py:21"},
        // 001: the stack and the optimiser's package.
        Planted{"001", "pyproject.toml", "\"transformers==5.2.0\",", "\"transformers==5.5.3\",",
                "L41 WARN pyproject.toml:7"},
        Planted{"001", "pyproject.toml",
                "  \"bitsandbytes\",          # AdamW 8-bit optimizer (not quantization)\n", "",
                "L42 WARN train.py:51"},
        // 001 "Inference: llama.cpp".
        Planted{"001", "llama.sh", "  -DGGML_CUDA_F16=ON \\\n",
                "  -DGGML_CUDA_F16=ON \\\n  -DGGML_CUDA_FORCE_CUBLAS=ON \\\n",
                "L36 FAIL llama.sh:4"},
        Planted{"001", "llama.sh", "-DCMAKE_CUDA_ARCHITECTURES=121",
                "-DCMAKE_CUDA_ARCHITECTURES=90", "L35 WARN llama.sh:4"},
        Planted{"001", "llama.sh", "  --no-mmap \\\n", "", "L37 INFO llama.sh:11"},
        Planted{"001", "llama.sh", "--ctx-size 16384", "--ctx-size 65536",
                "L39 INFO llama.sh:11"}));

}  // namespace
}  // namespace sparkdoc::checks
