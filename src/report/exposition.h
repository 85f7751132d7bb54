// Prometheus text exposition (format 0.0.4) of the latest sample, as `--listen` serves it.
//
// GPU series carry dcgm-exporter's names and labels where DCGM has the field (DCGM_FI_DEV_*,
// labels gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION), so
// dashboards built for dcgm-exporter read them unchanged; values are in DCGM's units (W, C,
// MHz, %, MiB for FB_USED, ns for the *_VIOLATION counters). What DCGM has no field for, the
// unified-memory view above all, is sparkdoc_*, in base units (bytes, seconds). A value that
// could not be read is left out, never written as a sentinel (dcgm-exporter leaks
// 9223372036854775794 for NOT_SUPPORTED; GB10 has no FB_* and no MEM_CLOCK).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "model/runlog.h"

namespace sparkdoc::report {

// Events raised so far, by kind and severity.
using EventCounts = std::map<std::pair<std::string, runlog::EventSeverity>, uint64_t>;

// The whole exposition. `latest` is absent before the first sample.
std::string render_exposition(const runlog::LogHeader& header,
                              const std::optional<runlog::Sample>& latest,
                              const EventCounts& events, uint64_t samples_total);

// `sample` with the quantities the sampler reads only every few seconds (the clock-event
// counters, the energy counter) taken from `before` where this sample has none, GPU by GPU, so
// that a scrape between two readings still sees the counters, at their latest values.
runlog::Sample with_latest_counters(runlog::Sample sample,
                                    const std::optional<runlog::Sample>& before);

// A label value with \, " and newline escaped as the text format requires.
std::string escape_label_value(std::string_view value);

}  // namespace sparkdoc::report
