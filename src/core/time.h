// Times as text: the one place sparkdoc turns Unix seconds into ISO 8601 and back, and into
// the clock forms its live views print. UTC unless the name says local.
//
// Times outside years 0001..9999 (or not finite) have no ISO 8601 form here: the formatters
// return "" for them instead of handing gmtime a value it cannot represent (a log line may
// carry "ts": 1.8e124).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sparkdoc {

enum class TimePrecision { kSeconds, kMillis };

// 1764504000.5 -> "2026-11-30T12:00:00Z" (whole seconds, rounded down) or, with kMillis,
// "2026-11-30T12:00:00.500Z" (milliseconds rounded, never reaching 1000).
std::string format_iso8601_utc(double ts, TimePrecision precision = TimePrecision::kSeconds);

// "2026-11-29T10:15:00Z", with fractional seconds or a space for the 'T' -> Unix seconds;
// nullopt when malformed.
std::optional<double> parse_iso8601_utc(std::string_view text);

// The current time, whole seconds: what snapshots and journals record as taken_at.
std::string utc_now_iso8601();

// "2026/11/30 12:34:56.789" in the local time zone, as nvidia-smi prints its timestamp.
std::string nvidia_smi_timestamp(double ts);

// "12:34:56" in the local time zone, for the terminal views.
std::string local_clock(double ts);

}  // namespace sparkdoc
