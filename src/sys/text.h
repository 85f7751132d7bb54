// Machine text made safe to record. Readings end up in JSON, which must be UTF-8, while
// environment values, paths, host names and command lines may hold any bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sparkdoc::sys {

// Length of the well-formed UTF-8 sequence starting at s[i] (1 to 4), or 0 when the bytes there
// are not one (a stray continuation byte, a truncated sequence, an invalid lead byte).
size_t utf8_sequence_length(std::string_view s, size_t i);

// s with every byte that is not part of a well-formed UTF-8 sequence replaced by '?'.
std::string valid_utf8(std::string_view s);

}  // namespace sparkdoc::sys
