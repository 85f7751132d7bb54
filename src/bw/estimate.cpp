#include "bw/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace sparkdoc::bw {
namespace {

// The host parts as bw/host.cpp runs them, with each run's bytes relative to a read's.
constexpr std::array<std::pair<std::string_view, double>, 3> kHostParts = {
    {{"host read", 1.0}, {"host write", 1.0}, {"host copy", 2.0}}};

int host_index(std::string_view phase) {
  for (size_t i = 0; i < kHostParts.size(); ++i) {
    if (kHostParts[i].first == phase) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

void Estimate::record(std::string_view phase, int done, int total, double now_s) {
  if (phase != phase_) {
    phase_ = std::string(phase);
    first_done_ = done;
    first_s_ = now_s;
  }
  done_ = done;
  total_ = total;
  if (phase == kHostParts[0].first) {
    if (auto pace = pace_s(now_s)) host_read_run_s_ = pace;
  }
  last_s_ = now_s;
}

// A part's time per run from its first report on: what comes before that report (the buffers'
// first touch, the threads' start: 1-2 s of a 2 GiB host read here) is no run's time.
std::optional<double> Estimate::pace_s(double now_s) const {
  if (done_ <= first_done_) return std::nullopt;
  return (now_s - first_s_) / (done_ - first_done_);
}

std::optional<double> Estimate::remaining_s() const {
  int index = host_index(phase_);
  auto pace = pace_s(last_s_);
  if (index < 0 || !pace || !host_read_run_s_) return std::nullopt;
  double left = *pace * (total_ - done_);
  // Each later host part runs as many times as this one does.
  for (size_t i = static_cast<size_t>(index) + 1; i < kHostParts.size(); ++i) {
    left += *host_read_run_s_ * kHostParts[i].second * total_;
  }
  return std::max(0.0, left);
}

std::string Estimate::remaining_text() const {
  auto left = remaining_s();
  if (!left) return "";
  if (*left < 1) return "under a second left";
  if (*left < 90) return fmt::format("about {:.0f} s left", std::ceil(*left));
  return fmt::format("about {:.0f} min left", std::ceil(*left / 60));
}

}  // namespace sparkdoc::bw
