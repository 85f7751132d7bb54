#include "run/load_window.h"

#include "core/units.h"

namespace sparkdoc::run {

std::optional<std::string> LoadWindow::check(double now_s,
                                             std::optional<uint64_t> gpu_memory_bytes) {
  if (gpu_memory_bytes) {
    uint64_t now = *gpu_memory_bytes;
    if (!first_) first_ = now;
    if (loading_ && last_) {
      bool grew = now > *last_ && now - *last_ >= rule_.stable_growth_bytes;
      stable_ = grew ? 0 : stable_ + 1;
      if (stable_ >= rule_.stable_checks) {
        return "GPU memory stopped growing at " + format_gb(now);
      }
    }
    if (!loading_ && now > *first_ && now - *first_ >= rule_.start_growth_bytes) loading_ = true;
    last_ = now;
  }
  if (now_s - start_s_ >= rule_.limit_s) {
    return "time limit " + format_duration(rule_.limit_s) +
           (loading_ ? " (GPU memory still growing)" : "");
  }
  return std::nullopt;
}

}  // namespace sparkdoc::run
