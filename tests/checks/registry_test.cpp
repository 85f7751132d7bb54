#include "checks/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "facts/platform.h"
#include "model/snapshot_json.h"
#include "snapshots.h"

namespace sparkdoc::checks {
namespace {

using ::testing::ElementsAre;
using testing::gb10_snapshot;
using testing::h200_snapshot;
using ::testing::HasSubstr;

std::vector<std::string> lines(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    out.push_back(f.id + " " + std::string(verdict_word(f.verdict)) + ": " + f.detail);
  }
  return out;
}

std::vector<std::string> ids(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.id);
  return out;
}

TEST(CheckTable, OrderAndFields) {
  std::vector<std::string> got;
  for (const auto& c : all_checks()) {
    got.emplace_back(c.id);
    EXPECT_FALSE(c.title.empty()) << c.id;
    EXPECT_FALSE(c.reads.empty()) << c.id;
    EXPECT_FALSE(c.symptom.empty()) << c.id;
    EXPECT_FALSE(c.cause.empty()) << c.id;
    EXPECT_FALSE(c.how_checked.empty()) << c.id;
    EXPECT_FALSE(c.fix.empty()) << c.id;
    EXPECT_FALSE(c.source.empty()) << c.id;
    EXPECT_FALSE(c.keywords.empty()) << c.id;
    EXPECT_NE(c.run, nullptr) << c.id;
  }
  EXPECT_THAT(got,
              ElementsAre("G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8", "G9", "G10", "S1", "S2",
                          "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10", "F1", "F2", "F3", "F4",
                          "F5", "F6", "F7", "F8", "N1", "N2", "N3", "N4", "N5", "N6"));
  EXPECT_EQ(all_checks()[2].source, "002 G3");
  EXPECT_EQ(all_checks()[15].source, "000 §6");
}

TEST(CheckTable, FindCheckIgnoresCase) {
  ASSERT_NE(find_check("g3"), nullptr);
  EXPECT_EQ(find_check("g3")->id, "G3");
  EXPECT_EQ(find_check(" s1 ")->id, "S1");
  EXPECT_EQ(find_check("G10")->id, "G10");
  EXPECT_EQ(find_check("G11"), nullptr);
  EXPECT_EQ(find_check(""), nullptr);
}

TEST(RunChecks, HealthyGb10Lines) {
  EXPECT_THAT(
      lines(run_checks(gb10_snapshot(), {})),
      ElementsAre(
          "G1 PASS: torch 2.9.0a0+145a3a7.nv25.10 built against CUDA 13.0; driver supports CUDA "
          "13.0; all 13 CUDA libraries torch needs resolve",
          "G2 PASS: flash-attn not installed; SDPA will be used (the safe default on Spark)",
          "G3 INFO: 121.4 GB available (MemAvailable + SwapFree), page cache 3.9 GB (3.9 GB "
          "reclaimable), headroom 112.8 GB after the 8.0 GiB safety floor; nvidia-smi/NVML memory "
          "is not supported on GB10, so /proc/meminfo is the source",
          "G4 INFO: 45 C, 11.0 W of ~100 W sustained (140 W TDP); SM 2522 of 3003 MHz; no clock "
          "event reasons active; SW power capping 3.0 h, HW thermal slowdown 1.2 s since driver "
          "load",
          "G5 SKIP: no bandwidth measurement in this snapshot (sparkdoc bw will measure it); on "
          "GB10 budget 180-192 GB/s, not the 273 GB/s spec",
          "G6 PASS: no other GPU processes or servers",
          "G7 PASS: SM121 (12.1) detected; NVFP4 kernels need sm_121a (or sm_120f/121f) code or "
          "they run ~32% slower than FP8 — stay on FP8 unless the build targets sm_121a",
          "G8 SKIP: no playbook named (--playbook NAME); known: unsloth, vllm, sglang, trt-llm, "
          "nccl, connect-two-sparks, pytorch-fine-tune, llama-factory, vlm-finetuning, "
          "multi-agent-chatbot, vscode, vibe-coding",
          "G9 PASS: running inside a container (docker; NGC PyTorch 25.10)",
          "G10 INFO: single node (4 configs scanned): tensor parallelism across Sparks is not in "
          "play",
          "S1 PASS: no distributed-launch variables (WORLD_SIZE, RANK, MASTER_*, NCCL_*, OMPI_*, "
          "MPI_*, PMI_*) set",
          "S2 PASS: no cached accelerate config",
          "S3 PASS: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512",
          "S4 PASS: TOKENIZERS_PARALLELISM=false",
          "S5 PASS: container limits fit: memlock unlimited, stack 64.0 MiB, /dev/shm 59.4 GiB",
          "S6 PASS: min_free_kbytes=45166, vfs_cache_pressure=100, swappiness=60",
          "S7 PASS: gnome-remote-desktop is not running",
          "S8 PASS: transformers 5.5.3 has the native NemotronHForCausalLM with the KV-cache "
          "fix",
          "S9 SKIP: no native-code audit in this snapshot (sparkdoc audit runs one)",
          "S10 PASS: 6.7 GB held outside live processes, within the 8.6 GB a healthy machine "
          "keeps",
          // The seeds' Spark ran 580.95.05; the readings added for the F checks are not in a
          // snapshot built before them, so those say SKIP instead of guessing.
          "F1 INFO: driver 580.95.05, kernel 6.17.0-1026-nvidia, DGX OS release not recorded: "
          "driver 580.95.05 gives CUBLAS_STATUS_INTERNAL_ERROR and CUDNN_BACKEND_API_FAILED "
          "under load (fixed in 580.142 and 580.173.02, forum 380948 [2nd]): update DGX OS",
          "F2 SKIP: kernel log not read: not recorded in this snapshot (taken by a sparkdoc that "
          "did not read it); take the snapshot again",
          "F3 PASS: kernel 6.17.0-1026-nvidia is none the field reports name bad (as of "
          "2026-10-17); CmaTotal/CmaFree not read (not in /proc/meminfo, or not recorded)",
          "F4 INFO: inside a container: the host's Docker and toolkit are judged on the host "
          "(run sparkdoc check there)",
          "F5 PASS: no swap configured",
          "F6 SKIP: /dev/shm not read: not recorded in this snapshot (taken by a sparkdoc that "
          "did not read it); take the snapshot again",
          "F7 INFO: MemTotal 121.7 GiB (usual 121.69); CUDA's free memory at boot can be 10-20 "
          "GiB less: size vLLM's --gpu-memory-utilization from the free memory measured after "
          "boot, 0.85 at most",
          "F8 PASS: torch 2.9.0a0+145a3a7.nv25.10 prints \"Found GPU0 NVIDIA GB10 which is of "
          "cuda capability 12.1 ... (12.0)\", but its 12.0 code runs on 12.1 (pytorch#172629): "
          "ignore the warning, do not rebuild torch for it",
          "N1 SKIP: network not read: not recorded in this snapshot (taken by a sparkdoc that did "
          "not read it); take the snapshot again",
          "N2 SKIP: network not read: not recorded in this snapshot (taken by a sparkdoc that did "
          "not read it); take the snapshot again",
          "N3 SKIP: network not read: not recorded in this snapshot (taken by a sparkdoc that did "
          "not read it); take the snapshot again",
          "N4 SKIP: network not read: not recorded in this snapshot (taken by a sparkdoc that did "
          "not read it); take the snapshot again",
          "N5 SKIP: network not read: not recorded in this snapshot (taken by a sparkdoc that did "
          "not read it); take the snapshot again",
          "N6 SKIP: network not read: not recorded in this snapshot (taken by a sparkdoc that did "
          "not read it); take the snapshot again"));
}

TEST(RunChecks, H200Verdicts) {
  std::vector<Verdict> got;
  for (const auto& f : run_checks(h200_snapshot(), {})) got.push_back(f.verdict);
  using V = Verdict;
  EXPECT_THAT(got, ElementsAre(V::kPass, V::kPass, V::kInfo, V::kInfo, V::kSkip, V::kPass, V::kInfo,
                               V::kSkip, V::kWarn, V::kInfo, V::kPass, V::kPass, V::kInfo, V::kWarn,
                               V::kInfo, V::kPass, V::kPass, V::kPass, V::kSkip, V::kPass,
                               // F1-F8: not a Spark; the F readings not in this snapshot
                               V::kSkip, V::kSkip, V::kPass, V::kSkip, V::kPass, V::kSkip, V::kSkip,
                               V::kSkip,
                               // N1-N6: the network is not in this snapshot
                               V::kSkip, V::kSkip, V::kSkip, V::kSkip, V::kSkip, V::kSkip));
}

TEST(RunChecks, OnlyFiltersCaseInsensitivelyInTableOrder) {
  auto found = run_checks(gb10_snapshot(), {}, {"s1", "G3", "g10"});
  EXPECT_THAT(ids(found), ElementsAre("G3", "G10", "S1"));
  EXPECT_TRUE(run_checks(gb10_snapshot(), {}, {"G99"}).empty());
}

TEST(RunChecks, ReplayedSnapshotJudgesTheSame) {
  Snapshot s = gb10_snapshot();
  auto back = snapshot_from_text(snapshot_to_text(s));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(run_checks(*back, {}), run_checks(s, {}));
}

TEST(RunChecks, EmptySnapshotNeverFailsInternally) {
  for (const auto& f : run_checks(
           Snapshot{},
           Workload{.need_bytes = uint64_t{1}, .playbook = "unsloth", .command = "x --tp 2"})) {
    EXPECT_THAT(f.detail, ::testing::Not(HasSubstr("internal error"))) << f.id;
    EXPECT_FALSE(f.detail.empty()) << f.id;
  }
}

Finding throws_runtime(const Snapshot&, const Workload&, const facts::Platform&) {
  throw std::runtime_error("boom");
}
Finding throws_other(const Snapshot&, const Workload&, const facts::Platform&) {
  throw 42;
}
Finding passes(const Snapshot&, const Workload&, const facts::Platform& p) {
  Finding f;
  f.id = "wrong id";
  f.verdict = Verdict::kPass;
  f.detail = "platform " + p.key;
  return f;
}

TEST(RunChecks, ExceptionsBecomeFailsAndTheRestStillRun) {
  const std::array<CheckInfo, 4> table{{
      {"T1", "t", "r", "s", "c", "h", "f", "src", "k", &throws_runtime},
      {"T2", "t", "r", "s", "c", "h", "f", "src", "k", &throws_other},
      {"T3", "t", "r", "s", "c", "h", "f", "src", "k", nullptr},
      {"T4", "t", "r", "s", "c", "h", "f", "src", "k", &passes},
  }};
  auto found = run_checks(table, gb10_snapshot(), {});
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].verdict, Verdict::kFail);
  EXPECT_THAT(found[0].detail, HasSubstr("internal error in check: boom"));
  EXPECT_THAT(found[1].detail, HasSubstr("internal error in check: unknown exception"));
  EXPECT_EQ(found[2].verdict, Verdict::kFail);
  EXPECT_EQ(found[3].id, "T4");  // the table's ID wins over what the function wrote
  EXPECT_EQ(found[3].detail, "platform dgx-spark");
}

TEST(SearchChecks, SymptomsFindTheirChecks) {
  auto first = [](std::string_view words) {
    auto found = search_checks(words);
    return found.empty() ? std::string("none") : std::string(found.front()->id);
  };
  EXPECT_EQ(first("OOM while nvidia-smi shows free memory"), "G3");
  EXPECT_EQ(first("undefined symbol"), "G1");
  EXPECT_EQ(first("ImportError: libcudart.so.12: cannot open shared object file"), "G1");
  EXPECT_EQ(first("slow partway"), "G4");
  EXPECT_EQ(first("hang two sparks"), "G10");
  EXPECT_EQ(first("NVFP4 slower than FP8"), "G7");
  EXPECT_EQ(first("dataset.map deadlock"), "S4");
  EXPECT_EQ(first("flash-attn build hangs"), "G2");
  EXPECT_EQ(first("playbook fails"), "G8");
  EXPECT_EQ(first("kv cache evicted by another server"), "G6");
  EXPECT_EQ(first("what is g9"), "G9");
}

// The seeds' own error texts, pasted as a user would, find the entry that explains them.
TEST(SearchChecks, TheSeedsErrorTextsFindTheirEntries) {
  struct Case {
    const char* text;
    const char* id;
  };
  const Case cases[] = {
      // 000 §1: the NVIDIA runtime's mount error on GB10.
      {"docker: Error response from daemon: failed to create task for container: failed to create "
       "shim task: OCI runtime create failed: runc create failed: unable to start container "
       "process: error during container init: error running hook #0: error running hook: exit "
       "status 1, stdout: , stderr: Auto-detected mode as 'legacy' nvidia-container-cli: mount "
       "error: failed to fulfil mount request: open /usr/bin/nvidia-cuda-mps-control: no such "
       "file or directory: unknown.",
       "L21"},
      // 000 §8: TRL asking a Nemotron-H model for gradient checkpointing.
      {"ValueError: NemotronHForCausalLM does not support gradient checkpointing.", "L20"},
      // 000 §4: mamba-ssm built in a docker build step without its CUDA extension.
      {"ModuleNotFoundError: No module named 'selective_scan_cuda'", "L33"},
      // 001 "Inference: llama.cpp": cuBLAS forced on GB10.
      {"llama.cpp garbage output on GB10", "L36"},
      {"llama-server prints gibberish", "L36"},
      // 002 G1.
      {"ImportError: /usr/lib/python3/dist-packages/flash_attn_2_cuda.so: undefined symbol: "
       "_ZN3c104cuda9SetDeviceEi",
       "G1"},
      // 001: the out of memory at 66 % of the shards.
      {"OOM at 66% of loading checkpoint shards", "G3"},
  };
  for (const Case& c : cases) {
    auto found = search_entries(c.text);
    ASSERT_FALSE(found.empty()) << c.text;
    EXPECT_EQ(found.front().info->id, std::string_view(c.id))
        << c.text << " -> " << found.front().info->id << " (" << found.front().score << ": "
        << ::testing::PrintToString(found.front().words) << ")";
  }
}

// Text no entry is about gets no answer rather than the least bad one.
TEST(SearchChecks, TextNoEntryIsAboutMatchesNothing) {
  for (const char* text : {"my cat ate the keyboard", "how do I center a div in CSS",
                           "git push rejected non-fast-forward", "the printer is out of paper",
                           "python list comprehension syntax", "wifi keeps disconnecting"}) {
    auto found = search_entries(text);
    EXPECT_TRUE(found.empty()) << text << " -> " << found.front().info->id << " ("
                               << found.front().score << ": "
                               << ::testing::PrintToString(found.front().words) << ")";
  }
}

TEST(SearchChecks, LimitsAndNoise) {
  EXPECT_LE(search_checks("memory", 2).size(), 2u);
  EXPECT_TRUE(search_checks("the and of").empty());
  EXPECT_TRUE(search_checks("").empty());
  EXPECT_TRUE(search_checks("zzzz qqqq").empty());
}

TEST(Verdicts, WordsAndKeys) {
  EXPECT_EQ(verdict_word(Verdict::kWarn), "WARN");
  EXPECT_EQ(verdict_key(Verdict::kWarn), "warn");
  std::set<std::string_view> words;
  for (auto v : {Verdict::kPass, Verdict::kFail, Verdict::kWarn, Verdict::kSkip, Verdict::kInfo}) {
    words.insert(verdict_word(v));
  }
  EXPECT_EQ(words.size(), 5u);
}

}  // namespace
}  // namespace sparkdoc::checks
