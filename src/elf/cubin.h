// A CUDA device ELF image (a "cubin", e_machine 190): the SM it was built for and whether it is
// the arch-specific 'a' variant (sm_90a, sm_121a), read the way cuobjdump 13.0 reads them.
//
// Two ELF ABIs carry the SM in e_flags differently:
//   ABI v7 (EI_OSABI 0x33, EI_ABIVERSION 7; ptxas <= 12.9 for SM < 100): SM in bits 0-7, 'a' is
//     EF_CUDA_ACCELERATORS 0x800.
//   ABI v8 (EI_OSABI 0x41, EI_ABIVERSION 8; every CUDA 13 cubin): SM in bits 8-15, 'a' is 0x8,
//     which ptxas 12.8/12.9 set and ptxas 13.0 never sets: CUDA 13 records 'a' only as
//     attribute 0x09 = 1 in the .nv.compat section (sh_type 0x70000086).
// 'f' (sm_120f) is recorded nowhere the loader reads in a cubin; a fatbin entry's header carries
// it. A bare cubin (a .cubin file, never inside a fatbin) has only the ptxas command line in its
// .note.nv.tkinfo note (owner "NVIDIA Corp", type 2000: "-arch sm_121f -m 64"), which cuobjdump
// does not read (it lists such a cubin as sm_121) but which is how the build asked for the
// family; the reader records it as build_arch.
//
// Pure functions over bytes: nothing is retained, nothing is read outside the span, no input
// makes them throw or crash. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/result.h"

namespace sparkdoc::elf {

inline constexpr uint16_t kEmCuda = 190;
inline constexpr uint32_t kShtCudaCompat = 0x70000086;  // .nv.compat
inline constexpr uint8_t kCompatArchSpecific = 0x09;    // .nv.compat attribute: 1 = 'a' target

struct CubinInfo {
  uint16_t elf_type = 0;    // e_type: 1 ET_REL (-rdc), 2 ET_EXEC
  uint8_t os_abi = 0;       // e_ident[EI_OSABI]: 0x33 (ABI v7) or 0x41 (ABI v8)
  uint8_t abi_version = 0;  // e_ident[EI_ABIVERSION]: 7 or 8
  uint32_t e_flags = 0;
  uint32_t sm = 0;                 // major * 10 + minor: 121 for sm_121a
  bool accelerators_flag = false;  // the e_flags 'a' bit of this ABI (0x800 or 0x8)
  // Attribute 0x09 of .nv.compat, when the section and the attribute are present.
  std::optional<uint32_t> compat_arch_specific;
  // 'a' exactly as cuobjdump 13.0 names the cubin: ABI v7 by 0x800 only; ABI v8 by 0x8 or
  // compat attribute 0x09 = 1.
  bool arch_specific = false;
  // Some section holds instructions (SHF_EXECINSTR, non-empty). False for the kernel-less
  // cubins that nvcc's device-link step adds to every `nvcc -shared` build.
  bool has_code = false;
  // The target ptxas was given ("sm_121f"), from the .note.nv.tkinfo note's options; "" when
  // not read (only inspect_cubin with read_build_note reads it) or absent.
  std::string build_arch;
  // The build asked for the 'f' family of this very SM (build_arch is "sm_<sm>f") and the
  // cubin is not 'a'.
  bool family_specific() const;
  bool operator==(const CubinInfo&) const = default;
};

inline constexpr uint32_t kShtNote = 7;
inline constexpr uint32_t kNoteNvToolkitInfo = 2000;  // .note.nv.tkinfo

// The "-arch" (or "--gpu-name") value in a .note.nv.tkinfo note's descriptor: its strings, NUL
// separated, hold the tool, the toolkit release, the build and the options. "" when no option
// names an sm_ target.
std::string tkinfo_build_arch(std::span<const std::byte> desc);

// The build_arch of a run of ELF notes (a SHT_NOTE section's bytes): the first note of owner
// "NVIDIA Corp" and type 2000. Stops at a note cut off by the end.
std::string notes_build_arch(std::span<const std::byte> notes);

// Reads the ELF header, the section headers and .nv.compat of `image`. ELF32 and ELF64, little-
// endian only (no big-endian cubin exists). Errors (message gives the offset of the fault):
// not ELF, big-endian, e_machine other than 190, a header or the section table beyond the end
// of the image. A .nv.compat section whose bytes lie outside the image is also an error.
// With `read_build_note`, also the .note.nv.tkinfo note (build_arch): for bare cubins, where no
// fatbin header says 'f'.
Result<CubinInfo> inspect_cubin(std::span<const std::byte> image, bool read_build_note = false);

// The value of attribute `attribute` in a run of .nv.compat records ({u8 format, u8 attribute,
// value}: format 1 no value, 2 one byte and a pad byte, 3 a u16, 4 a u16 length then that many
// bytes). Stops at the first unknown format or at a record cut off by the end of `records`;
// the first occurrence wins.
std::optional<uint32_t> find_compat_attribute(std::span<const std::byte> records,
                                              uint8_t attribute);

}  // namespace sparkdoc::elf
