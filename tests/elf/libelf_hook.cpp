#include "libelf_hook.h"

#include <dlfcn.h>
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

// libelf's own function: the next definition after this binary's.
template <class Function>
Function* libelf(const char* name) {
  void* found = ::dlsym(RTLD_NEXT, name);
  if (found == nullptr) {
    std::fprintf(stderr, "libelf_hook: no %s after the test binary's\n", name);
    std::abort();
  }
  return reinterpret_cast<Function*>(found);
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

extern "C" Elf_Kind elf_kind(Elf* elf) {
  static auto* const real = sparkdoc::elf::testing::libelf<Elf_Kind(Elf*)>("elf_kind");
  sparkdoc::elf::testing::reached(LibelfStep::kOpened);
  return real(elf);
}

extern "C" int elf_end(Elf* elf) {
  static auto* const real = sparkdoc::elf::testing::libelf<int(Elf*)>("elf_end");
  const int result = real(elf);
  sparkdoc::elf::testing::reached(LibelfStep::kClosed);
  return result;
}
