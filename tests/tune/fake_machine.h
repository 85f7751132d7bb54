// A fake machine for the tune tests: /proc/sys/vm files, /proc/swaps and /proc/meminfo in a
// throwaway folder used as the Root, so no test ever writes this machine's kernel values; and a
// swap control and a GPU clock control that record calls instead of making them.
#pragma once

#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "../sys/temp_tree.h"
#include "core/fs.h"
#include "tune/gpu_clocks.h"
#include "tune/journal.h"
#include "tune/swap.h"

namespace sparkdoc::tune::testing {

// 000 §6's defaults: min_free_kbytes 45166, vfs_cache_pressure 100; swappiness 60.
class FakeMachine {
 public:
  FakeMachine() {
    tree_.write("proc/sys/vm/drop_caches", "");
    tree_.write("proc/sys/vm/min_free_kbytes", "45166\n");
    tree_.write("proc/sys/vm/vfs_cache_pressure", "100\n");
    tree_.write("proc/sys/vm/swappiness", "60\n");
    tree_.write("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
  }
  Root root() const { return Root(tree_.path()); }
  const std::string& path() const { return tree_.path(); }
  const sys::testing::TempTree& tree() const { return tree_; }
  std::string read(const std::string& relative) const {
    auto text = read_text(tree_.path() + "/" + relative);
    return text ? *text : std::string("<unreadable>");
  }
  std::string vm(const std::string& name) const { return read("proc/sys/vm/" + name); }
  // root's journal, through this machine's root.
  JournalLocation journal() const { return journal_location(root(), 0, "", "").value(); }
  unsigned euid() const { return static_cast<unsigned>(::geteuid()); }
  // The journal a process of this test's uid writes on this fake machine: root's path when the
  // test runs as root (CI), the user's state folder under the fake root otherwise.
  JournalLocation own_journal() const {
    return journal_location(root(), euid(), "", "/home/tester").value();
  }

 private:
  sys::testing::TempTree tree_;
};

// Records swapoff/swapon calls and keeps its own list of active areas.
class FakeSwap final : public SwapControl {
 public:
  std::vector<sys::SwapArea> areas;
  std::vector<std::string> calls;  // "off /swap.img", "on /swap.img -2"
  bool fail_on = false;

  Result<std::vector<sys::SwapArea>> active() override { return areas; }
  Result<void> swap_off(const std::string& path) override {
    calls.push_back("off " + path);
    std::erase_if(areas, [&](const sys::SwapArea& a) { return a.path == path; });
    return {};
  }
  Result<void> swap_on(const std::string& path, int priority) override {
    calls.push_back("on " + path + " " + std::to_string(priority));
    if (fail_on) return fail("swapon " + path + ": Invalid argument");
    areas.push_back(sys::SwapArea{path, "file", 0, 0, priority});
    return {};
  }
};

// Records clock locks and resets of the GPUs it lists; a UUID it does not list is absent, as a
// GPU gone since the lock.
class FakeGpuClocks final : public GpuClockControl {
 public:
  std::vector<ClockGpu> listed;
  std::vector<std::string> calls;  // "lock GPU-1 300 2200", "reset GPU-1"
  std::string fail_lock;           // non-empty: lock() fails with this text
  // Called at each lock, before it is recorded: tests look at the journal there.
  std::function<void(const std::string& uuid)> before_lock;

  Result<std::vector<ClockGpu>> gpus() override { return listed; }
  Result<void> lock(const std::string& uuid, ClockCap cap) override {
    if (before_lock) before_lock(uuid);
    if (!has(uuid)) return absent(uuid);
    if (!fail_lock.empty()) return fail(fail_lock);
    calls.push_back("lock " + uuid + " " + std::to_string(cap.min_mhz) + " " +
                    std::to_string(cap.max_mhz));
    return {};
  }
  Result<void> reset(const std::string& uuid) override {
    if (!has(uuid)) return absent(uuid);
    calls.push_back("reset " + uuid);
    return {};
  }

 private:
  bool has(const std::string& uuid) const {
    for (const auto& g : listed) {
      if (g.uuid == uuid) return true;
    }
    return false;
  }
  static Result<void> absent(const std::string& uuid) {
    return fail(Why::kAbsent, "no GPU with UUID " + uuid + " among the GPUs NVML lists now");
  }
};

// GB10 as the fixtures have it: its UUID, its name, 3003 MHz at most.
inline ClockGpu gb10_gpu() {
  return ClockGpu{"GPU-3c1f8e2a-5b7d-4e90-a6c2-9d0e1f2a3b4c", "NVIDIA GB10", 3003};
}

inline JournalSession test_session(std::string command = "clean --yes --tune-vm") {
  JournalSession s;
  s.pid = ::getpid();
  s.started_at = "2026-11-29T10:15:00Z";
  s.command = std::move(command);
  return s;
}

}  // namespace sparkdoc::tune::testing
