// What the field reports of 2025-2026 (shared reference field-2026) name on a machine but no
// F check judges, and why: docs/CHECKS.md prints this list below the checks, so a reader sees
// what is left out on purpose and what is not done yet.
#pragma once

#include <array>
#include <string_view>

namespace sparkdoc::checks {

struct UncheckedItem {
  std::string_view item;  // "USB-PD power wedge (§2)"
  std::string_view why;   // why no check judges it (yet)
};

inline constexpr std::array<UncheckedItem, 14> kUncheckedFieldItems = {{
    {"USB-PD power wedge, clocks pinned at 500-850 MHz (§2)",
     "needs clocks, power and utilisation sampled under load; a one-shot check sees an idle GPU. "
     "watch's power_wedge detector judges it during a run; G4 reports the instant values."},
    {"Log-less hard power-off near 90 W, unclean boots, pstore (§2)",
     "needs the boot history (last -Fx, the previous boot's journal, /sys/fs/pstore), which "
     "sparkdoc does not read yet."},
    {"EC fan firmware, acpitz temperatures, CPU clocks near 1.5 GHz (§2)",
     "the EC version comes from fwupdmgr, not a file; thermal zones and cpufreq are not read "
     "yet."},
    {"HP/ASUS USB-PD firmware, field diagnostic results (§1)",
     "firmware versions need fwupdmgr and the diagnostic runs 30-40 min from a TTY: sparkdoc "
     "only points at them. Bad register reads (0xbadf5600) are F2's."},
    {"Wi-Fi modules, DOCA DKMS, Secure Boot MOK, fwupd/libfwupd, locale (§1)",
     "they break updates and the desktop, not training runs; the packages are recorded, so a "
     "check can judge them later."},
    {"spark-ota-check and dgx-mgmt reporters (§1)",
     "sparkdoc runs no vendor tools; F1 reads the release file and packages they read."},
    {"NVML memory NOT_SUPPORTED, nvml-unified-shim (§3)",
     "G3 budgets from /proc/meminfo for this reason; the NVML library loaded is recorded in the "
     "snapshot but not judged yet."},
    {"cudaMemGetInfo at boot (§3)",
     "needs a CUDA context (about 0.2 s and 20 MB, more than check may spend); F7 gives the rule "
     "instead."},
    {"apt lists holding an HTML page, buildkit, restart=always containers (§4)",
     "apt lists and the Docker API are not read."},
    {"FlashInfer's cubin folder, NVFP4 fallbacks in vLLM's log (§5)",
     "flashinfer_cubin/ holds loose .cubin files (12,681 in 0.6.11, all Sm100a/Sm100f/Sm103a) "
     "that the audit does not index (it reads shared objects); G7 warns whenever "
     "flashinfer-cubin is installed on 12.1 instead, as no SM 12.x cubins of it are reported "
     "and FlashInfer JIT-builds for 12.1a without it. The fallbacks are lines of a serving log, "
     "not "
     "of the machine. The sm120-only guard is judged: sparkdoc audit and S9 FAIL a file whose "
     "sm_121 cubins hold it; PTX newer than the driver too."},
    {"Triton ptxas, flash-attn, TransformerEngine, cuDNN (§5)",
     "audit and lint rules; not built yet."},
    {"A degraded ConnectX-7 link that reports 200G with clean counters (§6)",
     "sysfs cannot tell it from a healthy one; only traffic does (ib_write_bw for 10 s per "
     "half). N3 judges what sysfs shows and says to measure; N1-N6 judge the rest of §6."},
    {"A live NCCL collective across the nodes (§6)",
     "needs every node running together; a static preflight passed while NCCL init hung "
     "(MiaAI-Lab dual-Spark #3). sparkdoc compare names the drift between nodes instead."},
    {"CPU-only or CUDA 12 torch, aarch64 wheel gaps, Unsloth, Ollama, llama.cpp (§7)",
     "G1, G9 and sparkdoc lint judge these."},
}};

}  // namespace sparkdoc::checks
