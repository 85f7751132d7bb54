// The probes of the F checks: the kernel log, the boot command line, the release files, dpkg's
// status, Docker's configuration, /dev/shm and /proc/meminfo's CMA fields. Texts are the ones
// owners reported (shared reference field-2026) where a report gave them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "sys/docker.h"
#include "sys/kernel_log.h"
#include "sys/meminfo.h"
#include "sys/packages.h"
#include "sys/release.h"
#include "sys/shm.h"
#include "temp_tree.h"

namespace sparkdoc::sys {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempTree;

// Kernel log records as /dev/kmsg gives them; the NVRM line is ogkm#1358's (2026-09-14).
constexpr std::string_view kKmsg =
    "6,1,0,-;Booting Linux on physical CPU 0x0000000000 [0x411fd870]\n"
    "4,812,9141327,-;NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  580.173.02\n"
    " SUBSYSTEM=pci\n"
    " DEVICE=+pci:000f:01:00.0\n"
    "3,9001,40023118,-;NVRM: _iovaspaceCreateMappingDataFromMemDesc: failed to allocate "
    "0x176028 bytes for IOVA mapping metadata\n"
    "6,9002,40023200,-;usb 1-1: new high-speed USB device number 2\n";

TEST(KernelLog, RecordFields) {
  auto line = parse_kmsg_record(
      "3,9001,40023118,-;NVRM: _iovaspaceCreateMappingDataFromMemDesc: failed to allocate "
      "0x176028 bytes for IOVA mapping metadata");
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(line->level, 3);
  EXPECT_EQ(line->usec, 40023118u);
  EXPECT_THAT(line->text, HasSubstr("failed to allocate 0x176028 bytes"));
}

TEST(KernelLog, FacilityBitsLeaveTheLevel) {
  auto line = parse_kmsg_record("30,5,100,-;systemd[1]: Started");  // daemon facility, info
  ASSERT_TRUE(line);
  EXPECT_EQ(line->level, 6);
}

TEST(KernelLog, GarbageIsAnErrorNotACrash) {
  EXPECT_FALSE(parse_kmsg_record("no semicolon here"));
  EXPECT_FALSE(parse_kmsg_record("a,b,c;text"));
  EXPECT_FALSE(parse_kmsg_record("1,2;too few fields"));
}

TEST(KernelLog, FixtureKeepsOnlyTheDriversRecords) {
  TempTree tree;
  tree.write("dev/kmsg", kKmsg);
  auto log = read_kernel_log(Root(tree.path()));
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_EQ(log->records, 4u);
  EXPECT_EQ(log->nvidia_records, 2u);
  ASSERT_EQ(log->lines.size(), 2u);
  EXPECT_EQ(log->lines[1].usec, 40023118u);
}

// watch follows the log from its start: the records already there are not its, those logged
// later are, each once, with a record cut across two reads put together.
TEST(KmsgFollower, ReadsOnlyTheDriversRecordsLoggedSinceItOpened) {
  TempTree tree;
  tree.write("dev/kmsg", kKmsg);
  auto follower = KmsgFollower::open(Root(tree.path()));
  ASSERT_TRUE(follower) << follower.error().message;
  EXPECT_TRUE(follower->poll().empty());
  {
    std::ofstream out(tree.path() + "/dev/kmsg", std::ios::app);
    out << "4,9003,41000000,-;NVRM: Xid (PCI:000f:01:00): 119, pid=2211, name=python3\n"
           " DEVICE=+pci:000f:01:00.0\n"
           "6,9004,41000001,-;usb 1-1: disconnect\n"
           "3,9005,41000002,-;NVRM: nvCheckOkFailedNoLog: Check failed: Out of mem";
  }
  EXPECT_THAT(follower->poll(),
              ElementsAre("NVRM: Xid (PCI:000f:01:00): 119, pid=2211, name=python3"));
  {
    std::ofstream out(tree.path() + "/dev/kmsg", std::ios::app);
    out << "ory [NV_ERR_NO_MEMORY] (0x00000051)\n";
  }
  EXPECT_THAT(follower->poll(),
              ElementsAre("NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory "
                          "[NV_ERR_NO_MEMORY] (0x00000051)"));
  EXPECT_TRUE(follower->poll().empty());
}

TEST(KmsgFollower, NoKmsgIsAnError) {
  TempTree tree;
  EXPECT_FALSE(KmsgFollower::open(Root(tree.path())));
}

TEST(KernelLog, KeepsTheFirstRecordsAndCountsTheRest) {
  KernelLog log;
  for (size_t i = 0; i < kKernelLogLinesKept + 10; ++i) {
    add_kmsg_record(log, "4,1,1,-;NVRM: Xid (PCI:000f:01:00): 13, pid=1");
  }
  EXPECT_EQ(log.lines.size(), kKernelLogLinesKept);
  EXPECT_EQ(log.nvidia_records, kKernelLogLinesKept + 10);
}

TEST(KernelLog, NoKmsgInAFixtureIsAbsent) {
  TempTree tree;
  tree.mkdir("dev");
  auto log = read_kernel_log(Root(tree.path()));
  ASSERT_FALSE(log);
  EXPECT_EQ(log.error().why, Why::kAbsent);
}

// The live read either gives records or says why not (dmesg_restrict for an ordinary user);
// it never blocks: O_NONBLOCK ends at EAGAIN.
TEST(KernelLog, LiveReadReturnsOrSaysWhy) {
  auto log = read_kernel_log(Root());
  if (log) {
    EXPECT_GE(log->records, log->nvidia_records);
  } else {
    EXPECT_FALSE(log.error().message.empty());
    if (log.error().why == Why::kNoPermission) {
      EXPECT_THAT(log.error().message, HasSubstr("sudo sparkdoc check"));
    }
  }
}

TEST(KernelBoot, CmdlineAndCrashSize) {
  TempTree tree;
  tree.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz-7.0.0-1019-nvidia root=UUID=x ro kho=off\n");
  tree.write("sys/kernel/kexec_crash_size", "0\n");
  auto boot = read_kernel_boot(Root(tree.path()));
  ASSERT_TRUE(boot);
  EXPECT_THAT(boot->cmdline, HasSubstr("kho=off"));
  ASSERT_TRUE(boot->kexec_crash_size_bytes.ok());
  EXPECT_EQ(*boot->kexec_crash_size_bytes, 0u);
}

TEST(Release, QuotedAndBareValues) {
  auto r = parse_release_file(
      "# DGX OS\n"
      "DGX_NAME=\"DGX Spark\"\n"
      "DGX_OTA_VERSION='OTA2607'\n"
      "DGX_OTA_DATE=\"Wed Jul 15 2026\"\n"
      "VERSION_ID=24.04\n"
      "ESCAPED=\"a \\\"b\\\"\"\n"
      "not an assignment\n"
      "bad-key=1\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at("DGX_NAME"), "DGX Spark");
  EXPECT_EQ(r->at("DGX_OTA_VERSION"), "OTA2607");
  EXPECT_EQ(r->at("VERSION_ID"), "24.04");
  EXPECT_EQ(r->at("ESCAPED"), "a \"b\"");
  EXPECT_FALSE(r->contains("bad-key"));
}

TEST(Release, OpenQuoteIsAnError) {
  EXPECT_FALSE(parse_release_file("DGX_NAME=\"DGX Spark\n"));
}

TEST(Release, TreeWithoutDgxReleaseIsNotDgxOs) {
  TempTree tree;
  tree.write("etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n");
  tree.write("sys/class/dmi/id/product_name", "NVIDIA DGX Spark\n");
  tree.write("sys/class/dmi/id/product_serial", "secret\n");
  OsRelease r = read_os_release(Root(tree.path()));
  EXPECT_EQ(r.os_release.at("VERSION_ID"), "24.04");
  ASSERT_FALSE(r.dgx_release.ok());
  EXPECT_THAT(r.dgx_release.why_not(), HasSubstr("not DGX OS"));
  EXPECT_EQ(r.dmi.at("product_name"), "NVIDIA DGX Spark");
  EXPECT_FALSE(r.dmi.contains("product_serial"));  // serial numbers stay on the machine
}

constexpr std::string_view kDpkgStatus =
    "Package: nvidia-driver-580-open\n"
    "Status: install ok installed\n"
    "Priority: optional\n"
    "Version: 580.159.03-0ubuntu1\n"
    "Description: NVIDIA driver metapackage\n"
    " with a continued description\n"
    "\n"
    "Package: nvidia-firmware-580-580.159.03\n"
    "Status: hold ok installed\n"
    "Version: 580.159.03-0ubuntu1\n"
    "\n"
    "Package: nvidia-container-toolkit\n"
    "Status: install ok installed\n"
    "Version: 1.19.1-1\n"
    "\n"
    "Package: nvidia-dkms-580-open-server\n"
    "Status: deinstall ok config-files\n"
    "Version: 580.95.05-0ubuntu1\n"
    "\n"
    "Package: bash\n"
    "Status: install ok installed\n"
    "Version: 5.2.21-2ubuntu4\n";

TEST(Packages, InstalledWatchedPackagesOnly) {
  auto list = parse_dpkg_status(kDpkgStatus);
  ASSERT_TRUE(list) << list.error().message;
  EXPECT_EQ(list->installed, 4u);  // config-files is not installed
  std::vector<std::string> names;
  for (const auto& p : list->packages) names.push_back(p.name + " " + p.version);
  EXPECT_THAT(names, ElementsAre("nvidia-container-toolkit 1.19.1-1",
                                 "nvidia-driver-580-open 580.159.03-0ubuntu1",
                                 "nvidia-firmware-580-580.159.03 580.159.03-0ubuntu1"));
  EXPECT_EQ(list->packages[2].status, "hold ok installed");
}

TEST(Packages, TextWithoutStanzasIsAnError) {
  EXPECT_FALSE(parse_dpkg_status("<!doctype html><html>404</html>\n"));
  EXPECT_FALSE(parse_dpkg_status(""));
}

TEST(Docker, SparkDaemonJson) {
  auto d = parse_docker_daemon(R"({
    "default-runtime": "nvidia",
    "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}},
    "features": {"cdi": true},
    "cdi-spec-dirs": ["/etc/cdi", "/var/run/cdi"]
  })");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->default_runtime.value_or(""), "nvidia");
  EXPECT_EQ(d->runtimes.at("nvidia"), "nvidia-container-runtime");
  EXPECT_EQ(d->cdi, std::optional<bool>(true));
  EXPECT_THAT(d->cdi_spec_dirs, ElementsAre("/etc/cdi", "/var/run/cdi"));
}

TEST(Docker, WrongShapesAreErrors) {
  EXPECT_FALSE(parse_docker_daemon("{"));
  EXPECT_FALSE(parse_docker_daemon("[]"));
  EXPECT_FALSE(parse_docker_daemon(R"({"default-runtime": 3})"));
  EXPECT_FALSE(parse_docker_daemon(R"({"runtimes": []})"));
  EXPECT_FALSE(parse_docker_daemon(R"({"features": {"cdi": "yes"}})"));
  EXPECT_TRUE(parse_docker_daemon("{}"));
}

TEST(Docker, SnapReadsItsOwnConfiguration) {
  TempTree tree;
  tree.mkdir("snap/docker");
  tree.write("etc/docker/daemon.json", R"({"default-runtime": "nvidia"})");
  tree.write("var/snap/docker/current/config/daemon.json", R"({"log-level": "error"})");
  tree.write("etc/cdi/nvidia.yaml", "cdiVersion: 0.5.0\n");
  DockerSetup d = read_docker(Root(tree.path()));
  EXPECT_TRUE(d.snap);
  ASSERT_TRUE(d.daemon.ok()) << d.daemon.why_not();
  EXPECT_EQ(d.daemon->path, "/var/snap/docker/current/config/daemon.json");
  EXPECT_FALSE(d.daemon->default_runtime);
  EXPECT_THAT(d.cdi_specs, ElementsAre("/etc/cdi/nvidia.yaml"));
}

TEST(Shm, FilesAndLiveUsers) {
  TempTree tree;
  tree.write("dev/shm/sem.mp-3kq2", std::string(32, 'x'));
  tree.write("dev/shm/torch_1234_5678_0", "y");
  tree.mkdir("proc/1");
  tree.mkdir("proc/self");
  auto scan = read_shm(Root(tree.path()));
  ASSERT_TRUE(scan) << scan.error().message;
  EXPECT_EQ(scan->files_total, 2u);
  ASSERT_EQ(scan->files.size(), 2u);
  EXPECT_EQ(scan->files[0].name, "sem.mp-3kq2");
  EXPECT_EQ(scan->files[0].size_bytes, 32u);
  EXPECT_EQ(scan->files[0].uid, static_cast<uint32_t>(::geteuid()));
  EXPECT_THAT(scan->live_uids, ElementsAre(static_cast<uint32_t>(::geteuid())));
  EXPECT_GT(scan->size_bytes, 0u);
}

TEST(Shm, LiveUidsSkipNamesThatAreNotPids) {
  EXPECT_THAT(live_uids_from({{"1", 0}, {"self", 7}, {"42", 1000}, {"43", 1000}, {"", 5}}),
              ElementsAre(0u, 1000u));
}

// 7.0.0-1019-nvidia with kexec handover on (MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark#259).
TEST(MeminfoCma, KexecHandoverReadsAboveTotal) {
  auto m = parse_meminfo(
      "MemTotal:       127600748 kB\n"
      "CmaTotal:        0 kB\n"
      "CmaFree:    940604 kB\n");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->cma_total_bytes, std::optional<uint64_t>(0));
  EXPECT_EQ(m->cma_free_bytes, std::optional<uint64_t>(940604ull * 1024));
}

TEST(MeminfoCma, AbsentStaysNoneNotZero) {
  auto m = parse_meminfo("MemTotal:       127600748 kB\n");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->cma_total_bytes);
  EXPECT_FALSE(m->cma_free_bytes);
  EXPECT_FALSE(parse_meminfo("MemTotal: 1 kB\nCmaFree: lots kB\n"));
}

}  // namespace
}  // namespace sparkdoc::sys
