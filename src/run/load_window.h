// When the page-cache drops of `sparkdoc run --drop-cache-every` stop: 000 §7 runs its dropper
// thread only while from_pretrained loads, because safetensors pages pile up in the page cache
// during the load and nowhere else. From outside the process the load shows as GPU memory that
// grows; when it stops growing, the load is over.
//
// Rule (checked at each drop, with the GPU memory the watch log reports last):
//   - the load has started once GPU memory is kStartGrowthBytes (1 GB) above its first reading;
//   - after that, the window ends at the kStableChecks-th check (2) in a row at which GPU memory
//     grew by less than kStableGrowthBytes (0.5 GB) since the check before: with drops every
//     20 s, 40 s without growth (a 60 GB load grows about 10 GB a minute in 000's six-minute
//     window);
//   - and it always ends at the time limit (--drop-cache-for), also when GPU memory is never
//     read (no watch sidecar, or a GPU that reports no memory figure).
// Pure: the caller supplies the clock and the readings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sparkdoc::run {

struct LoadWindowRule {
  double limit_s = 600;
  uint64_t start_growth_bytes = 1'000'000'000;
  uint64_t stable_growth_bytes = 500'000'000;
  int stable_checks = 2;
};

class LoadWindow {
 public:
  LoadWindow(LoadWindowRule rule, double start_s) : rule_(rule), start_s_(start_s) {}

  // One check at time now_s (same clock as start_s) with the latest GPU memory reading.
  // Returns why the window is over, or nullopt while it lasts.
  std::optional<std::string> check(double now_s, std::optional<uint64_t> gpu_memory_bytes);

  bool loading() const { return loading_; }

 private:
  LoadWindowRule rule_;
  double start_s_;
  std::optional<uint64_t> first_;
  std::optional<uint64_t> last_;
  bool loading_ = false;
  int stable_ = 0;
};

}  // namespace sparkdoc::run
