// The dynamic section of an ELF shared object or executable: the libraries it needs
// (DT_NEEDED), the name it answers to (DT_SONAME) and where the loader searches for its needs
// (DT_RPATH, DT_RUNPATH). The native-code audit resolves and version-checks these; this header
// only reads them.
//
// Both functions accept ELF32 and ELF64 in either byte order. They read the SHT_DYNAMIC section
// and the string table its sh_link names; a file without section headers (sstrip) is read
// through PT_DYNAMIC, with DT_STRTAB mapped to a file offset through the PT_LOAD segments.
// A valid ELF file without a dynamic section (static executable, relocatable object) gives an
// empty DynamicInfo. Anything else that cannot be read (not ELF, truncated, a string offset
// outside the string table) is an error whose message names the file; these never crash on
// any input and never throw.
//
// Values are kept verbatim ($ORIGIN is not expanded); RPATH and RUNPATH are split on ':' and
// empty fields, which glibc reads as the current directory, are dropped.
//
// Thread-safe: each call uses its own libelf handle.
#pragma once

#include <cstddef>
#include <string>

#include "core/result.h"
#include "model/elf.h"

namespace sparkdoc::elf {

// Reads the file at `path` (mapped, not copied: only the pages holding the headers, the dynamic
// section and the strings it names are read, whatever the file's size).
// Errors: Why::kAbsent / kNoPermission when the file cannot be opened, kError otherwise; a file
// truncated while it is read gives changed_while_read's error (mapped_read.h), never a crash.
Result<DynamicInfo> read_dynamic(const std::string& path);

// The same for an image already in memory (the fuzzer's entry point). The bytes are copied
// before libelf sees them and are not retained.
Result<DynamicInfo> parse_dynamic(const void* data, size_t size);

}  // namespace sparkdoc::elf
