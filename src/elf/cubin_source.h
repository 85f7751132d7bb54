// inspect_cubin over a ByteSource, for the fatbin reader: a cubin inside a file is read piece
// by piece (ELF header, section table, .nv.compat) instead of whole. Internal to the component.
#pragma once

#include <cstdint>

#include "core/result.h"
#include "elf/byte_source.h"
#include "elf/cubin.h"

namespace sparkdoc::elf {

// The cubin occupying [at, at + size) of `source`; the same checks and errors as
// inspect_cubin, with offsets relative to `at`.
Result<CubinInfo> inspect_cubin_at(ByteSource& source, uint64_t at, uint64_t size,
                                   bool read_build_note = false);

}  // namespace sparkdoc::elf
