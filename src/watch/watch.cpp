#include "watch/watch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

#include "core/printable.h"
#include "gpu/nvml_api.h"
#include "report/exposition.h"
#include "report/watch_csv.h"
#include "report/watch_view.h"
#include "runlog/writer.h"
#include "watch/detectors.h"
#include "watch/sampler.h"

namespace sparkdoc::watch {
namespace {

using runlog::Event;
using runlog::LineFile;
using runlog::LogHeader;
using runlog::Sample;

// Signal handlers can only reach globals; they write one byte to this pipe so that the loop's
// wait wakes at once instead of sleeping out its interval.
int g_stop_pipe[2] = {-1, -1};
volatile std::sig_atomic_t g_stop_requested = 0;

extern "C" void on_stop_signal(int) {
  int saved = errno;
  g_stop_requested = 1;
  char byte = 1;
  [[maybe_unused]] ssize_t n = ::write(g_stop_pipe[1], &byte, 1);
  errno = saved;
}

// SIGINT and SIGTERM end the watch; SIGPIPE is ignored (stdout piped to a closed reader).
class StopSignals {
 public:
  StopSignals() {
    g_stop_requested = 0;
    if (::pipe2(g_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_stop_pipe[0] = g_stop_pipe[1] = -1;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, &old_pipe_);
    // A launcher may have started this process with the two blocked (the mask survives exec);
    // they would then stay pending and never end the watch.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    ::pthread_sigmask(SIG_UNBLOCK, &stop_signals, &old_mask_);
  }
  ~StopSignals() {
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    ::sigaction(SIGPIPE, &old_pipe_, nullptr);
    for (int& fd : g_stop_pipe) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  bool requested() const { return g_stop_requested != 0; }

  // Sleeps until `deadline` or a stop signal; true when stopped.
  bool wait_until(std::chrono::steady_clock::time_point deadline) const {
    while (!requested()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{g_stop_pipe[0], POLLIN, 0};
      ::poll(&p, g_stop_pipe[0] >= 0 ? 1 : 0,
             static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    }
    return true;
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_pipe_ {};
  sigset_t old_mask_{};
};

double wall_now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

size_t terminal_width(std::FILE* out) {
  winsize size{};
  if (::ioctl(::fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 0;
}

bool is_terminal(std::FILE* out) {
  const char* term = std::getenv("TERM");
  return ::isatty(::fileno(out)) != 0 && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

// Everything a sample goes to, and the state between samples.
class Outputs {
 public:
  Outputs(const WatchOptions& options, std::FILE* out, std::FILE* err)
      : options_(options), out_(out), err_(err), terminal_(is_terminal(out)) {}

  // Opens the files and the endpoint; false (with the reason on err) when one cannot be.
  bool open() {
    if (!options_.log_path.empty()) {
      auto file = LineFile::create(options_.log_path, options_.replace_files);
      if (!file) return complain(file.error().message);
      log_.emplace(std::move(*file));
    }
    if (!options_.csv_path.empty()) {
      auto file = LineFile::create(options_.csv_path, options_.replace_files);
      if (!file) return complain(file.error().message);
      csv_.emplace(std::move(*file));
    }
    if (options_.listen) {
      auto server = MetricsServer::start(*options_.listen);
      if (!server) return complain(server.error().message);
      server_ = std::move(*server);
    }
    return true;
  }

  void begin(const LogHeader& header) {
    header_ = std::make_shared<const LogHeader>(header);
    config_ = detector_config(header);
    detectors_.emplace(config_);
    write_record(runlog::to_line(header));
    if (csv_) write(csv_, report::kCsvHeader);
    if (options_.output == Output::kQuiet) return;
    for (const runlog::Unavailable& u : header.unavailable) {
      if (u.field == "gpus")
        std::fprintf(err_, "sparkdoc watch: no GPU readings: %s\n", printable(u.reason).c_str());
    }
    if (server_)
      std::fprintf(err_, "sparkdoc watch: Prometheus metrics on %s\n", server_->url().c_str());
    std::fflush(err_);
  }

  void take(const Sample& sample) {
    ++samples_;
    write_record(runlog::to_line(sample));
    if (csv_) {
      for (const std::string& line : report::csv_lines(sample)) write(csv_, line);
    }
    std::vector<Event> events = detectors_->feed(sample);
    for (const Event& e : events) {
      write_record(runlog::to_line(e));
      ++event_counts_[{e.kind, e.severity}];
    }
    if (server_) {
      // The state a scrape renders, owned by the published function (the server's thread).
      shown_ = report::with_latest_counters(sample, shown_);
      server_->publish(
          [header = header_, latest = shown_, events = event_counts_, samples = samples_] {
            return report::render_exposition(*header, latest, events, samples);
          });
    }
    show(sample, events);
  }

  // Leaves the terminal block in place, ending its line.
  void finish() { std::fflush(out_); }

  bool failed() const { return failed_; }

 private:
  bool complain(const std::string& message) {
    std::fprintf(err_, "sparkdoc watch: %s\n", printable(message).c_str());
    std::fflush(err_);
    return false;
  }

  void write(std::optional<LineFile>& file, std::string_view line) {
    auto written = file->write_line(line);
    if (written) return;
    complain(written.error().message + "; going on without " + file->path());
    failed_ = true;
    file.reset();
  }

  // One line of the log, to the file and, with --json, to stdout.
  void write_record(const std::string& line) {
    if (!log_ && options_.output != Output::kJson) return;
    if (log_) write(log_, line);
    if (options_.output == Output::kJson) {
      std::fputs(line.c_str(), out_);
      std::fputc('\n', out_);
      std::fflush(out_);
    }
  }

  // A line of the live view, whose process names and GPU names came from other processes: no
  // escape sequence of theirs reaches the terminal (core/printable.h).
  void print_line(std::string_view line) {
    std::string shown = printable(line);
    shown += '\n';
    std::fputs(shown.c_str(), out_);
  }

  void show(const Sample& sample, const std::vector<Event>& events) {
    if (options_.output != Output::kAuto) return;
    if (!terminal_) {
      for (const Event& e : events) print_line(report::render_event_line(e));
      print_line(report::render_line(sample));
      std::fflush(out_);
      return;
    }
    // Move to the start of the previous block and clear to the end of the screen; events
    // print above the block and stay, the block is drawn again below them.
    if (block_lines_ > 0) std::fprintf(out_, "\x1b[%zuF\x1b[J", block_lines_);
    size_t width = terminal_width(out_);
    for (const Event& e : events) print_line(report::render_event_line(e));
    report::ViewContext context{samples_, options_.log_path,
                                server_ ? server_->url() : std::string()};
    std::vector<std::string> block = report::render_block(*header_, sample, {}, context, width);
    for (const std::string& line : block) print_line(line);
    block_lines_ = block.size();
    std::fflush(out_);
  }

  const WatchOptions& options_;
  std::FILE* out_;
  std::FILE* err_;
  bool terminal_;
  bool failed_ = false;
  std::optional<LineFile> log_;
  std::optional<LineFile> csv_;
  std::unique_ptr<MetricsServer> server_;
  std::shared_ptr<const LogHeader> header_;  // shared with the endpoint's renders
  DetectorConfig config_;
  std::optional<Detectors> detectors_;
  report::EventCounts event_counts_;
  uint64_t samples_ = 0;
  std::optional<Sample> shown_;  // what the endpoint serves: the latest sample, counters kept
  size_t block_lines_ = 0;
};

}  // namespace

int run_watch(const WatchOptions& options, std::FILE* out, std::FILE* err) {
  StopSignals stop;
  Outputs outputs(options, out, err);
  if (!outputs.open()) return 2;

  Sampler sampler =
      Sampler::open(gpu::Nvml::instance(), options.root,
                    SamplerOptions{options.counter_interval_s, 6 * options.counter_interval_s});
  auto start = std::chrono::steady_clock::now();
  double started = wall_now();
  Sample first = sampler.sample(started);
  LogHeader header = sampler.header();  // complete with the first sample's gaps
  header.started_ts = started;
  header.interval_s = options.interval_s;
  outputs.begin(header);
  outputs.take(first);

  uint64_t taken = 1;
  uint64_t slot = 0;
  while (!stop.requested()) {
    if (options.count && taken >= *options.count) break;
    // The next slot still ahead: after a sample that overran its interval (a stalled driver)
    // the missed slots are skipped rather than sampled in a burst.
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    slot = std::max(slot + 1, static_cast<uint64_t>(elapsed / options.interval_s) + 1);
    double offset_s = options.interval_s * static_cast<double>(slot);
    if (options.duration_s && offset_s >= *options.duration_s) break;
    auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(offset_s));
    if (stop.wait_until(deadline)) break;
    outputs.take(sampler.sample(wall_now()));
    ++taken;
  }
  outputs.finish();
  return outputs.failed() ? 2 : 0;
}

}  // namespace sparkdoc::watch
