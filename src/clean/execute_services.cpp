// clean/execute.h: stopping the known desktop service that holds GPU memory (000 §6 step 1),
// with systemctl as the user whose session runs it (tune/services.h).
#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "clean/execute.h"
#include "core/strings.h"
#include "tune/services.h"

namespace sparkdoc::clean {
namespace {

// What systemctl may take to stop a unit before it is given up on.
constexpr auto kStopTimeout = std::chrono::seconds(30);

}  // namespace

std::optional<std::string> run_stop_known(Step& step, const Options& options,
                                          const mem::MemReport& mem, Observer* observer) {
  if (!options.machine.root.live()) {
    step.state = StepState::kSkipped;
    step.detail = "not on a fixture root: systemctl would act on this machine";
    return std::nullopt;
  }
  std::vector<std::string> failures;
  std::vector<std::string> stopped;
  std::optional<std::string> restart_hint;
  for (const auto& k : mem.stoppable) {
    auto owner = tune::process_owner(options.machine.root, k.pid);
    if (!owner) {
      step.lines.push_back(fmt::format("{} (pid {}): {}", k.kind, k.pid, owner.error().message));
      continue;
    }
    auto name = tune::user_name(*owner);
    auto argv = tune::stop_unit_argv(tune::kRemoteDesktopUnit, *owner,
                                     name ? *name : std::to_string(*owner), options.machine.euid);
    step.command = argv;
    auto program = tune::find_program(argv.front(), options.machine.path);
    if (!program) {
      failures.push_back(program.error().message);
      continue;
    }
    argv.front() = *program;
    if (observer != nullptr) observer->working(fmt::format("stopping {} (pid {})", k.kind, k.pid));
    auto ran = tune::run_program(argv, kStopTimeout);
    if (!ran) {
      failures.push_back(ran.error().message);
    } else if (ran->timed_out) {
      failures.push_back(
          fmt::format("{} did not finish in {} s", join(step.command, " "), kStopTimeout.count()));
    } else if (ran->exit_status != 0) {
      failures.push_back(fmt::format("{} exited {}: {}", join(step.command, " "), ran->exit_status,
                                     std::string(trim(ran->output))));
    } else {
      stopped.push_back(fmt::format("{} (pid {})", k.kind, k.pid));
      std::vector<std::string> start = step.command;
      for (auto& word : start) {
        if (word == "stop") word = "start";
      }
      restart_hint = "gnome-remote-desktop was stopped; start it again after the load with `" +
                     join(start, " ") + "`";
    }
  }
  if (!failures.empty()) {
    step.state = StepState::kFailed;
    step.detail = join(failures, "; ");
  } else if (stopped.empty()) {
    step.state = StepState::kSkipped;
    step.detail = "nothing to stop: the process is gone";
  } else {
    step.state = StepState::kDone;
    step.detail = "stopped " + join(stopped, ", ");
  }
  return restart_hint;
}
}  // namespace sparkdoc::clean
