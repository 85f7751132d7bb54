// The readers of a job's other files (Dockerfile, compose, shell, Makefile, requirements,
// pyproject.toml, uv.lock, YAML/JSON configs, CMakeCache.txt, a --cmd line) and then every lint
// rule over what they read, over any bytes: the first byte picks the kind, the rest is the
// file. A rule that throws turns into a finding, so only a crash, a sanitizer report or a trap
// here is a bug. Seeds in corpus/fuzz_job_files/: one file of each kind from the recipes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checks/lint.h"
#include "job/read.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr int kKinds = static_cast<int>(sparkdoc::job::FileKind::kCommandLine) + 1;
  const auto kind = static_cast<sparkdoc::job::FileKind>(data[0] % kKinds);
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  sparkdoc::job::Job job;
  job.files.push_back(sparkdoc::job::read_job_text("fuzzed", kind, text));
  for (const auto& c : job.files.front().commands) {
    for (const auto& word : c.argv) (void)word.size();
  }
  for (const auto& f : sparkdoc::checks::run_lint(job, sparkdoc::checks::LintContext{})) {
    if (f.id.empty() || f.id[0] != 'L') __builtin_trap();
    // A rule that threw is reported without a file (its detail may quote the input, which can
    // say anything, so the text is no test).
    if (f.file.empty()) __builtin_trap();
  }
  return 0;
}
