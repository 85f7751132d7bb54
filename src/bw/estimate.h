// How long a `sparkdoc bw` run has left, from its progress reports alone: the part under way
// by its own runs so far, and the host parts not yet started by the host read's time per run
// (a write run moves the same bytes as a read run, a copy run twice them, at about the same
// rate: read 78.8, write 62.7, copy 78.2 GB/s on the H200 machine, 18-28 GB/s here on 2 cores).
// The device parts cannot be foreseen from the host's and the host's not from the device's, so
// no estimate is given for a part before one of its group has run. Pure: the caller passes
// the time.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sparkdoc::bw {

class Estimate {
 public:
  // A part's progress (`done` of `total` runs, warm-up included) at `now_s` on a monotonic
  // clock; the parts come in the order they run, each reporting 1 to its total. A part's pace
  // is timed from its first report on.
  void record(std::string_view phase, int done, int total, double now_s);

  // Seconds left of the whole run, once the host read has reported twice: this part's runs to
  // go at its pace, then the host parts after it at the host read's. nullopt during a device
  // part (the host's parts are to come and cannot be foreseen from it) and before that.
  std::optional<double> remaining_s() const;

  // "about 24 s left", "about 2 min left", "" without an estimate.
  std::string remaining_text() const;

 private:
  std::optional<double> pace_s(double now_s) const;

  std::string phase_;
  int done_ = 0;
  int total_ = 0;
  int first_done_ = 0;  // the part's first report: its runs done then, and when
  double first_s_ = 0;
  double last_s_ = 0;
  std::optional<double> host_read_run_s_;  // the host read's time per run, once it has run
};

}  // namespace sparkdoc::bw
