#include "bw/record.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "model/snapshot_json.h"

namespace sparkdoc::bw {
namespace {

std::string rate_row(std::string_view label, const TransferRate& r, std::string_view counted) {
  return fmt::format("  {:<12} {:>9.1f} GB/s {:>9.1f} GB/s   {}\n", label, r.median_gbps,
                     r.best_gbps, counted);
}

std::string absent_row(std::string_view label, const std::string& reason) {
  return fmt::format("  {:<12} not measured: {}\n", label, reason);
}

}  // namespace

std::string method_text(const DeviceResult& d) {
  std::string size = format_binary(d.buffer_bytes);
  return fmt::format(
      "cuMemcpyDtoDAsync between two {} device buffers, median of {} timed copies after {} "
      "warm-up, timed with events; read + write bytes counted (2 x {} per copy)",
      size, d.copy.runs, d.warmup_runs, size);
}

Reading<BandwidthMeasurement> to_measurement(const Result<DeviceResult>& device,
                                             const Reading<HostBandwidth>& host,
                                             const std::optional<Nominal>& nominal,
                                             std::string taken_at) {
  if (!device) {
    // In the snapshot "absent" means never measured; a measurement that was tried and could
    // not be taken (no driver is the commonest) is an error with its reason.
    Why why = device.error().why == Why::kAbsent ? Why::kError : device.error().why;
    return Reading<BandwidthMeasurement>::absent(why, device.error().message);
  }
  BandwidthMeasurement m;
  m.device_copy_gbps = device->copy.median_gbps;
  m.device_copy_best_gbps = device->copy.best_gbps;
  m.method = method_text(*device);
  m.taken_at = std::move(taken_at);
  m.device_name = device->name;
  m.device_ordinal = device->ordinal;
  m.buffer_bytes = device->buffer_bytes;
  if (nominal) {
    m.nominal_gbps = nominal->gbps;
    m.nominal_source = fmt::format("{}, {}", nominal->device_name, nominal->memory);
  }
  m.h2d = device->h2d;
  m.d2h = device->d2h;
  m.host = host;
  return m;
}

Reading<BandwidthMeasurement> measurement_of(const BwReport& r) {
  return to_measurement(r.device, r.host, r.nominal, r.taken_at);
}

std::string render_bw_text(const BwReport& r) {
  std::string out;
  if (r.device) {
    const DeviceResult& d = *r.device;
    std::string size = format_binary(d.buffer_bytes);
    out += fmt::format(
        "sparkdoc bw: {} (device {}); buffers of {}; median and best of {} timed runs after {} "
        "warm-up\n",
        d.name.empty() ? std::string("unnamed GPU") : d.name, d.ordinal, size, d.copy.runs,
        d.warmup_runs);
    out += fmt::format("  {:<12} {:>14} {:>14}   {}\n", "", "median", "best",
                       "bytes counted per run");
    out += rate_row("device copy", d.copy,
                    fmt::format("read + write, 2 x {} (cuMemcpyDtoDAsync)", size));
    if (d.h2d) {
      out += rate_row("pinned H2D", *d.h2d, size + ", host to device (cuMemHostAlloc buffer)");
    } else {
      out += absent_row("pinned H2D", d.h2d.reason());
    }
    if (d.d2h) {
      out += rate_row("pinned D2H", *d.d2h, size + ", device to host");
    } else {
      out += absent_row("pinned D2H", d.d2h.reason());
    }
  } else {
    out += fmt::format("sparkdoc bw: device {}: not measured: {}\n", r.ordinal,
                       r.device.error().message);
  }
  if (r.host) {
    const HostBandwidth& h = *r.host;
    std::string size = format_binary(h.buffer_bytes);
    if (!r.device) {
      out += fmt::format("  {:<12} {:>14} {:>14}   {}\n", "", "median", "best",
                         "bytes counted per run");
    }
    out += rate_row("host read", h.read, size + " read");
    out += rate_row("host write", h.write, size + " written");
    out += rate_row("host copy", h.copy, fmt::format("read + write, 2 x {} (memcpy)", size));
    out += fmt::format("  host: {} threads, {}\n", h.threads,
                       h.pinned ? "each bound to its own CPU" : "not bound to CPUs");
  } else {
    out += absent_row("host", r.host.reason());
  }
  if (r.device) {
    if (r.nominal) {
      out += fmt::format(
          "  nominal: {:.0f} GB/s ({}, {}); the device copy (median) is {:.1f} % of it\n",
          r.nominal->gbps, r.nominal->device_name, r.nominal->memory,
          100.0 * r.device->copy.median_gbps / r.nominal->gbps);
    } else {
      out += fmt::format("  nominal: unknown for {}\n",
                         r.device->name.empty() ? std::string("this GPU") : r.device->name);
    }
  }
  for (const auto& note : r.notes) out += "  note: " + note + "\n";
  if (r.device) {
    for (const auto& note : r.device->notes) out += "  note: " + note + "\n";
  }
  return out;
}

nlohmann::json render_bw_json(const BwReport& r) {
  std::vector<std::string> notes = r.notes;
  if (r.device) notes.insert(notes.end(), r.device->notes.begin(), r.device->notes.end());
  return nlohmann::json{{"bandwidth", bandwidth_to_json(measurement_of(r))},
                        {"host", host_bandwidth_to_json(r.host)},
                        {"notes", notes}};
}

}  // namespace sparkdoc::bw
