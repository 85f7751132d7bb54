#include "elf/mapped_read.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>

namespace sparkdoc::elf {
namespace {

// What the handler reads and writes on the thread it interrupts. Lock-free atomics may be used
// in a signal handler; initial-exec TLS is reached without a call (a dynamic TLS access may go
// through __tls_get_addr, which can allocate). This component is linked into executables only
// (libsparkdoc.so, which Python loads, does not link it), where TLS is initial-exec or better
// anyway; the attribute keeps it so should that change. constinit: no lazy initialisation.
static_assert(std::atomic<uint32_t>::is_always_lock_free);
[[gnu::tls_model("initial-exec")]] constinit thread_local std::atomic<uint32_t> t_guards{0};
[[gnu::tls_model("initial-exec")]] constinit thread_local std::atomic<uint32_t> t_changes{0};

// Set once, before the handler is installed; only read after.
struct sigaction g_previous {};
uintptr_t g_page_bytes = 4096;

// Whether the faulting access is a read of a guarded mapping past the end of its file, which a
// zero page can stand in for. BUS_ADRERR is the code of an access to a mapped page with no file
// bytes behind it; the other codes (BUS_ADRALN, BUS_OBJERR, the machine-check codes) and sent
// signals (si_code <= 0) are not ours.
bool read_past_end(const siginfo_t* info) {
  return info != nullptr && info->si_code == BUS_ADRERR &&
         t_guards.load(std::memory_order_relaxed) > 0;
}

extern "C" void on_sigbus(int sig, siginfo_t* info, void* context) {
  (void)context;
  const int saved_errno = errno;
  if (read_past_end(info)) {
    // Only the page that faulted: it lies inside the mapping whose file shrank (BUS_ADRERR is
    // raised only for pages of a mapping), so MAP_FIXED replaces nothing else. mmap is not on
    // POSIX's list of async-signal-safe functions, but glibc's is a bare system call.
    void* page =
        reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(info->si_addr) & ~(g_page_bytes - 1));
    if (::mmap(page, g_page_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
        MAP_FAILED) {
      t_changes.fetch_add(1, std::memory_order_relaxed);
      errno = saved_errno;
      return;
    }
  }
  // Not ours: the disposition from before takes over. A fault recurs when the access runs again
  // on return, now under that disposition (the default one dumps core at the access). A signal
  // that was sent, or a machine check reported after the fact, would not recur: it is raised
  // again, and stays pending until this handler returns.
  ::sigaction(SIGBUS, &g_previous, nullptr);
  if (info == nullptr || info->si_code <= 0 || info->si_code == BUS_MCEERR_AO) ::raise(sig);
  errno = saved_errno;
}

bool install_handler() {
  const long page = ::sysconf(_SC_PAGESIZE);  // 4 KB, or 64 KB on some aarch64 kernels
  if (page > 0) g_page_bytes = static_cast<uintptr_t>(page);
  // Read first, installed second, so that g_previous is complete before the handler can run.
  if (::sigaction(SIGBUS, nullptr, &g_previous) != 0) return false;
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  sigemptyset(&action.sa_mask);
  // SIGBUS stays blocked while the handler runs (no SA_NODEFER): the handler touches no mapped
  // file, and a fault of its own would then end the process rather than recurse.
  action.sa_flags = SA_SIGINFO;
  return ::sigaction(SIGBUS, &action, nullptr) == 0;
}

}  // namespace

MappedReadGuard::MappedReadGuard() {
  // Once per process, thread-safe (a function-local static). If it fails, a fault is fatal as
  // it was before.
  [[maybe_unused]] static const bool installed = install_handler();
  t_guards.fetch_add(1, std::memory_order_relaxed);
}

MappedReadGuard::MappedReadGuard(MappedReadGuard&& other) noexcept
    : active_(std::exchange(other.active_, false)) {}

MappedReadGuard& MappedReadGuard::operator=(MappedReadGuard&& other) noexcept {
  if (this != &other) {
    if (active_) t_guards.fetch_sub(1, std::memory_order_relaxed);
    active_ = std::exchange(other.active_, false);
  }
  return *this;
}

MappedReadGuard::~MappedReadGuard() {
  if (active_) t_guards.fetch_sub(1, std::memory_order_relaxed);
}

ChangeWatch::ChangeWatch() : start_(t_changes.load(std::memory_order_relaxed)) {}

bool ChangeWatch::changed() const {
  return t_changes.load(std::memory_order_relaxed) != start_;
}

void note_changed() {
  t_changes.fetch_add(1, std::memory_order_relaxed);
}

std::string changed_while_read(std::string_view path) {
  return fmt::format("{}: changed while it was being read (truncated or rewritten in place)", path);
}

}  // namespace sparkdoc::elf
