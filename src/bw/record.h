// A `sparkdoc bw` run as the snapshot records it (Snapshot::bandwidth, judged by G5), and as
// it is shown: text for people, JSON for machines. Pure.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bw/device.h"
#include "bw/nominal.h"
#include "core/reading.h"
#include "core/result.h"
#include "model/snapshot.h"

namespace sparkdoc::bw {

// "cuMemcpyDtoDAsync between two 2.0 GiB device buffers, median of 20 timed copies after 3
// warm-up, timed with events; read + write bytes counted (2 x 2.0 GiB per copy)".
std::string method_text(const DeviceResult& device);

// The snapshot record: the device copy (median as device_copy_gbps, best, buffer, method),
// the nominal figure when known, the pinned transfers and the host figures. When the copy
// could not be measured: missing with the device's error, as Why::kError when the error said
// kAbsent (the snapshot keeps kAbsent for "never measured"), so G5 says why.
Reading<BandwidthMeasurement> to_measurement(const Result<DeviceResult>& device,
                                             const Reading<HostBandwidth>& host,
                                             const std::optional<Nominal>& nominal,
                                             std::string taken_at);

// One run of `sparkdoc bw`.
struct BwReport {
  int ordinal = 0;                  // the device asked for
  Result<DeviceResult> device = fail(Why::kAbsent, "not measured");
  Reading<HostBandwidth> host;      // absent with the reason when not measured
  std::optional<Nominal> nominal;   // the device's nominal figure, when known
  std::string taken_at;             // UTC, ISO 8601
  std::vector<std::string> notes;   // size caps, cautions
};

// The snapshot record of the run (to_measurement of its parts).
Reading<BandwidthMeasurement> measurement_of(const BwReport& report);
// The table of figures with the bytes each one counts, the nominal comparison and the notes;
// the caller adds the G5 line.
std::string render_bw_text(const BwReport& report);
// {"bandwidth": the snapshot record, "host": the host figures (also inside the record when the
// device copy was measured: here in any case, so a machine without a GPU still shows them),
// "notes": [...]}.
nlohmann::json render_bw_json(const BwReport& report);

}  // namespace sparkdoc::bw
