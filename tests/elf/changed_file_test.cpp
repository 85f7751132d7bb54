// Files truncated while they are read (issue 21 item 4: `sparkdoc audit` died of SIGBUS when a
// .so was rewritten in place beside it). libelf maps each file; a page past the new end then
// raises SIGBUS on its next read. The hook (libelf_hook.h) truncates the file at the exact
// point: libelf has mapped it and read its header, and nothing else yet.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "elf/dynamic.h"
#include "elf/fatbin.h"
#include "elf/mapped_read.h"
#include "elf/sections.h"
#include "libelf_hook.h"
#include "temp_file.h"

namespace sparkdoc::elf {
namespace {

using testing::at_next;
using ::testing::HasSubstr;
using testing::LibelfStep;
using testing::TempFile;

// An nvcc-built shared object: its .dynamic is on page 4 and its section table on page 5, past
// the 100 bytes that a truncation leaves.
std::string gencode_so() {
  std::ifstream in(std::string(SPARKDOC_FIXTURES) + "/elf/gencode.so", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void truncate_to(const std::string& path, off_t size) {
  ASSERT_EQ(::truncate(path.c_str(), size), 0) << path;
}

class ChangedWhileRead : public ::testing::Test {
 protected:
  void TearDown() override { testing::clear_libelf_hook(); }
};

// Whether `read` of a copy of gencode.so that is cut to `size` bytes at `step` gives the changed
// error (and the process lives to say so).
template <class Read>
::testing::AssertionResult changed_error_when_cut(LibelfStep step, off_t size, Read read) {
  TempFile file(gencode_so());
  at_next(step, [&] { truncate_to(file.path(), size); });
  const auto result = read(file.path());
  if (result) return ::testing::AssertionFailure() << "no error: what stood in was parsed as data";
  if (result.error().message != changed_while_read(file.path())) {
    return ::testing::AssertionFailure() << result.error().message;
  }
  return ::testing::AssertionSuccess();
}

TEST_F(ChangedWhileRead, ADynamicSectionTruncatedAwayIsTheChangedErrorNotASigbus) {
  EXPECT_TRUE(changed_error_when_cut(LibelfStep::kOpened, 100, read_dynamic));
  // Short from the start, a file is a truncated one, not a changed one.
  TempFile file(gencode_so().substr(0, 100));
  auto read = read_dynamic(file.path());
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("truncated: its section header table ends"));
}

TEST_F(ChangedWhileRead, ASectionTableTruncatedAwayIsTheChangedError) {
  EXPECT_TRUE(changed_error_when_cut(LibelfStep::kOpened, 100, read_sections));
}

TEST_F(ChangedWhileRead, AFileTruncatedToNothingIsTheChangedError) {
  EXPECT_TRUE(changed_error_when_cut(LibelfStep::kOpened, 0, read_dynamic))
      << "its header page is gone too";
}

TEST_F(ChangedWhileRead, GpuCodeWhoseSectionTableIsTruncatedAwayIsTheChangedError) {
  EXPECT_TRUE(changed_error_when_cut(LibelfStep::kOpened, 100, read_gpu_code));
}

// The fatbin headers are read with pread after libelf has given the section table: a file
// truncated in between ends before the size it had at open.
TEST_F(ChangedWhileRead, AFatbinTruncatedBeforeItsHeadersAreReadIsTheChangedError) {
  const ChangeWatch watch;
  EXPECT_TRUE(changed_error_when_cut(LibelfStep::kClosed, 3000, read_gpu_code));
  EXPECT_TRUE(watch.changed()) << "the audit's watch sees it too";
}

TEST_F(ChangedWhileRead, WatchesNestAndSeeOnlyWhatCameAfterThem) {
  ChangeWatch outer;
  {
    TempFile file(gencode_so());
    ChangeWatch inner;
    at_next(LibelfStep::kOpened, [&] { truncate_to(file.path(), 100); });
    EXPECT_FALSE(read_dynamic(file.path()));
    EXPECT_TRUE(inner.changed());
  }
  EXPECT_TRUE(outer.changed());
  ChangeWatch later;
  TempFile file(gencode_so());
  EXPECT_TRUE(read_dynamic(file.path()));
  EXPECT_FALSE(later.changed());
}

// How a SIGBUS that is not ours ends a death test's child: AddressSanitizer's handler (the
// disposition before ours in an instrumented build) reports it and exits 1; without it, the
// default action kills the process with the signal.
#if defined(__SANITIZE_ADDRESS__)
#define SPARKDOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPARKDOC_ASAN 1
#endif
#endif
#ifdef SPARKDOC_ASAN
#define EXPECT_SIGBUS_DEATH(statement) \
  EXPECT_EXIT(statement, ::testing::ExitedWithCode(1), "AddressSanitizer: BUS")
#else
#define EXPECT_SIGBUS_DEATH(statement) EXPECT_EXIT(statement, ::testing::KilledBySignal(SIGBUS), "")
#endif

// A mapped page past the end of its file, read on a thread that holds no guard: a real bug,
// which must still end the process.
[[noreturn]] void read_vanished_page_unguarded() {
  { const MappedReadGuard installs_the_handler; }
  TempFile file(std::string(2 * 65536, 'x'));
  const int fd = ::open(file.path().c_str(), O_RDWR | O_CLOEXEC);
  void* map = fd < 0 ? MAP_FAILED : ::mmap(nullptr, 2 * 65536, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED || ::ftruncate(fd, 0) != 0) std::_Exit(0);  // no fault: the test fails
  std::printf("%d\n", static_cast<const volatile char*>(map)[65536]);
  std::_Exit(0);
}

// qemu-user turns a SIGBUS that the guard hands back to the default action into an endless
// loop of faults rather than the end of the process: these two run on real hardware only.
#define SKIP_UNDER_EMULATOR()                                                          \
  if (const char* emulator = std::getenv("SPARKDOC_TEST_EMULATOR")) {                  \
    GTEST_SKIP() << "under " << emulator << ", which loops on a re-raised SIGBUS"; \
  }

TEST(ChangedWhileReadDeathTest, AFaultOutsideAGuardStillEndsTheProcess) {
  SKIP_UNDER_EMULATOR();
  EXPECT_SIGBUS_DEATH(read_vanished_page_unguarded());
}

TEST(ChangedWhileReadDeathTest, ASentSigbusStillEndsTheProcess) {
  SKIP_UNDER_EMULATOR();
  EXPECT_SIGBUS_DEATH({
    const MappedReadGuard guarded;
    ::raise(SIGBUS);
    std::_Exit(0);
  });
}

}  // namespace
}  // namespace sparkdoc::elf
