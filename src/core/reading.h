// A Reading is one value taken from the machine, or the reason it could not be taken.
// Missing data is data: checks turn a missing reading into SKIP with its reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/result.h"

namespace sparkdoc {

std::string_view why_name(Why why);                       // "absent", "not_supported", ...
std::optional<Why> why_from_name(std::string_view name);  // inverse of why_name

struct Missing {
  Why why = Why::kAbsent;
  std::string detail;
  bool operator==(const Missing&) const = default;
};

template <class T>
class Reading {
 public:
  Reading() : missing_{Why::kAbsent, "not read"} {}
  Reading(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Reading(Missing missing) : missing_(std::move(missing)) {}  // NOLINT

  static Reading absent(Why why, std::string detail) {
    return Reading(Missing{why, std::move(detail)});
  }
  // Converts a Result: the value, or the error as the missing reason.
  static Reading from(Result<T> result) {
    if (result) return Reading(std::move(*result));
    return absent(result.error().why, std::move(result.error().message));
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const T& value() const { return *value_; }
  T& value() { return *value_; }
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }
  const T* get() const { return value_ ? &*value_ : nullptr; }
  T value_or(T fallback) const { return value_ ? *value_ : std::move(fallback); }
  // Valid only when !ok().
  const Missing& missing() const { return missing_; }
  // "not supported: NVML_ERROR_NOT_SUPPORTED" style text for SKIP lines.
  std::string reason() const {
    if (ok()) return "";
    std::string out(why_name(missing_.why));
    for (auto& c : out) if (c == '_') c = ' ';
    if (!missing_.detail.empty()) out += ": " + missing_.detail;
    return out;
  }

  // The reason as people read it: the detail alone for a thing that is simply absent ("not
  // read: --no-gpu"), else reason()'s "not supported: NVML_ERROR_NOT_SUPPORTED (3)" style.
  std::string why_not() const {
    if (missing_.why == Why::kAbsent && !missing_.detail.empty()) return missing_.detail;
    return reason();
  }

  bool operator==(const Reading& other) const {
    if (ok() != other.ok()) return false;
    return ok() ? *value_ == *other.value_ : missing_ == other.missing_;
  }

 private:
  std::optional<T> value_;
  Missing missing_;
};

}  // namespace sparkdoc
