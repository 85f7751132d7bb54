#include "model/snapshot_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/json.h"
#include "model/gpu_json.h"
#include "model/native_json.h"
#include "model/net_json.h"
#include "model/pyenv_json.h"
#include "model/sys_json.h"

namespace sparkdoc {

SPARKDOC_JSON(TransferRate, best_gbps, median_gbps, bytes_per_run, runs)
SPARKDOC_JSON(HostBandwidth, threads, pinned, buffer_bytes, read, write, copy)
SPARKDOC_JSON(BandwidthMeasurement, device_copy_gbps, method, taken_at, device_copy_best_gbps,
              device_name, device_ordinal, buffer_bytes, nominal_gbps, nominal_source, h2d, d2h,
              host)
SPARKDOC_JSON(Snapshot, schema_version, sparkdoc_version, taken_at, host, meminfo, vm,
              memory_pressure, nvidia_module, cgroup, container, limits, env, accelerate_config,
              processes, parallel_configs, gpu, python, bandwidth, timings_ms, native_code,
              kernel_log, kernel_boot, os_release, packages, docker, shm, network)

nlohmann::json snapshot_to_json(const Snapshot& snapshot) {
  return snapshot;
}

Result<Snapshot> snapshot_from_json(const nlohmann::json& document) {
  if (!document.is_object()) return fail("a snapshot is a JSON object");
  auto version = document.find("schema_version");
  if (version == document.end() || !version->is_number_integer()) {
    return fail("not a sparkdoc snapshot: no integer schema_version");
  }
  // Compared as the 64-bit number written, so that 2^32 + 1 is not read as 1.
  int64_t v = version->is_number_unsigned()
                  ? static_cast<int64_t>(std::min<uint64_t>(version->get<uint64_t>(), INT64_MAX))
                  : version->get<int64_t>();
  if (v < 1 || v > kSnapshotSchemaVersion) {
    return fail(
        fmt::format("snapshot schema_version {} is not supported (this sparkdoc reads 1..{})", v,
                    kSnapshotSchemaVersion));
  }
  try {
    if (v == 1 && document.contains("native_code")) {
      // Schema 1 kept the audit's verdicts for one GPU, not the facts a judgement needs.
      const nlohmann::json& old = document["native_code"];
      bool absent = old.is_object() && old.contains("absent");
      nlohmann::json upgraded = document;
      upgraded["native_code"] =
          absent ? old
                 : nlohmann::json{{"absent", "absent"},
                                  {"detail",
                                   "recorded by an older sparkdoc (snapshot schema 1), whose audit "
                                   "kept verdicts for one GPU rather than facts; record the "
                                   "snapshot again to judge its native code"}};
      Snapshot snapshot = upgraded.get<Snapshot>();
      snapshot.schema_version = kSnapshotSchemaVersion;  // what it now holds, and writes
      return snapshot;
    }
    Snapshot snapshot = document.get<Snapshot>();
    snapshot.schema_version = kSnapshotSchemaVersion;
    return snapshot;
  } catch (const nlohmann::json::exception& e) {
    return fail(fmt::format("snapshot does not match the schema: {}", e.what()));
  } catch (const JsonRangeError& e) {
    return fail(fmt::format("snapshot does not match the schema: {}", e.what()));
  }
}

nlohmann::json bandwidth_to_json(const Reading<BandwidthMeasurement>& measurement) {
  return measurement;
}

nlohmann::json host_bandwidth_to_json(const Reading<HostBandwidth>& host) {
  return host;
}

std::string snapshot_to_text(const Snapshot& snapshot) {
  return snapshot_to_json(snapshot).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

Result<Snapshot> snapshot_from_text(std::string_view text) {
  nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return fail("snapshot is not valid JSON");
  return snapshot_from_json(document);
}

}  // namespace sparkdoc
