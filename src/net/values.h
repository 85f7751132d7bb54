// The values the network probes take from sysfs and from library names: pure parsers over the
// text as the kernel writes it (a trailing newline allowed), each returning none for anything
// else. Strings that go into the snapshot pass through clean_value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparkdoc::net {

// A value as recorded: surrounding white space trimmed, every byte that is not printable ASCII
// shown as '?', cut at `max_bytes`. Interface names, addresses and firmware strings are ASCII;
// anything else in a sysfs file (or a fixture) is damage, kept visible but harmless in JSON.
std::string clean_value(std::string_view text, size_t max_bytes = 256);

// An unsigned decimal integer file ("9000\n"). None for anything else.
std::optional<uint64_t> parse_sysfs_uint(std::string_view text);

// /sys/class/net/<if>/speed in Mb/s. None for -1 (the driver does not know: no link) and for
// anything that is not a decimal integer.
std::optional<int64_t> parse_speed_mbps(std::string_view text);

// /sys/class/net/<if>/carrier: "1" true, "0" false, else none.
std::optional<bool> parse_carrier(std::string_view text);

// A port's rate, "200 Gb/sec (4X HDR)", "40 Gb/sec (4X QDR)", "2.5 Gb/sec (1X SDR)", in Gb/s.
std::optional<double> parse_rate_gbps(std::string_view text);

// A GID as sysfs writes it: eight groups of four hex digits joined by ':'
// ("fe80:0000:0000:0000:0e42:a1ff:fe00:0001"), lower-cased. None for the all-zero GID of an
// empty slot and for anything malformed.
std::optional<std::string> parse_gid(std::string_view text);

// Whether a device name is a PCI function address, "0000:01:00.0" (domain:bus:device.function
// in hex; the domain has four or more digits).
bool is_pci_address(std::string_view name);

// The version in a versioned NCCL library name: "libnccl.so.2.28.9" -> "2.28.9". None for
// "libnccl.so", "libnccl.so.2" and anything else (each part decimal, three of them).
std::optional<std::string> parse_nccl_library_name(std::string_view file_name);

}  // namespace sparkdoc::net
