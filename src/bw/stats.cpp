#include "bw/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace sparkdoc::bw {

double gbps(uint64_t bytes, double milliseconds) {
  return static_cast<double>(bytes) / (milliseconds * 1e-3) / 1e9;
}

Result<TransferRate> summarize(std::span<const double> times_ms, uint64_t bytes_per_run) {
  if (times_ms.empty()) return fail("no timed runs");
  std::vector<double> sorted(times_ms.begin(), times_ms.end());
  for (double t : sorted) {
    if (!std::isfinite(t) || t <= 0) {
      return fail(fmt::format("a timed run took {} ms: the timer did not measure it", t));
    }
  }
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median_ms = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  TransferRate rate;
  rate.best_gbps = gbps(bytes_per_run, sorted.front());
  rate.median_gbps = gbps(bytes_per_run, median_ms);
  rate.bytes_per_run = bytes_per_run;
  rate.runs = static_cast<int>(n);
  return rate;
}

}  // namespace sparkdoc::bw
