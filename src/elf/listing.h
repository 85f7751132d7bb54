// What `cuobjdump --list-elf --list-ptx FILE` of CUDA 13.0 prints, byte for byte, so that the
// audit can be diffed against cuobjdump file by file. Formats: shared/reference/
// fatbin-and-elf.md §5.
//
//   ELF file    1: libfoo.1.sm_121a.cubin      ("ELF file %4d: <stem>.<n>.<arch>.cubin")
//   PTX file    1: libfoo.1.sm_120f.ptx        ("PTX file %4d: <stem>.<n>.<arch>.ptx")
//
// <stem> is the file's name without its directory and its last extension (libcublasLt.so.13
// gives libcublasLt.so); <n> counts ELF and PTX entries separately from 1 and equals the
// printed index; lines follow file order. A bare cubin is listed without <n>. ELF names take
// 'a' from the cubin and never show 'f'; PTX names take 'a' or 'f' from the entry header and
// are spelled sm_, not compute_. LTO-IR and unknown entries are not listed.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "elf/fatbin.h"

namespace sparkdoc::elf {

// The section cuobjdump reads without -all: .nv_fatbin when the file has containers there,
// else __nv_relfatbin ("By default will only dump contents of executable fatbin (if exists),
// else relocatable fatbin", its --all-fatbin help). So an -rdc object lists its
// __nv_relfatbin and a library linked from it lists .nv_fatbin only (reference §1.1). Fatbin
// and cubin files: the file itself.
FatbinSection cuobjdump_section(const GpuCode& code);

// The same rule from what a reader saw: the file's kind, the section of its first container
// (none without containers) and whether any container lies in .nv_fatbin. For readers that
// keep no GpuCode (CodeFactsBuilder in targets.h).
FatbinSection cuobjdump_section(GpuFileKind kind, std::optional<FatbinSection> first_container,
                                bool any_nv_fatbin_container);

// entry.section == cuobjdump_section(code); costs a pass over the containers, so loops call
// cuobjdump_section once instead.
bool cuobjdump_lists(const GpuCode& code, const FatbinEntry& entry);

// Everything cuobjdump prints (stdout, then its "cuobjdump info" lines) for `code` read from
// `path`, which is written into the info lines exactly as given ('<path>' as on cuobjdump's
// command line). Ends with a newline unless empty.
std::string list_elf_and_ptx(const GpuCode& code, std::string_view path);

// cuobjdump's exit status for that listing: 255 when the file holds no device code, else 0.
int list_exit_status(const GpuCode& code);

// "libcublasLt.so" for "/x/libcublasLt.so.13".
std::string listing_stem(std::string_view path);

// "sm_121a" / "sm_120": the arch part of an ELF entry's listed name.
std::string elf_listing_arch(const FatbinEntry& entry);
// "sm_120f" / "sm_90a" / "sm_121": the arch part of a PTX entry's listed name.
std::string ptx_listing_arch(const FatbinEntry& entry);

}  // namespace sparkdoc::elf
