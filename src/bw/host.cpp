#include "bw/host.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <system_error>
#include <thread>

#include "bw/stats.h"

namespace sparkdoc::bw {
namespace {

using Clock = std::chrono::steady_clock;

// Slices start on cache-line boundaries, and the buffers on page boundaries.
constexpr uint64_t kLine = 64;
constexpr uint64_t kPage = 4096;

enum class Op { kTouch, kRead, kWrite, kCopy, kStop };

struct FreeDeleter {
  void operator()(unsigned char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<unsigned char, FreeDeleter>;

Buffer allocate(uint64_t bytes) {
  return Buffer(static_cast<unsigned char*>(std::aligned_alloc(kPage, bytes)));
}

// Sums the slice eight bytes at a time, in four independent chains so that the loads, not
// the additions, set the pace.
uint64_t read_slice(const unsigned char* p, uint64_t bytes) {
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  uint64_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    uint64_t w[4];
    std::memcpy(w, p + i, sizeof w);
    s0 += w[0];
    s1 += w[1];
    s2 += w[2];
    s3 += w[3];
  }
  for (; i < bytes; ++i) s0 += p[i];
  return s0 + s1 + s2 + s3;
}

// One thread per slice; the calling thread starts every run between two barriers. Each
// thread stamps its own start and end, and a run lasts from the first start to the last end:
// a caller preempted after the first barrier (the threads outnumber the free CPUs when there is
// one per CPU) would otherwise stamp its start after the work was done.
class Workers {
 public:
  Workers(unsigned count, uint64_t bytes, unsigned char* a, unsigned char* b)
      : count_(count), bytes_(bytes), a_(a), b_(b), sync_(count + 1), sinks_(count) {}
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() { stop(); }

  // Starts the threads; thread i binds itself to cpus[i % cpus.size()] when `pin`.
  Result<void> start(const std::vector<int>& cpus, bool pin) {
    threads_.reserve(count_);
    for (unsigned i = 0; i < count_; ++i) {
      int cpu = cpus.empty() ? -1 : cpus[i % cpus.size()];
      try {
        threads_.emplace_back([this, i, cpu, pin] { work(i, pin ? cpu : -1); });
      } catch (const std::system_error& e) {
        // The threads that did start wait at the barrier for the ones that did not.
        for (unsigned missing = i; missing < count_; ++missing) sync_.arrive_and_drop();
        stop();
        return fail(fmt::format("cannot start host thread {} of {}: {}", i + 1, count_, e.what()));
      }
    }
    return {};
  }

  bool all_pinned() const { return unpinned_.load() == 0; }

  // One run of `op` by every thread; milliseconds from the first thread's start to the last
  // thread's end.
  double run(Op op) {
    op_ = op;
    sync_.arrive_and_wait();
    sync_.arrive_and_wait();
    Clock::time_point first = sinks_.front().start;
    Clock::time_point last = sinks_.front().end;
    uint64_t all = 0;
    for (const Sink& s : sinks_) {
      first = std::min(first, s.start);
      last = std::max(last, s.end);
      all += s.value;
    }
    checksum_ += all;
    return std::chrono::duration<double, std::milli>(last - first).count();
  }

 private:
  struct alignas(kLine) Sink {
    Clock::time_point start;
    Clock::time_point end;
    uint64_t value = 0;
  };

  void stop() {
    if (threads_.empty()) return;
    op_ = Op::kStop;
    sync_.arrive_and_wait();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  void work(unsigned i, int cpu) {
    if (cpu < 0 || !pin_to(cpu)) unpinned_.fetch_add(1);
    uint64_t begin = bytes_ * i / count_ / kLine * kLine;
    uint64_t end = i + 1 == count_ ? bytes_ : bytes_ * (i + 1) / count_ / kLine * kLine;
    uint64_t n = end - begin;
    for (;;) {
      sync_.arrive_and_wait();
      Op op = op_;  // written before the barrier, read after it
      if (op == Op::kStop) return;
      sinks_[i].start = Clock::now();
      switch (op) {
        case Op::kTouch:
          std::memset(a_ + begin, 0x5a, n);
          std::memset(b_ + begin, 0, n);
          break;
        case Op::kRead:
          sinks_[i].value = read_slice(a_ + begin, n);
          break;
        case Op::kWrite:
          std::memset(b_ + begin, static_cast<int>(i & 0xff), n);
          break;
        case Op::kCopy:
          std::memcpy(b_ + begin, a_ + begin, n);
          break;
        case Op::kStop:
          break;
      }
      sinks_[i].end = Clock::now();
      sync_.arrive_and_wait();
    }
  }

  static bool pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<size_t>(cpu), &set);
    return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
  }

  unsigned count_;
  uint64_t bytes_;
  unsigned char* a_;
  unsigned char* b_;
  std::barrier<> sync_;
  Op op_ = Op::kTouch;
  std::vector<Sink> sinks_;
  std::vector<std::thread> threads_;
  std::atomic<unsigned> unpinned_{0};
  uint64_t checksum_ = 0;  // keeps the reads observable
};

Result<TransferRate> time_op(Workers& w, Op op, std::string_view phase, uint64_t bytes_per_run,
                             const HostOptions& o, const Progress& progress) {
  std::vector<double> times_ms;
  int total = o.warmup_runs + o.runs;
  for (int i = 0; i < total; ++i) {
    double ms = w.run(op);
    if (i >= o.warmup_runs) times_ms.push_back(ms);
    if (progress) progress(phase, i + 1, total);
  }
  auto rate = summarize(times_ms, bytes_per_run);
  if (!rate) return fail(fmt::format("{}: {}", phase, rate.error().message));
  return rate;
}

}  // namespace

std::vector<int> usable_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(static_cast<size_t>(cpu), &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned cpu = 0; cpu < n; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  return cpus;
}

SizeChoice cap_host_buffer(uint64_t wanted, std::optional<uint64_t> mem_available_bytes) {
  SizeChoice choice{wanted, std::nullopt};
  if (!mem_available_bytes) return choice;
  uint64_t cap = *mem_available_bytes / 4 / kMiB * kMiB;
  if (cap >= wanted) return choice;
  choice.bytes = std::max(cap, kMiB);
  choice.note = fmt::format(
      "host buffers of {} instead of {}: {} is available, and the two buffers take at most half "
      "of it",
      format_binary(choice.bytes), format_binary(wanted), format_binary(*mem_available_bytes));
  return choice;
}

Result<HostBandwidth> measure_host(const HostOptions& o, const Progress& progress) {
  if (o.runs < 1 || o.warmup_runs < 0) {
    return fail("at least one timed run, and no negative warm-up, are needed");
  }
  uint64_t bytes = o.buffer_bytes / kPage * kPage;
  if (bytes == 0) return fail("a host buffer needs at least 4 KiB");
  std::vector<int> cpus = usable_cpus();
  uint64_t threads = o.threads == 0 ? cpus.size() : o.threads;
  // Every thread gets at least a page.
  threads = std::min<uint64_t>(threads, bytes / kPage);

  Buffer a = allocate(bytes);
  Buffer b = allocate(bytes);
  if (!a || !b) {
    return fail(fmt::format("cannot allocate two host buffers of {}: pass a smaller --size",
                            format_binary(bytes)));
  }
  Workers workers(static_cast<unsigned>(threads), bytes, a.get(), b.get());
  if (auto started = workers.start(cpus, o.pin); !started) {
    return tl::unexpected(started.error());
  }
  workers.run(Op::kTouch);

  HostBandwidth h;
  h.threads = static_cast<unsigned>(threads);
  h.buffer_bytes = bytes;
  auto read = time_op(workers, Op::kRead, "host read", bytes, o, progress);
  if (!read) return tl::unexpected(read.error());
  auto write = time_op(workers, Op::kWrite, "host write", bytes, o, progress);
  if (!write) return tl::unexpected(write.error());
  auto copy = time_op(workers, Op::kCopy, "host copy", copy_traffic_bytes(bytes), o, progress);
  if (!copy) return tl::unexpected(copy.error());
  h.read = *read;
  h.write = *write;
  h.copy = *copy;
  h.pinned = o.pin && workers.all_pinned();
  return h;
}

}  // namespace sparkdoc::bw
