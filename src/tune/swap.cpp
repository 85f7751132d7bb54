#include "tune/swap.h"

#include <fmt/format.h>
#include <sys/swap.h>

#include <cerrno>
#include <cstring>

#include "core/fs.h"
#include "core/units.h"
#include "tune/journal.h"

namespace sparkdoc::tune {
namespace {

}  // namespace

Result<std::vector<sys::SwapArea>> KernelSwap::active() {
  return sys::read_swaps(root_);
}

Result<void> KernelSwap::swap_off(const std::string& machine_path) {
  if (!root_.live()) {
    return fail(Why::kNotSupported, "swapoff is not called on a fixture root");
  }
  if (::swapoff(machine_path.c_str()) != 0) {
    int err = errno;
    return fail(why_from_errno(err),
                fmt::format("swapoff {}: {}", machine_path, std::strerror(err)));
  }
  return {};
}

Result<void> KernelSwap::swap_on(const std::string& machine_path, int priority) {
  if (!root_.live()) {
    return fail(Why::kNotSupported, "swapon is not called on a fixture root");
  }
  // A priority the kernel chose (negative) is left to the kernel again; a set one is kept.
  int flags = 0;
  if (priority >= 0) {
    flags = SWAP_FLAG_PREFER | ((priority << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
  }
  if (::swapon(machine_path.c_str(), flags) != 0) {
    int err = errno;
    return fail(why_from_errno(err),
                fmt::format("swapon {}: {}", machine_path, std::strerror(err)));
  }
  return {};
}

std::optional<std::string> swap_reset_blocker(const std::vector<sys::SwapArea>& areas,
                                              uint64_t mem_available_bytes,
                                              uint64_t swap_cached_bytes, uint64_t reserve_bytes) {
  if (areas.empty()) return "no swap area is active";
  uint64_t used = 0;
  for (const auto& a : areas) used += a.used_bytes;
  if (used == 0) return "nothing is swapped out; turning swap off and on would change nothing";
  // Pages that are also in the swap cache are already in RAM; swapoff only drops their copy.
  uint64_t to_move = used > swap_cached_bytes ? used - swap_cached_bytes : 0;
  if (to_move + reserve_bytes > mem_available_bytes) {
    return fmt::format(
        "{} swapped out would not fit in RAM: {} available, {} kept free; free memory first",
        format_gb(to_move), format_gb(mem_available_bytes), format_gb(reserve_bytes));
  }
  return std::nullopt;
}

std::vector<SwapResetArea> reset_swap(JournalWriter& journal, SwapControl& swap,
                                      const std::vector<sys::SwapArea>& areas) {
  std::vector<SwapResetArea> out;
  for (const auto& area : areas) {
    SwapResetArea r;
    r.area = area;
    auto recorded = journal.record_swapoff(area.path, area.priority);
    if (!recorded) {
      r.error = "not turned off: the journal could not record it: " + recorded.error().message;
      out.push_back(std::move(r));
      break;
    }
    auto off = swap.swap_off(area.path);
    if (!off) {
      r.error = off.error().message;
      out.push_back(std::move(r));
      continue;
    }
    r.turned_off = true;
    auto on = swap.swap_on(area.path, area.priority);
    if (!on) {
      r.error = on.error().message + "; `sparkdoc clean --restore` turns it on again";
    } else {
      r.turned_on = true;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace sparkdoc::tune
