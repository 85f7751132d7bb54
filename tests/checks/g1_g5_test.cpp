#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/registry.h"
#include "core/units.h"
#include "snapshots.h"

namespace sparkdoc::checks {
namespace {

using testing::gb10_snapshot;
using testing::h200_snapshot;
using ::testing::HasSubstr;
using testing::meminfo;
using testing::nvml_device;
using testing::python_env;
using testing::run_one;
using testing::set_dist;
using testing::torch_info;

void remove_gpu(Snapshot& s) {
  s.gpu.nvml = Reading<gpu::NvmlReadings>::absent(Why::kAbsent, "libnvidia-ml.so.1 not found");
  s.gpu.cuda = Reading<gpu::CudaReadings>::absent(Why::kAbsent, "libcuda.so.1 not found");
}

void leave_container(Snapshot& s) {
  s.container = sys::ContainerMarkers{};
  s.env.erase("NVIDIA_PYTORCH_VERSION");
  s.env.erase("NVIDIA_PRODUCT_NAME");
}

pyenv::SonameNeed& soname(Snapshot& s, std::string_view name) {
  for (auto& n : *torch_info(s).cuda_sonames) {
    if (n.soname == name) return n;
  }
  throw std::invalid_argument(std::string(name));
}

// G1

TEST(G1CudaAbi, HealthyGb10Passes) {
  Finding f = run_one("G1", gb10_snapshot());
  EXPECT_EQ(f.id, "G1");
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_EQ(f.detail,
            "torch 2.9.0a0+145a3a7.nv25.10 built against CUDA 13.0; driver supports CUDA 13.0; "
            "all 13 CUDA libraries torch needs resolve");
  EXPECT_THAT(f.details.front(), HasSubstr("/usr (python3 on PATH)"));
}

TEST(G1CudaAbi, NoPythonSkipsWithReason) {
  Snapshot s = gb10_snapshot();
  s.python = Reading<std::vector<pyenv::PythonEnv>>::absent(Why::kError, "no interpreter on PATH");
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("error: no interpreter on PATH"));
}

TEST(G1CudaAbi, NoTorchSkips) {
  Snapshot s = gb10_snapshot();
  python_env(s).torch = Reading<pyenv::TorchInfo>::absent(Why::kAbsent, "no torch package");
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("torch not found in 1 Python environment"));
  EXPECT_THAT(f.detail, HasSubstr("no torch package"));
}

TEST(G1CudaAbi, CpuTorchOnGpuMachineFails) {
  Snapshot s = gb10_snapshot();
  torch_info(s).version = std::string("2.9.1+cpu");
  torch_info(s).cuda = Reading<std::string>::absent(Why::kAbsent, "torch.version.cuda is None");
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("torch 2.9.1+cpu is a CPU-only build"));
  EXPECT_THAT(f.detail, HasSubstr("download.pytorch.org/whl/cu130"));
}

TEST(G1CudaAbi, CpuTorchWithoutGpuIsInfo) {
  Snapshot s = gb10_snapshot();
  remove_gpu(s);
  torch_info(s).version = std::string("2.9.1+cpu");
  torch_info(s).cuda = Reading<std::string>::absent(Why::kAbsent, "torch.version.cuda is None");
  EXPECT_EQ(run_one("G1", s).verdict, Verdict::kInfo);
}

TEST(G1CudaAbi, UnreadableTorchCudaSkips) {
  Snapshot s = gb10_snapshot();
  torch_info(s).cuda = Reading<std::string>::absent(Why::kError, "version.py: syntax error");
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("version.py: syntax error"));
}

TEST(G1CudaAbi, TorchNewerThanDriverFails) {
  Snapshot s = h200_snapshot();
  s.gpu.nvml->cuda_driver_version = 12080;
  s.gpu.cuda->driver_version = 12080;
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("the driver supports only CUDA 12.8"));
}

TEST(G1CudaAbi, DriverVersionFromCudaWhenNvmlMissing) {
  Snapshot s = h200_snapshot();
  s.gpu.nvml = Reading<gpu::NvmlReadings>::absent(Why::kAbsent, "libnvidia-ml.so.1 not found");
  s.gpu.cuda->driver_version = 12020;
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("CUDA 12.2"));
}

TEST(G1CudaAbi, Cuda12TorchOnSparkFails) {
  Snapshot s = gb10_snapshot();
  torch_info(s).version = std::string("2.8.0+cu128");
  torch_info(s).cuda = std::string("12.8");
  torch_info(s).cuda_sonames = std::vector<pyenv::SonameNeed>{};
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("DGX Spark ships CUDA 13"));
  EXPECT_THAT(f.detail, HasSubstr("cu130"));
}

TEST(G1CudaAbi, Cuda12TorchOnCuda13DriverElsewherePasses) {
  Snapshot s = h200_snapshot();
  torch_info(s).version = std::string("2.8.0+cu128");
  torch_info(s).cuda = std::string("12.8");
  auto& needs = *torch_info(s).cuda_sonames;
  needs[0].soname = "libcudart.so.12";
  needs[1].soname = "libcublas.so.12";
  set_dist(s, "nvidia-cublas-cu12", "12.8.4.1");
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kPass) << f.detail;
}

TEST(G1CudaAbi, UnresolvedLibraryFails) {
  Snapshot s = gb10_snapshot();
  soname(s, "libcublas.so.13").found.reset();
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("libcublas.so.13 needed by libtorch_cuda.so does not resolve"));
  EXPECT_THAT(f.detail, HasSubstr("nvidia-*-cu13"));
}

TEST(G1CudaAbi, UnresolvedLibcudaIsTheDriversAndFineWhenADriverWasRead) {
  Snapshot s = gb10_snapshot();
  soname(s, "libcuda.so.1").found.reset();
  EXPECT_EQ(run_one("G1", s).verdict, Verdict::kPass);
}

TEST(G1CudaAbi, UnresolvedLibcudaWithoutDriverFails) {
  Snapshot s = gb10_snapshot();
  remove_gpu(s);
  soname(s, "libcuda.so.1").found.reset();
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("libcuda.so.1 (the driver's library"));
  EXPECT_THAT(f.detail, HasSubstr("install the NVIDIA driver"));
}

TEST(G1CudaAbi, Cuda12LibraryUnderCuda13TorchFails) {
  Snapshot s = gb10_snapshot();
  pyenv::SonameNeed old;
  old.soname = "libcudart.so.12";
  old.needed_by = {"libtorch_cuda.so"};
  old.found = "/usr/local/lib/python3.12/dist-packages/nvidia/cuda_runtime/lib/libcudart.so.12";
  torch_info(s).cuda_sonames->push_back(old);
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail,
              HasSubstr("libraries load libcudart.so.12 (CUDA 12, for libtorch_cuda.so)"));
  EXPECT_THAT(f.detail, HasSubstr("mixed CUDA 12/13"));
}

TEST(G1CudaAbi, CufftSo12IsCuda13NotCuda12) {
  // cuFFT and cuSOLVER number their sonames one behind the toolkit: libcufft.so.12 ships with
  // CUDA 13, so reading the soname major as the CUDA major would fail every healthy CUDA 13 torch.
  Snapshot s = gb10_snapshot();
  ASSERT_TRUE(soname(s, "libcufft.so.12").found);
  ASSERT_TRUE(soname(s, "libcusolver.so.12").found);
  EXPECT_EQ(run_one("G1", s).verdict, Verdict::kPass);
}

TEST(G1CudaAbi, Cu12WheelsBesideCuda13TorchWarn) {
  Snapshot s = gb10_snapshot();
  set_dist(s, "nvidia-cublas-cu12", "12.8.4.1");
  set_dist(s, "nvidia-cublas-cu13", "13.1.0.3");
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("nvidia-cublas-cu12 12.8.4.1 for another CUDA major"));
  EXPECT_THAT(f.detail, HasSubstr("pip uninstall nvidia-cublas-cu12 unless"));
  EXPECT_THAT(f.detail, ::testing::Not(HasSubstr("cu13")));
}

TEST(G1CudaAbi, FirstEnvironmentWithTorchIsJudged) {
  Snapshot s = gb10_snapshot();
  pyenv::PythonEnv bare;
  bare.source = "VIRTUAL_ENV";
  bare.prefix = "/opt/empty";
  bare.torch = Reading<pyenv::TorchInfo>::absent(Why::kAbsent, "no torch package");
  s.python->insert(s.python->begin(), bare);
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.details.front(), HasSubstr("/usr (python3 on PATH)"));
}

TEST(G1CudaAbi, UnauditedLibrariesStillPassButSaySo) {
  Snapshot s = gb10_snapshot();
  torch_info(s).cuda_sonames =
      Reading<std::vector<pyenv::SonameNeed>>::absent(Why::kError, "libtorch_cuda.so: bad ELF");
  Finding f = run_one("G1", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("CUDA libraries not audited (error: libtorch_cuda.so: bad ELF)"));
}

// G2

TEST(G2FlashAttn, AbsentPasses) {
  Finding f = run_one("G2", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_EQ(f.detail, "flash-attn not installed; SDPA will be used (the safe default on Spark)");
}

// Spark's wording stays on Spark (issue 18).
TEST(G2FlashAttn, AbsentOnADiscreteGpuSaysNothingOfSpark) {
  Finding f = run_one("G2", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_EQ(f.detail, "flash-attn not installed; SDPA will be used");
}

TEST(G2FlashAttn, WithUnslothWarnsHowToForceSdpa) {
  Snapshot s = gb10_snapshot();
  set_dist(s, "flash_attn", "2.7.4.post1");
  set_dist(s, "unsloth", "2026.3.17");
  Finding f = run_one("G2", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("flash-attn 2.7.4.post1 and unsloth 2026.3.17"));
  EXPECT_THAT(f.detail, HasSubstr("HAS_FLASH_ATTENTION"));
}

TEST(G2FlashAttn, InsideNgcIsInfo) {
  Snapshot s = gb10_snapshot();
  set_dist(s, "flash-attn", "2.7.4");
  Finding f = run_one("G2", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("inside NGC PyTorch 25.10: NGC ships a working SM121 build"));
}

TEST(G2FlashAttn, BarePipOnSparkWarns) {
  Snapshot s = gb10_snapshot();
  leave_container(s);
  set_dist(s, "flash-attn", "2.8.3");
  Finding f = run_one("G2", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("no aarch64/sm_121 wheel"));
  EXPECT_THAT(f.detail, HasSubstr("import flash_attn"));
}

TEST(G2FlashAttn, OnH200IsInfo) {
  Snapshot s = h200_snapshot();
  set_dist(s, "flash-attn", "2.8.3");
  Finding f = run_one("G2", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("compute capability 9.0"));
}

TEST(G2FlashAttn, HandWrittenUnderscoreKeyIsFound) {
  Snapshot s = gb10_snapshot();
  pyenv::Distribution d{"flash_attn", "2.7.4", ""};
  python_env(s).packages["flash_attn"] = d;
  EXPECT_EQ(run_one("G2", s).verdict, Verdict::kInfo);
}

TEST(G2FlashAttn, NoPythonSkips) {
  Snapshot s = gb10_snapshot();
  s.python = std::vector<pyenv::PythonEnv>{};
  EXPECT_EQ(run_one("G2", s).verdict, Verdict::kSkip);
}

// G3

TEST(G3UmaHeadroom, Gb10WithoutNeedIsInfoFromMeminfo) {
  Finding f = run_one("G3", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("121.4 GB available (MemAvailable + SwapFree)"));
  EXPECT_THAT(f.detail, HasSubstr("headroom 112.8 GB"));
  EXPECT_THAT(f.detail, HasSubstr("nvidia-smi/NVML memory is not supported on GB10"));
}

TEST(G3UmaHeadroom, NeedAboveHeadroomFailsWithGap) {
  Snapshot s = gb10_snapshot();
  Finding f = run_one("G3", s, Workload{.need_bytes = 120 * kGB});
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("need 120.0 GB but headroom is 112.8 GB"));
  EXPECT_THAT(f.detail, HasSubstr("7.2 GB short"));
  // MemAvailable counts the page cache already: dropping it is not offered as the way out.
  EXPECT_THAT(f.detail, ::testing::Not(HasSubstr("droppable")));
  EXPECT_THAT(f.detail, HasSubstr("already counted as available"));
}

TEST(G3UmaHeadroom, FailNamesGpuProcessesHoldingMemory) {
  Snapshot s = gb10_snapshot();
  gpu::GpuProcess p;
  p.pid = 4242;
  p.type = "compute";
  p.used_bytes = uint64_t{20 * kGB};
  nvml_device(s).processes->push_back(p);
  s.processes->servers.push_back({4242, "vllm", "vllm serve Qwen/Qwen3-32B"});
  Finding f = run_one("G3", s, Workload{.need_bytes = 120 * kGB});
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("GPU processes hold 20.0 GB (pid 4242 (vllm) 20.0 GB)"));
}

TEST(G3UmaHeadroom, NeedThatOnlyFitsByEvictingPageCacheWarns) {
  Finding f = run_one("G3", gb10_snapshot(), Workload{.need_bytes = 110 * kGB});
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(f.detail,
            "0.9 GB of page cache would be taken from a 112.8 GB budget (reclaimable: sparkdoc "
            "clean)");
}

TEST(G3UmaHeadroom, NeedThatFitsInFreeMemoryPasses) {
  Finding f = run_one("G3", gb10_snapshot(), Workload{.need_bytes = 70 * kGB});
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("need 70.0 GB, headroom 112.8 GB"));
}

TEST(G3UmaHeadroom, HugepagesRuleNeverBlamesPageCache) {
  Snapshot s = gb10_snapshot();
  meminfo(s).hugepages_total = 40'000;
  meminfo(s).hugepages_free = 30'000;  // 62.9 GB, 54.3 GB after the floor
  meminfo(s).mem_free_bytes = 1 * kGB;
  EXPECT_EQ(run_one("G3", s, Workload{.need_bytes = 50 * kGB}).verdict, Verdict::kPass);
  EXPECT_EQ(run_one("G3", s, Workload{.need_bytes = 60 * kGB}).verdict, Verdict::kFail);
  EXPECT_THAT(run_one("G3", s).detail, HasSubstr("in free hugepages"));
}

TEST(G3UmaHeadroom, SwapRaisesHeadroom) {
  Snapshot s = gb10_snapshot();
  EXPECT_EQ(run_one("G3", s, Workload{.need_bytes = 120 * kGB}).verdict, Verdict::kFail);
  meminfo(s).swap_free_bytes = 16 * kGB;
  meminfo(s).swap_total_bytes = 16 * kGB;
  EXPECT_EQ(run_one("G3", s, Workload{.need_bytes = 120 * kGB}).verdict, Verdict::kPass);
}

TEST(G3UmaHeadroom, MissingMeminfoSkipsWithReason) {
  Snapshot s = gb10_snapshot();
  s.meminfo = Reading<sys::MemInfo>::absent(Why::kNoPermission, "EACCES");
  Finding f = run_one("G3", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_EQ(f.detail, "/proc/meminfo not read: no permission: EACCES");
}

TEST(G3UmaHeadroom, H200WithoutNeedIsInfoOnGpuMemory) {
  Finding f = run_one("G3", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("GPU 0 (NVIDIA H200) has 150.1 GB free of 150.8 GB"));
  EXPECT_THAT(f.detail, HasSubstr("host page cache"));
}

TEST(G3UmaHeadroom, H200NeedAboveFreeFailsAndBelowPasses) {
  Snapshot s = h200_snapshot();
  Finding fail = run_one("G3", s, Workload{.need_bytes = 160 * kGB});
  EXPECT_EQ(fail.verdict, Verdict::kFail);
  EXPECT_THAT(fail.detail, HasSubstr("9.9 GB short"));
  EXPECT_EQ(run_one("G3", s, Workload{.need_bytes = 100 * kGB}).verdict, Verdict::kPass);
}

TEST(G3UmaHeadroom, H200UnreadGpuMemorySkips) {
  Snapshot s = h200_snapshot();
  nvml_device(s).memory = Reading<gpu::MemoryInfo>::absent(Why::kError, "NVML_ERROR_UNKNOWN");
  Finding f = run_one("G3", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("NVML_ERROR_UNKNOWN"));
}

TEST(G3UmaHeadroom, NoGpuSkips) {
  Snapshot s = gb10_snapshot();
  remove_gpu(s);
  EXPECT_EQ(run_one("G3", s).verdict, Verdict::kSkip);
}

// G4

TEST(G4ThermalPower, IdleGb10IsInfo) {
  Finding f = run_one("G4", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_EQ(f.detail,
            "45 C, 11.0 W of ~100 W sustained (140 W TDP); SM 2522 of 3003 MHz; no clock event "
            "reasons active; SW power capping 3.0 h, HW thermal slowdown 1.2 s since driver load");
}

TEST(G4ThermalPower, HwThermalActiveWarns) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).clock_event_reasons = gpu::kReasonHwSlowdown | gpu::kReasonHwThermal;
  nvml_device(s).temperature_c = 88u;
  Finding f = run_one("G4", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("HW Slowdown, HW Thermal Slowdown active at 88 C"));
  EXPECT_THAT(f.detail, HasSubstr("nvidia-smi -lgc 300,2200"));
}

TEST(G4ThermalPower, SwThermalAndPowerBrakeWarn) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).clock_event_reasons = gpu::kReasonSwThermal;
  EXPECT_EQ(run_one("G4", s).verdict, Verdict::kWarn);
  nvml_device(s).clock_event_reasons = gpu::kReasonHwPowerBrake;
  EXPECT_EQ(run_one("G4", s).verdict, Verdict::kWarn);
}

TEST(G4ThermalPower, SwPowerCapAloneIsInfoOnSpark) {
  // Power capping is GB10's normal state under load (~100 W sustained), not a fault.
  Snapshot s = gb10_snapshot();
  nvml_device(s).clock_event_reasons = gpu::kReasonSwPowerCap;
  Finding f = run_one("G4", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("clock event reasons active: SW Power Cap"));
}

TEST(G4ThermalPower, BusyAtLowClockIsTheDegradedPowerState) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).utilization_pct = 96u;
  nvml_device(s).sm_clock_mhz = 745u;
  Finding f = run_one("G4", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("96% utilization at SM 745 MHz"));
  EXPECT_THAT(f.detail, HasSubstr("degraded USB-PD power state"));
  EXPECT_THAT(f.detail, HasSubstr("wait 60 s"));
}

TEST(G4ThermalPower, HotSparkWarns) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).temperature_c = 92u;
  Finding f = run_one("G4", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("92 C is at or above 90 C"));
}

TEST(G4ThermalPower, ZeroCountersSayNoSlowdownTime) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).clock_event_counters.sw_power_cap_ns = uint64_t{0};
  nvml_device(s).clock_event_counters.hw_thermal_ns = uint64_t{0};
  EXPECT_THAT(run_one("G4", s).detail, HasSubstr("no slowdown time since driver load"));
}

TEST(G4ThermalPower, UnreadPowerIsSaidNotGuessed) {
  Snapshot s = gb10_snapshot();
  nvml_device(s).power_usage_mw =
      Reading<unsigned>::absent(Why::kNotSupported, "NVML_ERROR_NOT_SUPPORTED");
  Finding f = run_one("G4", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("power not read (not supported: NVML_ERROR_NOT_SUPPORTED)"));
}

TEST(G4ThermalPower, MissingNvmlSkipsWithReason) {
  Snapshot s = gb10_snapshot();
  s.gpu.nvml = Reading<gpu::NvmlReadings>::absent(Why::kAbsent, "libnvidia-ml.so.1 not found");
  Finding f = run_one("G4", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_EQ(f.detail, "NVML not read: absent: libnvidia-ml.so.1 not found");
}

TEST(G4ThermalPower, H200ComparesWithEnforcedLimit) {
  Finding f = run_one("G4", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("31 C, 75.0 W of 700.0 W enforced limit"));
}

TEST(G4ThermalPower, H200HwSlowdownWarns) {
  Snapshot s = h200_snapshot();
  nvml_device(s).clock_event_reasons = gpu::kReasonHwSlowdown;
  Finding f = run_one("G4", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("nvidia-smi -q -d PERFORMANCE"));
}

TEST(G4ThermalPower, LowClockRuleIsSparkOnly) {
  Snapshot s = h200_snapshot();
  nvml_device(s).utilization_pct = 96u;
  nvml_device(s).sm_clock_mhz = 745u;
  EXPECT_EQ(run_one("G4", s).verdict, Verdict::kInfo);
}

TEST(G4ThermalPower, SeveralGpusSummariseAndNameTheWarm) {
  Snapshot s = h200_snapshot();
  gpu::Device second = nvml_device(s);
  second.index = 1;
  second.temperature_c = 44u;
  s.gpu.nvml->devices.push_back(second);
  Finding f = run_one("G4", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("2 GPUs, 31-44 C"));
  EXPECT_EQ(f.details.size(), 2u);
  nvml_device(s, 1).clock_event_reasons = gpu::kReasonSwThermal;
  Finding warn = run_one("G4", s);
  EXPECT_EQ(warn.verdict, Verdict::kWarn);
  EXPECT_THAT(warn.detail, HasSubstr("GPU 1: SW Thermal Slowdown active"));
}

// G5

BandwidthMeasurement measured(double device_copy_gbps, std::string method, std::string taken_at) {
  BandwidthMeasurement m;
  m.device_copy_gbps = device_copy_gbps;
  m.method = std::move(method);
  m.taken_at = std::move(taken_at);
  return m;
}

TEST(G5Bandwidth, AbsentSkipsWithTheBudget) {
  Finding f = run_one("G5", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("no bandwidth measurement in this snapshot"));
  EXPECT_THAT(f.detail, HasSubstr("180-192 GB/s, not the 273 GB/s spec"));
}

TEST(G5Bandwidth, AbsentOnADiscreteGpuGivesNoGb10Budget) {
  Snapshot s = h200_snapshot();
  s.bandwidth = Reading<BandwidthMeasurement>::absent(Why::kAbsent, "");
  Finding f = run_one("G5", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, ::testing::Not(HasSubstr("GB10")));
}

TEST(G5Bandwidth, FailedMeasurementSkipsWithReason) {
  Snapshot s = gb10_snapshot();
  s.bandwidth = Reading<BandwidthMeasurement>::absent(Why::kError, "cuMemAlloc failed");
  EXPECT_THAT(run_one("G5", s).detail, HasSubstr("cuMemAlloc failed"));
}

TEST(G5Bandwidth, SparkAtBudgetPassesBelowWarns) {
  Snapshot s = gb10_snapshot();
  s.bandwidth = measured(185.3, "sm copy kernel, 4 GiB", "2026-11-29T12:01:00Z");
  Finding pass = run_one("G5", s);
  EXPECT_EQ(pass.verdict, Verdict::kPass);
  EXPECT_THAT(pass.detail, HasSubstr("185.3 GB/s"));
  s.bandwidth->device_copy_gbps = 150.0;
  Finding warn = run_one("G5", s);
  EXPECT_EQ(warn.verdict, Verdict::kWarn);
  EXPECT_THAT(warn.detail,
              HasSubstr("150.0 GB/s device copy (read + write), below the 180-192 GB/s"));
}

TEST(G5Bandwidth, ElsewhereInfo) {
  Snapshot s = h200_snapshot();
  s.bandwidth = measured(4100.0, "sm copy kernel", "");
  Finding f = run_one("G5", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("4100.0 GB/s"));
}

}  // namespace
}  // namespace sparkdoc::checks
