// The loader's errors: a message (naming the file and tensor at fault) and what kind of fault
// it is, which the C ABI turns into a status code and Python into an exception class.
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <utility>

#include "core/result.h"

namespace sparkdoc::load {

enum class Fault {
  kInvalidArgument,  // the caller's request is wrong (no destination, index out of range)
  kNotFound,         // a file or tensor does not exist
  kIo,               // a read failed or a file ended early
  kBadCheckpoint,    // a header or index is invalid
  kNoCuda,           // no usable driver library, or no such device
  kCuda,             // a driver call failed
  kOutOfMemory,      // host or device memory could not be allocated
  kPermission,       // the file or device may not be accessed
};

struct Failure {
  Fault fault = Fault::kIo;
  std::string message;
};

template <class T>
using Outcome = tl::expected<T, Failure>;

inline tl::unexpected<Failure> failure(Fault fault, std::string message) {
  return tl::unexpected<Failure>(Failure{fault, std::move(message)});
}

// A core Error as a Failure: absent → not found, no permission → permission, anything else
// → `otherwise`.
inline Failure as_failure(const Error& error, Fault otherwise) {
  switch (error.why) {
    case Why::kAbsent:
      return Failure{Fault::kNotFound, error.message};
    case Why::kNoPermission:
      return Failure{Fault::kPermission, error.message};
    default:
      return Failure{otherwise, error.message};
  }
}

}  // namespace sparkdoc::load
