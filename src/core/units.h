// Byte quantities. Sizes shown to people are decimal GB (1e9), as nvidia-smi, the seeds and
// `free -g` readers use them; "GiB" is accepted on input and means 2^30.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace sparkdoc {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;
inline constexpr uint64_t kGB = 1000ull * 1000 * 1000;

// Sums and products of byte counts that stop at 2^64-1 instead of wrapping: the counts may come
// from a snapshot file, where nothing bounds them.
constexpr uint64_t add_saturating(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
constexpr uint64_t mul_saturating(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}
// a - b, or 0 when b is larger.
constexpr uint64_t sub_clamped(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}
// As a signed count, capped at INT64_MAX instead of wrapping negative.
constexpr int64_t as_signed(uint64_t v) {
  return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
}

// "70GB", "70 GB", "70G" (decimal), "64GiB", "512MiB", "1.5TB", "123456" (bytes).
Result<uint64_t> parse_size(std::string_view text);

// parse_size for a memory amount a person types (check --need, clean --need, plan --available):
// the same, except that a bare number is refused, since "--need 70" meant 70 GB and read as 70
// bytes, which every machine has. The error says what to write ("70GB" or "70GiB").
Result<uint64_t> parse_memory_size(std::string_view text);

// "1s", "500ms", "10m", "2h", "1d", "1.5" (seconds) -> seconds. Errors: no number, a negative
// number, an unknown unit, or more than a year.
Result<double> parse_duration_s(std::string_view text);

// 14234000000 -> "14.2 GB" (one decimal).
std::string format_gb(uint64_t bytes);
std::string format_gb(int64_t bytes);
// 1048576 -> "1.0 MiB"; picks KiB/MiB/GiB.
std::string format_binary(uint64_t bytes);

// 12.4 -> "12.4 s"; 190 -> "3 min 10 s"; 3720 -> "1 h 02 min". Negative and NaN give "?".
std::string format_duration(double seconds);

// Nanoseconds as the largest fitting unit: "3.0 h", "12.5 min", "1.2 s", "0.4 ms".
std::string format_duration_ns(uint64_t ns);
// Milliwatts as watts with one decimal: "11.2 W".
std::string format_watts(uint64_t mw);

}  // namespace sparkdoc
