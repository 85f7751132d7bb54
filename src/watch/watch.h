// `sparkdoc watch`: sample at an interval, judge each sample, and write what was seen to the
// log, the CSV file, the Prometheus endpoint and the terminal, until a count, a duration or
// SIGINT/SIGTERM ends it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "core/fs.h"
#include "watch/metrics_server.h"

namespace sparkdoc::watch {

enum class Output {
  kAuto,   // a refreshed block on a terminal, plain lines otherwise
  kJson,   // the log's JSON lines on stdout
  kQuiet,  // nothing on stdout, and no notes on stderr
};

// The shortest sample interval: NVML's power and utilisation readings refresh no faster, and a
// sampler any tighter spends the CPU the training needs.
inline constexpr double kMinIntervalS = 0.05;

struct WatchOptions {
  double interval_s = 1;
  std::optional<double> duration_s;
  std::optional<uint64_t> count;
  std::string log_path;  // empty: no log
  std::string csv_path;  // empty: no CSV
  // Both are made new (core/fs.h create_file: never through a link). An existing regular file
  // is refused unless this is set, and then replaced by a new file, never truncated in place.
  bool replace_files = false;
  std::optional<ListenAddress> listen;
  // How often the costly counters are read (SamplerOptions); the energy counter at six times
  // this. 0: at every sample.
  double counter_interval_s = 5;
  Output output = Output::kAuto;
  Root root;  // /proc is read under it (fixture trees in tests)
};

// Runs the watch. While it runs, SIGINT and SIGTERM end it after the sample in progress (every
// line written so far is already on disk) and SIGPIPE is ignored; the previous dispositions
// are restored on return. Returns 0 when it ended as asked, 2 when the log, the CSV file or the
// listening socket could not be opened (nothing was sampled) or a write failed later (the
// watch went on without that file). Messages go to `err`.
int run_watch(const WatchOptions& options, std::FILE* out, std::FILE* err);

}  // namespace sparkdoc::watch
