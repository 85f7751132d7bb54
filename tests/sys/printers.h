// Readable failure messages for the sys reading types (GoogleTest finds PrintTo by ADL).
#pragma once

#include <ostream>

#include "model/sys.h"

namespace sparkdoc::sys {

inline void PrintTo(const ParallelConfigHit& h, std::ostream* os) {
  *os << h.file << ":" << h.line << " " << h.key << "=" << h.value;
}
inline void PrintTo(const KnownServer& s, std::ostream* os) {
  *os << s.pid << " " << s.kind << " [" << s.cmdline << "]";
}
inline void PrintTo(const GpuHolder& h, std::ostream* os) {
  *os << h.pid << " " << h.comm << " [" << h.cmdline << "] holds";
  for (const auto& d : h.devices) *os << " " << d;
}

}  // namespace sparkdoc::sys
