#include "libelf_hook.h"

#include <libelf.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <utility>

namespace sparkdoc::elf::testing {
namespace {

std::mutex g_mutex;
std::atomic<bool> g_armed{false};
std::optional<LibelfStep> g_step;
std::function<void()> g_action;

void reached(LibelfStep step) {
  if (!g_armed.load()) return;
  std::function<void()> action;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_step != step) return;
    g_step.reset();
    g_armed = false;
    action = std::move(g_action);
  }
  action();
}

}  // namespace

void at_next(LibelfStep step, std::function<void()> action) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_step = step;
  g_action = std::move(action);
  g_armed = true;
}

void clear_libelf_hook() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_armed = false;
  g_step.reset();
  g_action = nullptr;
}

}  // namespace sparkdoc::elf::testing

using sparkdoc::elf::testing::LibelfStep;

// The linker's --wrap (tests/elf/CMakeLists.txt, libelf_hook_link) sends sparkdoc_elf's calls
// of elf_kind and elf_end here and names libelf's own __real_*, whether libelf is the shared
// library or the static archive of a static-runtime build (where dlsym has nothing to find).
extern "C" Elf_Kind __real_elf_kind(Elf* elf);
extern "C" int __real_elf_end(Elf* elf);

extern "C" Elf_Kind __wrap_elf_kind(Elf* elf) {
  sparkdoc::elf::testing::reached(LibelfStep::kOpened);
  return __real_elf_kind(elf);
}

extern "C" int __wrap_elf_end(Elf* elf) {
  const int result = __real_elf_end(elf);
  sparkdoc::elf::testing::reached(LibelfStep::kClosed);
  return result;
}
