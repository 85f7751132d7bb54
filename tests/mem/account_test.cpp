// The accounting rules of `sparkdoc mem` on the committed fixture snapshots, one field changed
// at a time.
#include "mem/account.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/units.h"
#include "facts/memory.h"
#include "facts/platform.h"
#include "model/snapshot_json.h"

namespace sparkdoc::mem {
namespace {

using ::testing::HasSubstr;

Snapshot load(const std::string& name) {
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/snapshots/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return snapshot_from_text(ss.str()).value();
}

MemReport account_of(const Snapshot& s) {
  return account(s, facts::classify_platform(s));
}

TEST(Account, ThreeKilledContainersLeaveLikelyOrphans) {
  Snapshot s = load("gb10-three-killed-containers.json");
  MemReport r = account_of(s);
  EXPECT_TRUE(r.unified);
  ASSERT_TRUE(r.orphans.ok());
  const OrphanEstimate& e = *r.orphans;
  const sys::MemInfo& m = *s.meminfo;
  EXPECT_EQ(e.in_use_bytes, m.mem_total_bytes - m.mem_free_bytes);
  EXPECT_EQ(e.itemised_bytes, m.anon_pages_bytes + m.buffers_bytes + m.cached_bytes);
  EXPECT_EQ(e.processes_bytes, 88080384u + 6304038912u);
  EXPECT_EQ(static_cast<uint64_t>(e.unaccounted_bytes),
            e.in_use_bytes - e.itemised_bytes - e.processes_bytes);
  EXPECT_TRUE(e.likely);
  EXPECT_EQ(e.advice.size(), 3u);
  EXPECT_THAT(e.advice[0], HasSubstr("docker rm -f"));
  EXPECT_THAT(e.advice[1], HasSubstr("fresh CUDA context"));
  EXPECT_THAT(e.advice[2], HasSubstr("reboot"));
  // The snapshot predates the kernel fields: the estimate says so.
  EXPECT_THAT(e.caveats, ::testing::Contains(HasSubstr("Slab, KernelStack and PageTables")));
}

TEST(Account, KernelMemoryIsItemised) {
  Snapshot s = load("gb10-three-killed-containers.json");
  sys::MemInfo& m = *s.meminfo;
  m.slab_bytes = 2 * kGB;
  m.slab_reclaimable_bytes = kGB;
  m.kernel_stack_bytes = 50'000'000;
  m.page_tables_bytes = 150'000'000;
  m.swap_cached_bytes = 100'000'000;
  MemReport before = account_of(load("gb10-three-killed-containers.json"));
  MemReport r = account_of(s);
  ASSERT_TRUE(r.host.ok());
  EXPECT_TRUE(r.host->kernel_recorded);
  EXPECT_EQ(r.orphans->unaccounted_bytes,
            before.orphans->unaccounted_bytes - static_cast<int64_t>(2 * kGB + 300'000'000));
  EXPECT_TRUE(r.orphans->caveats.empty());
}

TEST(Account, HealthySparkStaysWithinTheAllowance) {
  MemReport r = account_of(load("gb10-healthy-ngc.json"));
  ASSERT_TRUE(r.orphans.ok());
  EXPECT_FALSE(r.orphans->likely);
  EXPECT_LE(static_cast<uint64_t>(r.orphans->unaccounted_bytes), kUnifiedUnaccountedAllowanceBytes);
  EXPECT_TRUE(r.orphans->advice.empty());
}

TEST(Account, FreeHugepagesAreItemisedAndUsedOnesAreNot) {
  Snapshot s = load("gb10-healthy-ngc.json");
  sys::MemInfo& m = *s.meminfo;
  m.hugepages_total = 10240;  // 20 GiB of 2 MiB pages taken from MemFree
  m.hugepages_free = 5120;
  m.mem_free_bytes -= 10240ull * m.hugepage_size_bytes;
  MemReport base = account_of(load("gb10-healthy-ngc.json"));
  MemReport r = account_of(s);
  EXPECT_EQ(r.orphans->hugepages_free_bytes, 5120ull * m.hugepage_size_bytes);
  // The 10 GiB in use count in the remainder (CUDA allocates from the pool), with a caveat.
  EXPECT_EQ(r.orphans->unaccounted_bytes,
            base.orphans->unaccounted_bytes + static_cast<int64_t>(5120ull * 2 * kMiB));
  EXPECT_THAT(r.orphans->caveats, ::testing::Contains(HasSubstr("hugepages in use")));
  ASSERT_TRUE(r.headroom);
  EXPECT_TRUE(r.headroom->hugepages);
}

TEST(Account, ProcessesJoinTheScanAndGetRoles) {
  MemReport r = account_of(load("gb10-three-killed-containers.json"));
  ASSERT_EQ(r.processes.size(), 2u);
  const ProcessMemory& grd = r.processes[0];
  EXPECT_EQ(grd.pid, 1873u);
  EXPECT_EQ(grd.server_kind, "gnome-remote-desktop");
  EXPECT_EQ(grd.role, Role::kDesktop);
  EXPECT_TRUE(grd.in_scan);
  EXPECT_EQ(grd.cmdline, "/usr/libexec/gnome-remote-desktop-daemon");
  const ProcessMemory& other = r.processes[1];
  EXPECT_EQ(other.pid, 2231u);
  EXPECT_FALSE(other.in_scan);
  EXPECT_EQ(other.role, Role::kDesktop);  // an unnamed graphics context: a display client
  ASSERT_EQ(r.stoppable.size(), 1u);
  EXPECT_EQ(r.stoppable[0].pid, 1873);
  EXPECT_THAT(r.notes, ::testing::Contains(HasSubstr("--pid=host")));
}

TEST(Account, HoldersNvmlDoesNotListAreClassified) {
  Snapshot s = load("gb10-power-capped.json");
  s.processes->gpu_holders.push_back(
      sys::GpuHolder{5150, "python3", "python3 train.py", {"/dev/nvidia-uvm", "/dev/nvidia0"}});
  s.processes->gpu_holders.push_back(
      sys::GpuHolder{777, "nvtop", "nvtop", {"/dev/nvidia0", "/dev/nvidiactl"}});
  s.processes->gpu_holders.push_back(sys::GpuHolder{
      2467, "gnome-remote-de", "/usr/libexec/gnome-remote-desktop-daemon", {"/dev/nvidia0"}});
  MemReport r = account_of(s);
  ASSERT_TRUE(r.unlisted_holders.ok());
  ASSERT_EQ(r.unlisted_holders->size(), 3u);  // 40211 is in NVML's list
  EXPECT_TRUE((*r.unlisted_holders)[0].cuda);
  EXPECT_EQ((*r.unlisted_holders)[0].pid, 5150);
  EXPECT_FALSE((*r.unlisted_holders)[1].cuda);
  EXPECT_EQ((*r.unlisted_holders)[2].role, Role::kDesktop);
  // A gnome-remote-desktop found only as a holder is stoppable too (S7 matches it the same way).
  ASSERT_EQ(r.stoppable.size(), 1u);
  EXPECT_EQ(r.stoppable[0].pid, 2467);
}

TEST(Account, WithoutNvmlTheRemainderIsLabelled) {
  Snapshot s = load("gb10-three-killed-containers.json");
  s.gpu.nvml = Reading<gpu::NvmlReadings>::absent(Why::kAbsent, "not read: --no-gpu");
  MemReport r = account(s, facts::classify_platform(load("gb10-three-killed-containers.json")));
  EXPECT_FALSE(r.processes_listed.ok());
  EXPECT_FALSE(r.unlisted_holders.ok());
  ASSERT_TRUE(r.orphans.ok());
  EXPECT_FALSE(r.orphans->processes_known);
  EXPECT_THAT(r.orphans->caveats, ::testing::Contains(HasSubstr("live GPU processes too")));
  EXPECT_EQ(why_not(r.gpus), "not read: --no-gpu");
}

TEST(Account, MissingMeminfoIsMissingNotZero) {
  Snapshot s = load("gb10-healthy-ngc.json");
  s.meminfo = Reading<sys::MemInfo>::absent(Why::kNoPermission, "cannot open /proc/meminfo");
  MemReport r = account_of(s);
  EXPECT_FALSE(r.host.ok());
  EXPECT_FALSE(r.orphans.ok());
  EXPECT_THAT(why_not(r.orphans), HasSubstr("/proc/meminfo"));
}

TEST(Account, DiscreteGpuComparesNvmlUsedWithItsProcesses) {
  MemReport busy = account_of(load("h200-busy.json"));
  EXPECT_FALSE(busy.unified);
  ASSERT_TRUE(busy.orphans.ok());
  EXPECT_FALSE(busy.orphans->likely);
  ASSERT_EQ(busy.orphans->device_lines.size(), 1u);
  EXPECT_EQ(busy.orphans->device_lines[0], "GPU 0: used 20.6 GB - processes 20.6 GB = 0.0 GB");
  ASSERT_EQ(busy.processes.size(), 1u);
  EXPECT_EQ(busy.processes[0].cmdline, "python3 hold_gpu.py 20 60");

  // The process ends but its memory stays (a child kept the device open).
  Snapshot s = load("h200-busy.json");
  s.gpu.nvml->devices[0].processes = std::vector<gpu::GpuProcess>{};
  MemReport orphaned = account_of(s);
  EXPECT_TRUE(orphaned.orphans->likely);
  EXPECT_THAT(orphaned.orphans->advice[0], HasSubstr("fuser -v /dev/nvidia*"));
  // Inside a container NVML may list nothing at all: the estimate says so.
  EXPECT_THAT(orphaned.orphans->caveats, ::testing::Contains(HasSubstr("inside this container")));
}

}  // namespace
}  // namespace sparkdoc::mem
