// Nominal memory bandwidth of the devices sparkdoc knows, for the INFO line of G5 away from a
// DGX Spark: how far a measured device copy (read + write counted) is from the datasheet.
// Keyed by the exact name the driver reports (cuDeviceGetName / nvmlDeviceGetName), compared
// without regard to case; a name not in the table has no nominal figure ("nominal unknown"),
// never a guess from a similar name.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace sparkdoc::bw {

struct Nominal {
  std::string_view device_name;  // as the driver reports it
  double gbps = 0;               // datasheet memory bandwidth, 1e9 bytes per second
  std::string_view memory;       // "HBM3e"
};

// Every entry, in table order (for --help and the tests).
std::span<const Nominal> nominal_table();
std::optional<Nominal> nominal_bandwidth(std::string_view device_name);
// GB10's entry (273 GB/s LPDDR5x, the spec ceiling that G5 says is never sustained). A Spark
// has been seen to report another name ("NVIDIA JMJWOA-Generic-GPU"), so a caller that has
// classified the platform as a DGX Spark asks for this entry instead of looking up the name.
Nominal gb10_nominal();

}  // namespace sparkdoc::bw
