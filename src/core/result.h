// Expected failures travel as values: Result<T> holds a T or an Error.
// The alias is over tl::expected so that C++23's std::expected is a one-line switch.
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace sparkdoc {

// Why a reading or an operation has no value. The JSON spellings are public (snapshot schema).
enum class Why {
  kAbsent,         // the thing does not exist here (no file, no driver, no such package)
  kNotSupported,   // exists, but this device or kernel cannot answer (NVML NOT_SUPPORTED)
  kNoPermission,   // exists, but this user may not read it
  kError,          // tried and failed; the detail says how
};

struct Error {
  Why why = Why::kError;
  std::string message;
};

template <class T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(std::string message) {
  return tl::unexpected<Error>(Error{Why::kError, std::move(message)});
}
inline tl::unexpected<Error> fail(Why why, std::string message) {
  return tl::unexpected<Error>(Error{why, std::move(message)});
}

}  // namespace sparkdoc
