// Snapshot <-> JSON. Reading a document checks schema_version and reports what is wrong
// with a bad one (never throws to the caller).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "core/result.h"
#include "model/snapshot.h"

namespace sparkdoc {

nlohmann::json snapshot_to_json(const Snapshot& snapshot);
Result<Snapshot> snapshot_from_json(const nlohmann::json& document);
// Pretty-printed, sorted keys, trailing newline: deterministic for golden files.
std::string snapshot_to_text(const Snapshot& snapshot);
Result<Snapshot> snapshot_from_text(std::string_view text);
// The snapshot's forms of a bandwidth measurement and of its host part (`sparkdoc bw --json`).
nlohmann::json bandwidth_to_json(const Reading<BandwidthMeasurement>& measurement);
nlohmann::json host_bandwidth_to_json(const Reading<HostBandwidth>& host);

}  // namespace sparkdoc
