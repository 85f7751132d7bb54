// The swap reset of 000 §6 ("swapoff /host/swap.img; swapon /host/swap.img" before a model
// load): every active swap area is turned off, which moves what it holds back into RAM, and on
// again, so the load starts with all of swap free. Done through swapoff(2)/swapon(2), never a
// shell, and only when what is swapped out fits in RAM with the safety floor kept.
// Threading: a SwapControl is used from one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "core/result.h"
#include "sys/swaps.h"

namespace sparkdoc::tune {

class JournalWriter;

// The swap areas of a machine and the two calls that change them; tests substitute a fake.
class SwapControl {
 public:
  virtual ~SwapControl() = default;
  // The active areas (/proc/swaps).
  virtual Result<std::vector<sys::SwapArea>> active() = 0;
  virtual Result<void> swap_off(const std::string& machine_path) = 0;
  virtual Result<void> swap_on(const std::string& machine_path, int priority) = 0;
};

// The kernel's swap: /proc/swaps through the root, swapoff(2) and swapon(2) on the machine path.
// On a fixture root the two calls are refused (not_supported: they would act on this
// machine's swap), while active() reads the fixture's /proc/swaps.
class KernelSwap final : public SwapControl {
 public:
  explicit KernelSwap(Root root) : root_(std::move(root)) {}
  Result<std::vector<sys::SwapArea>> active() override;
  Result<void> swap_off(const std::string& machine_path) override;
  Result<void> swap_on(const std::string& machine_path, int priority) override;

 private:
  Root root_;
};

// Why the swap reset should not run now, or nullopt when it should: no active area, nothing
// swapped out (turning it off and on would change nothing), or the pages in swap (less those
// the swap cache already holds in RAM) would not fit in MemAvailable with `reserve_bytes`
// kept free. Pure.
std::optional<std::string> swap_reset_blocker(const std::vector<sys::SwapArea>& areas,
                                              uint64_t mem_available_bytes,
                                              uint64_t swap_cached_bytes, uint64_t reserve_bytes);

struct SwapResetArea {
  sys::SwapArea area;
  bool turned_off = false;
  bool turned_on = false;
  std::string error;
  bool operator==(const SwapResetArea&) const = default;
};

// Turns each area off and on again, in /proc/swaps order, journaling each area before its
// swapoff (a crash between the two calls leaves the journal saying which area to turn back
// on). An area whose swapoff fails is left as it was; one whose swapon fails stays recorded in
// the journal for `clean --restore`. Stops at the first journal failure, before its change.
std::vector<SwapResetArea> reset_swap(JournalWriter& journal, SwapControl& swap,
                                      const std::vector<sys::SwapArea>& areas);

}  // namespace sparkdoc::tune
