// Times as text, from Unix seconds with millisecond resolution.
#pragma once

#include <string>

namespace sparkdoc::watch {

// 1764504000.5 -> "2026-11-30T12:00:00.500Z" (UTC), as the log writes "t" and "started".
std::string iso8601_utc(double ts);

// "2026/11/30 12:34:56.789" in the local time zone, as nvidia-smi prints its timestamp.
std::string nvidia_smi_timestamp(double ts);

// "12:34:56" in the local time zone, for the terminal view.
std::string local_clock(double ts);

}  // namespace sparkdoc::watch
