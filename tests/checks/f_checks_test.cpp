// The F checks on fixture snapshots: each firing case is built from a text or figure owners
// reported (shared reference field-2026), each quiet case from a healthy machine, and a
// snapshot recorded before the readings existed says SKIP with the reason, never a guess.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/ptx_isa.h"
#include "checks/registry.h"
#include "core/units.h"
#include "model/snapshot_json.h"
#include "snapshots.h"

namespace sparkdoc::checks {
namespace {

using testing::gb10_snapshot;
using testing::h200_snapshot;
using ::testing::HasSubstr;
using testing::meminfo;
using testing::run_one;
using testing::torch_info;

sys::KernelLog kernel_log(std::vector<std::string> texts) {
  sys::KernelLog log;
  log.records = 4000;
  uint64_t usec = 1'000'000;
  for (auto& t : texts) {
    log.lines.push_back(sys::KernelLogLine{usec, 3, std::move(t)});
    usec += 1000;
  }
  log.nvidia_records = log.lines.size();
  return log;
}

sys::PackageList packages(std::vector<std::pair<std::string, std::string>> list) {
  sys::PackageList out;
  for (auto& [name, version] : list) {
    out.packages.push_back(sys::Package{name, version, "install ok installed"});
  }
  out.installed = 2400;
  return out;
}

// A Spark on DGX OS 7.5.0 (OTA2607) with its own driver: the quiet case of F1 and F4.
Snapshot spark_on_ota2607() {
  Snapshot s = gb10_snapshot();
  s.container = {};
  s.env.clear();  // the host, not the NGC container
  s.nvidia_module->version = "580.159.03";
  s.host.kernel_release = std::string("6.17.0-1026-nvidia");
  sys::OsRelease r;
  r.os_release = {{"ID", "ubuntu"}, {"VERSION_ID", "24.04"}};
  r.dgx_release = std::map<std::string, std::string>{{"DGX_OTA_VERSION", "OTA2607"},
                                                     {"DGX_SWBUILD_VERSION", "7.5.0"}};
  s.os_release = r;
  s.packages = packages({{"docker-ce", "5:29.2.1-1~ubuntu.24.04~noble"},
                         {"nvidia-container-toolkit", "1.19.0-1"},
                         {"nvidia-driver-580-open", "580.159.03-0ubuntu1"},
                         {"nvidia-firmware-580-580.159.03", "580.159.03-0ubuntu1"}});
  sys::DockerSetup d;
  d.docker_binary = true;
  sys::DockerDaemon daemon;
  daemon.path = "/etc/docker/daemon.json";
  daemon.default_runtime = "nvidia";
  daemon.runtimes["nvidia"] = "nvidia-container-runtime";
  d.daemon = daemon;
  s.docker = d;
  s.kernel_log =
      kernel_log({"NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  580.159.03"});
  sys::KernelBoot boot;
  boot.cmdline = "BOOT_IMAGE=/boot/vmlinuz-6.17.0-1026-nvidia root=UUID=1 ro quiet splash";
  boot.kexec_crash_size_bytes = uint64_t{0};
  s.kernel_boot = boot;
  sys::ShmScan shm;
  shm.size_bytes = 63 * kGiB;
  shm.used_bytes = 4096;
  shm.files_total = 1;
  shm.files.push_back(sys::ShmFile{"sem.mp-live", 32, 1000, 1786000000});
  shm.live_uids = {0, 1000};
  s.shm = shm;
  return s;
}

// ---- Snapshots recorded before the readings: SKIP with the reason, never a guess.

TEST(FChecks, OlderSnapshotsSayNotRecorded) {
  Snapshot s = gb10_snapshot();
  for (std::string_view id : {"F2", "F4", "F6"}) {
    Finding f = run_one(id, s);
    if (id == "F4") {
      s.container = {};
      s.env.clear();
      f = run_one(id, s);
    }
    EXPECT_EQ(f.verdict, Verdict::kSkip) << id << ": " << f.detail;
    EXPECT_THAT(f.detail, HasSubstr("not recorded in this snapshot")) << id;
  }
  // The driver is judged (580.95.05's reported errors); the release and packages are not.
  Finding f1 = run_one("F1", s);
  EXPECT_EQ(f1.verdict, Verdict::kInfo) << f1.detail;
  EXPECT_THAT(f1.details, ::testing::Contains(HasSubstr("not recorded")));
}

TEST(FChecks, OlderSnapshotJsonWithoutTheKeysLoads) {
  Snapshot s = gb10_snapshot();
  nlohmann::json j = snapshot_to_json(s);
  for (const char* key : {"kernel_log", "kernel_boot", "os_release", "packages", "docker", "shm"}) {
    j.erase(key);
  }
  j["meminfo"].erase("cma_total_bytes");
  auto back = snapshot_from_json(j);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_FALSE(back->kernel_log.ok());
  EXPECT_THAT(back->kernel_log.why_not(), HasSubstr("not recorded"));
  EXPECT_FALSE(back->meminfo->cma_total_bytes);
}

// ---- F1

TEST(F1DriverPairing, BundlesOwnDriverPasses) {
  Finding f = run_one("F1", spark_on_ota2607());
  EXPECT_EQ(f.verdict, Verdict::kPass) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("driver 580.159.03, kernel 6.17.0-1026-nvidia, DGX OS OTA2607"));
}

TEST(F1DriverPairing, AptDriverAheadOfOta2607Warns) {
  Snapshot s = spark_on_ota2607();
  s.nvidia_module->version = "580.173.02";
  s.packages->packages[2].version = "580.173.02-0ubuntu1";
  s.packages->packages[3].name = "nvidia-firmware-580-580.173.02";
  Finding f = run_one("F1", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("Xid 119"));
  EXPECT_THAT(f.detail, HasSubstr("apt-mark hold"));
}

TEST(F1DriverPairing, FirmwareOfAnotherVersionAndServerPackagesWarn) {
  Snapshot s = spark_on_ota2607();
  s.packages->packages.push_back(
      sys::Package{"nvidia-dkms-580-open-server", "580.95.05-0ubuntu1", "install ok installed"});
  s.packages->packages[3].name = "nvidia-firmware-580-580.126.09";
  Finding f = run_one("F1", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("must be one version"));
  EXPECT_THAT(f.details,
              ::testing::Contains(HasSubstr("sudo apt purge nvidia-dkms-580-open-server")));
}

TEST(F1DriverPairing, OtherBranchWarnsAndPendingRebootIsSaid) {
  Snapshot s = spark_on_ota2607();
  s.nvidia_module->version = "595.91.07";
  Finding f = run_one("F1", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("not of the 580 branch"));
  EXPECT_THAT(f.details, ::testing::Contains(HasSubstr("reboot to load it")));
}

// Second-hand (forum 380948): said as INFO, not warned about.
TEST(F1DriverPairing, InternalErrorDriversAreSaid) {
  Snapshot s = gb10_snapshot();  // 580.95.05, as the seeds' Sparks had
  s.os_release = spark_on_ota2607().os_release;
  Finding f = run_one("F1", s);
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("CUBLAS_STATUS_INTERNAL_ERROR"));
}

TEST(F1DriverPairing, NotASparkSkips) {
  Finding f = run_one("F1", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("not a DGX Spark"));
}

// ---- F2

TEST(F2DriverErrors, CleanLogPasses) {
  Finding f = run_one("F2", spark_on_ota2607());
  EXPECT_EQ(f.verdict, Verdict::kPass) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("among 4000 kernel log records"));
}

// ogkm#1358 (2026-09-14): the line logged before the host wedged.
TEST(F2DriverErrors, NoMemoryPrecursorWarns) {
  Snapshot s = spark_on_ota2607();
  s.kernel_log = kernel_log(
      {"NVRM: _iovaspaceCreateMappingDataFromMemDesc: failed to allocate 0x176028 bytes for IOVA "
       "mapping metadata",
       "NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051)"});
  Finding f = run_one("F2", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("2 NVRM allocation failures"));
  EXPECT_THAT(f.detail, HasSubstr("0.85"));
}

// forum 378200 (2026-07-28): the fragments of an off-pairing driver.
TEST(F2DriverErrors, Xid119AndGspFail) {
  Snapshot s = spark_on_ota2607();
  s.kernel_log =
      kernel_log({"NVRM: Xid (PCI:000f:01:00): 119, pid=2211, name=python3, Timeout "
                  "after 6s of waiting for RPC response from GPU0 GSP!",
                  "NVRM: RmInitAdapter failed! (0x62:0x1a:2015)"});
  Finding f = run_one("F2", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("Xid 119 (1x) and 1 GSP or start-up failures"));
}

TEST(F2DriverErrors, OtherXidsWarn) {
  Snapshot s = spark_on_ota2607();
  s.kernel_log =
      kernel_log({"NVRM: Xid (PCI:0000:18:00): 63, pid=0, Row Remapper: New row (0x1) "
                  "was marked for remapping, reset gpu to activate."});
  Finding f = run_one("F2", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("Xid 63 (1x)"));
}

TEST(F2DriverErrors, ApplicationXidsAreInfo) {
  Snapshot s = spark_on_ota2607();
  s.kernel_log =
      kernel_log({"NVRM: Xid (PCI:000f:01:00): 13, pid=4242, name=python3, Graphics "
                  "SM Warp Exception on (GPC 0, TPC 1, SM 0)"});
  EXPECT_EQ(run_one("F2", s).verdict, Verdict::kInfo);
}

TEST(F2DriverErrors, BadRegisterReadMeansRma) {
  Snapshot s = spark_on_ota2607();
  s.kernel_log =
      kernel_log({"NVRM: gpuHandleSanityCheckRegReadError_GH100: Possible bad "
                  "register read: addr: 0x110094,  regvalue: 0xbadf5600"});
  Finding f = run_one("F2", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("RMA"));
}

TEST(F2DriverErrors, DmesgRestrictSkipsWithTheReason) {
  Snapshot s = spark_on_ota2607();
  s.kernel_log = Reading<sys::KernelLog>::absent(
      Why::kNoPermission,
      "kernel.dmesg_restrict = 1 lets only root (CAP_SYSLOG) read the kernel "
      "log; run `sudo sparkdoc check`");
  Finding f = run_one("F2", s);
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("dmesg_restrict"));
  EXPECT_THAT(f.detail, HasSubstr("sudo sparkdoc check"));
}

// ---- F3

TEST(F3Kernel, KhoCmaFails) {
  Snapshot s = spark_on_ota2607();
  s.host.kernel_release = std::string("7.0.0-1019-nvidia");
  meminfo(s).cma_total_bytes = 0;
  meminfo(s).cma_free_bytes = 940604ull * 1024;
  Finding f = run_one("F3", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("CmaFree 918.6 MiB above CmaTotal 0 B"));
  EXPECT_THAT(f.detail, HasSubstr("kho=off"));
}

TEST(F3Kernel, BadKernelWithoutKhoOffWarnsAndWithItPasses) {
  Snapshot s = spark_on_ota2607();
  s.host.kernel_release = std::string("7.0.0-1019-nvidia");
  EXPECT_EQ(run_one("F3", s).verdict, Verdict::kWarn);
  s.kernel_boot->cmdline += " kho=off";
  EXPECT_EQ(run_one("F3", s).verdict, Verdict::kPass);
  s.host.kernel_release = std::string("6.17.0-1008-nvidia");
  EXPECT_THAT(run_one("F3", s).detail, HasSubstr("forum 366026"));
}

TEST(F3Kernel, OtherKernelsPass) {
  EXPECT_EQ(run_one("F3", spark_on_ota2607()).verdict, Verdict::kPass);
  EXPECT_EQ(run_one("F3", h200_snapshot()).verdict, Verdict::kPass);
}

// ---- F4

TEST(F4ContainerRuntime, KnownGoodPasses) {
  Finding f = run_one("F4", spark_on_ota2607());
  EXPECT_EQ(f.verdict, Verdict::kPass) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("toolkit 1.19.0"));
  EXPECT_THAT(f.detail, HasSubstr("default runtime nvidia"));
}

TEST(F4ContainerRuntime, Toolkit1191WithCdiWarns) {
  Snapshot s = spark_on_ota2607();
  s.packages->packages[1].version = "1.19.1-1";
  s.docker->cdi_specs = {"/var/run/cdi/nvidia.yaml"};
  Finding f = run_one("F4", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("#1910"));
}

TEST(F4ContainerRuntime, SnapDockerWarns) {
  Snapshot s = spark_on_ota2607();
  s.docker->snap = true;
  EXPECT_THAT(run_one("F4", s).detail, HasSubstr("Docker is the snap"));
}

TEST(F4ContainerRuntime, DefaultRuntimeNotDefinedFails) {
  Snapshot s = spark_on_ota2607();
  s.docker->daemon->runtimes.clear();
  Finding f = run_one("F4", s);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.detail, HasSubstr("unknown or invalid runtime name"));
}

TEST(F4ContainerRuntime, NoNvidiaRuntimeWarnsOnlyWithCdiOff) {
  Snapshot s = spark_on_ota2607();
  s.docker->daemon->runtimes.clear();
  s.docker->daemon->default_runtime.reset();
  EXPECT_THAT(run_one("F4", s).detail, HasSubstr("defines no \"nvidia\" runtime"));
  s.docker->daemon->cdi = true;  // --device nvidia.com/gpu=all needs no runtime
  EXPECT_EQ(run_one("F4", s).verdict, Verdict::kPass) << run_one("F4", s).detail;
}

TEST(F4ContainerRuntime, InsideAContainerIsInfo) {
  EXPECT_EQ(run_one("F4", gb10_snapshot()).verdict, Verdict::kInfo);
}

// ---- F5

TEST(F5Swap, NoneInUsePasses) {
  EXPECT_EQ(run_one("F5", gb10_snapshot()).verdict, Verdict::kPass);
}

// forum 358869 [2nd]: 6.7 GiB in swap cost 43 % of decode speed.
TEST(F5Swap, InUseWithAGpuProcessWarns) {
  Snapshot s = gb10_snapshot();
  meminfo(s).swap_total_bytes = 16 * kGiB;
  meminfo(s).swap_free_bytes = 16 * kGiB - 6700 * kMiB;
  EXPECT_EQ(run_one("F5", s).verdict, Verdict::kInfo);
  sys::GpuHolder holder;
  holder.pid = 4242;
  holder.comm = "python3";
  holder.devices = {"/dev/nvidia0"};
  s.processes->gpu_holders.push_back(holder);
  Finding f = run_one("F5", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("6.5 GiB of 16.0 GiB swap in use"));
}

// ---- F6

TEST(F6DevShm, LiveOwnersPass) {
  Finding f = run_one("F6", spark_on_ota2607());
  EXPECT_EQ(f.verdict, Verdict::kPass) << f.detail;
  EXPECT_THAT(f.detail, HasSubstr("none stale"));
}

TEST(F6DevShm, StaleFilesOfAGoneUserWarn) {
  Snapshot s = spark_on_ota2607();
  s.shm->files.push_back(sys::ShmFile{"torch_4242_1_0", 3 * kGiB, 1001, 1785000000});
  s.shm->files_total = 2;
  s.shm->used_bytes = 3 * kGiB;
  Finding f = run_one("F6", s);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("3.0 GiB in 1 file whose owner has no live process"));
  EXPECT_THAT(f.details, ::testing::ElementsAre(HasSubstr("/dev/shm/torch_4242_1_0")));
}

TEST(F6DevShm, FullShmOnUnifiedMemoryWarns) {
  Snapshot s = spark_on_ota2607();
  s.shm->used_bytes = 20 * kGiB;
  EXPECT_EQ(run_one("F6", s).verdict, Verdict::kWarn);
}

// ---- F7

TEST(F7BootMemory, UsualMemTotalIsInfo) {
  Finding f = run_one("F7", gb10_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kInfo);
  EXPECT_THAT(f.detail, HasSubstr("MemTotal 121.7 GiB"));
}

TEST(F7BootMemory, OtaLossAndHighUtilizationWarn) {
  Snapshot s = gb10_snapshot();
  meminfo(s).mem_total_bytes = static_cast<uint64_t>(112.3 * static_cast<double>(kGiB));
  EXPECT_THAT(run_one("F7", s).detail, HasSubstr("more than Display Reserved Memory"));
  Workload w;
  w.command = "vllm serve Qwen/Qwen3-30B --gpu-memory-utilization 0.87";
  Finding f = run_one("F7", gb10_snapshot(), w);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.detail, HasSubstr("--gpu-memory-utilization 0.87 is above 0.85"));
  w.command = "vllm serve m --gpu-memory-utilization=0.80";
  EXPECT_EQ(run_one("F7", gb10_snapshot(), w).verdict, Verdict::kInfo);
}

// Through the table, which asks each check whether it applies.
Finding run_through_table(std::string_view id, const Snapshot& s) {
  auto found = run_checks(s, {}, {std::string(id)});
  return found.empty() ? Finding{} : found.front();
}

TEST(F7BootMemory, OnlyGb10) {
  Finding f = run_through_table("F7", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("GB10's boot-time carve-outs only"));
}

// ---- F8

TEST(F8CapabilityWarning, Sm120BuildMakesTheWarningFalse) {
  Snapshot s = gb10_snapshot();
  torch_info(s).arch_list = std::string("sm_80 sm_90 sm_100 sm_110 sm_120 compute_120");
  Finding f = run_one("F8", s);
  EXPECT_EQ(f.verdict, Verdict::kPass);
  EXPECT_THAT(f.detail, HasSubstr("ignore the warning"));
}

TEST(F8CapabilityWarning, NoTwelveCodeMakesItTrue) {
  Snapshot s = gb10_snapshot();
  torch_info(s).arch_list = std::string("sm_80 sm_86 sm_90 compute_90");
  EXPECT_EQ(run_one("F8", s).verdict, Verdict::kWarn);
  torch_info(s).arch_list = std::string("sm_90 sm_121");
  EXPECT_THAT(run_one("F8", s).detail, HasSubstr("prints no capability warning"));
}

TEST(F8CapabilityWarning, OnlyCapability121) {
  Finding f = run_through_table("F8", h200_snapshot());
  EXPECT_EQ(f.verdict, Verdict::kSkip);
  EXPECT_THAT(f.detail, HasSubstr("compute capability 12.1 only"));
}

// ---- The PTX ISA rule in the audit's judgement (mistral.rs#2272: nvcc 13.2 PTX on 580.159.03)

audit::NativeAudit ptx_only_audit(std::string isa, bool with_sass) {
  audit::NativeAudit a;
  a.site_packages = "/venv/lib/python3.12/site-packages";
  audit::NativeFile f;
  f.file = "mistralrs/libkernels.so";
  f.package = "mistralrs";
  audit::CodeGroup g;
  g.ptx.push_back(audit::PtxEntry{audit::GpuTarget{90, audit::ArchVariant::kPlain}, isa});
  if (with_sass) g.sass.push_back(audit::GpuTarget{120, audit::ArchVariant::kPlain});
  g.containers = 1;
  f.gpu_code.push_back(g);
  a.files.push_back(f);
  return a;
}

size_t ptx_fails(const audit::NativeAudit& a, int driver_cuda) {
  NativeVerdict v = judge_native(a, NativeTarget{{12, 1}, "NVIDIA GB10"});
  add_ptx_isa_notes(a, driver_cuda, v);
  size_t n = 0;
  for (const auto& p : v.packages) {
    for (const auto& note : p.notes) {
      if (note.severity == Severity::kFail &&
          note.text.find("UNSUPPORTED_PTX") != std::string::npos)
        ++n;
    }
  }
  return n;
}

TEST(PtxIsaRule, NewerPtxThanTheDriverFailsOnlyWithoutSass) {
  EXPECT_EQ(ptx_fails(ptx_only_audit("9.2", false), 13000), 1u);
  EXPECT_EQ(ptx_fails(ptx_only_audit("9.2", false), 13020), 0u);  // a 13.2 driver loads it
  EXPECT_EQ(ptx_fails(ptx_only_audit("9.0", false), 13000), 0u);  // nvcc 13.0's own ISA
  EXPECT_EQ(ptx_fails(ptx_only_audit("8.7", false), 13000), 0u);
  EXPECT_EQ(ptx_fails(ptx_only_audit("9.2", true), 13000), 0u);  // sm_120 SASS runs on 12.1
  EXPECT_EQ(ptx_fails(ptx_only_audit("", false), 13000), 0u);    // no ISA read: never a guess
}

}  // namespace
}  // namespace sparkdoc::checks
