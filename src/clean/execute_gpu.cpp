// clean/execute.h: the steps on the GPU. The CUDA step lives in clean rather than in tune so
// that tune needs no CUDA; the clock cap goes through tune, which journals it.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "clean/execute.h"
#include "core/strings.h"
#include "core/units.h"
#include "gpu/context.h"

namespace sparkdoc::clean {
namespace {

void say(Observer* observer, std::string_view what) {
  if (observer != nullptr) observer->working(what);
}

}  // namespace

void run_fresh_context(Step& step, const Options& options, Observer* observer) {
  if (!options.machine.root.live()) {
    step.state = StepState::kSkipped;
    step.detail = "not on a fixture root";
    return;
  }
  if (options.no_gpu) {
    step.state = StepState::kSkipped;
    step.detail = "--no-gpu";
    return;
  }
  const auto& cuda = gpu::Cuda::instance();
  if (!cuda) {
    step.state = StepState::kFailed;
    step.detail = cuda.error().message;
    return;
  }
  say(observer, "creating a fresh CUDA context");
  auto m = gpu::fresh_context_mem_info(*cuda, 0);
  if (!m) {
    step.state = StepState::kFailed;
    step.detail = m.error().message;
    return;
  }
  step.state = StepState::kDone;
  step.detail = fmt::format(
      "context created and released; cuMemGetInfo said {} free of {} (the seed's figure; on "
      "unified memory it leaves out swap and reclaimable cache)",
      format_gb(m->free_bytes), format_gb(m->total_bytes));
}

bool run_clock_cap(Step& step, tune::JournalWriter& journal, tune::GpuClockControl& clocks,
                   Observer* observer) {
  say(observer, "locking the GPU clocks");
  std::vector<std::string> failures;
  std::vector<std::string> locked;
  for (ClockLock& lock : step.clock_locks) {
    auto capped = tune::cap_gpu_clocks(journal, clocks, lock.gpu, lock.cap);
    if (!capped) {
      failures.push_back(lock.gpu.uuid + ": " + capped.error().message);
      continue;
    }
    lock.journaled = true;
    locked.push_back(lock.gpu.uuid);
  }
  if (!failures.empty()) {
    step.state = StepState::kFailed;
    step.detail = join(failures, "; ");
    if (!locked.empty()) step.detail += "; locked all the same: " + join(locked, ", ");
  } else {
    step.state = StepState::kDone;
    step.detail = fmt::format(
        "{} locked to {}, journaled; `sparkdoc clean --restore` after training resets the clocks",
        locked.size() == 1 ? std::string("the GPU is") : fmt::format("{} GPUs are", locked.size()),
        tune::clock_cap_text(step.clock_locks.front().cap));
  }
  return !locked.empty();
}

}  // namespace sparkdoc::clean
