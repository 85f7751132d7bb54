// Reads of files that another process may truncate or rewrite while they are read.
//
// libelf reads each ELF file through a private read-only mapping (elf_file.h): the audit needs
// the headers, the dynamic section and a few strings of files up to a few hundred MB, and a
// mapping reads only the pages touched. When a mapped file is truncated (cp over an installed
// library, or an in-place build copying its .so with open(..., "wb"), opens it with O_TRUNC
// and writes it again), the kernel drops the pages past the new end from every mapping, and
// the next read of one raises SIGBUS (BUS_ADRERR), whose default action kills the process: one
// install beside `sparkdoc check` took the whole check down. (pip unlinks a file before it
// writes the new one, so an old mapping stays whole; the audit tells that change by the file's
// inode, audit/audit.cpp.)
//
// While a MappedReadGuard lives on a thread, such a fault reads zeros instead: a process-wide
// SIGBUS handler, installed by the first guard, maps an anonymous zero page over the page that
// faulted (MAP_FIXED, so the rest of the mapping is untouched, and the owner's munmap of the
// whole mapping removes it too) and returns; the access runs again and reads zeros, which
// libelf and the parsers take as they take any malformed input. The fault is counted for the
// thread, and a ChangeWatch around one file's reading turns a count that moved into the
// "changed while it was being read" error, so whatever was parsed from the zeros is thrown
// away. Any other SIGBUS (on a thread without a guard, a sent signal, another si_code, a zero
// page that cannot be mapped) goes to the disposition that was there before our handler: a
// real bug still dies with its core dump, or reaches ASan's report.
//
// Why not pread(2) instead of the mapping: libelf's ELF_C_READ reads every section it is asked
// for whole, and .dynstr alone is megabytes in a large C++ library (3.2 MB in libLLVM-15.so.1)
// where the audit needs a few names from its start. The fatbin readers already use pread,
// piecewise (byte_source.h); they report a file found shorter than it was through
// note_changed().
//
// Threading: guards and watches are per thread (SIGBUS from a fault is delivered to the
// faulting thread); the audit reads files on several threads at once.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/result.h"

namespace sparkdoc::elf {

// Marks this thread as reading a mapped file for as long as it lives (ElfFile holds one from
// before libelf maps the file until after it unmaps it). Nests; movable, so that it can live
// inside a movable owner. The first guard of the process installs the SIGBUS handler.
class MappedReadGuard {
 public:
  MappedReadGuard();
  MappedReadGuard(MappedReadGuard&& other) noexcept;
  MappedReadGuard& operator=(MappedReadGuard&& other) noexcept;
  MappedReadGuard(const MappedReadGuard&) = delete;
  MappedReadGuard& operator=(const MappedReadGuard&) = delete;
  ~MappedReadGuard();

 private:
  bool active_ = true;
};

// Whether a file read on this thread changed under the read since this watch began: a page of
// a guarded mapping vanished (the file was truncated), or a reader found the file shorter than
// when it opened it (note_changed). Watches nest: an inner change is seen by the outer watch.
class ChangeWatch {
 public:
  ChangeWatch();
  bool changed() const;

 private:
  uint32_t start_;
};

// Called by a reader that found its file shorter than when it opened it (a pread that met the
// end early): the file changed while it was read.
void note_changed();

// "<path>: changed while it was being read (truncated or rewritten in place)".
std::string changed_while_read(std::string_view path);

// read(*open(path)), watched: when the file changed while it was opened or read, the
// changed_while_read error replaces whatever the read made of it (zeros that stood in for lost
// pages, or a mix of two versions). `open` returns Result<Source>; `read` takes the Source and
// returns a Result. Exceptions become errors naming the path.
template <class Open, class Read>
auto read_unless_changed(const std::string& path, Open&& open, Read&& read) {
  using Source = typename std::invoke_result_t<Open, const std::string&>::value_type;
  using Out = std::invoke_result_t<Read, Source&>;
  try {
    const ChangeWatch watch;
    auto source = std::forward<Open>(open)(path);
    Out result =
        source ? std::forward<Read>(read)(*source) : Out(tl::unexpected(std::move(source.error())));
    if (watch.changed()) return Out(fail(changed_while_read(path)));
    return result;
  } catch (const std::exception& e) {
    return Out(fail(fmt::format("{}: {}", path, e.what())));
  }
}

}  // namespace sparkdoc::elf
