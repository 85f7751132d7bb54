// A test's action run at an exact point of a read through libelf, on whatever thread reaches
// it: how a test changes a file between libelf's mapping it and its reading it, which a second
// process only hits by chance. Link libelf_hook.cpp into the test binary with
// libelf_hook_link(TARGET) (tests/elf/CMakeLists.txt): the linker's --wrap then sends
// sparkdoc_elf's calls of elf_kind and elf_end through it before they reach libelf's own.
#pragma once

#include <functional>

namespace sparkdoc::elf::testing {

enum class LibelfStep {
  // elf_kind: ElfFile::open's first call after elf_begin. libelf has mapped the file and read
  // its header; the section headers, the dynamic section and the strings are still unread.
  kOpened,
  // elf_end: ElfFile is done with the file (the section table has been read).
  kClosed,
};

// Runs `action` once, the next time any thread reaches `step` in any file.
void at_next(LibelfStep step, std::function<void()> action);

// Drops an action that never ran (the test failed before its read).
void clear_libelf_hook();

}  // namespace sparkdoc::elf::testing
