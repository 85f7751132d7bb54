// `sparkdoc compare`: the readings that must agree across the nodes of one multi-node job,
// taken from each node's snapshot into named rows, each with how much a difference matters and
// why. Pure and deterministic: the same snapshots give the same rows in the same order.
//
// A row holds one value per node, as text, or none where the node's snapshot did not record the
// reading (a snapshot from an older sparkdoc, a probe that could not read it). A row is judged
// only on the values recorded: a reading missing on one node is shown as "not recorded" and is
// worth a look, never a difference that breaks a job.
//
// Network ports are matched by their role, the PCI address (the PCI function and the domain
// that is the port half on a GB10), never by interface name: one function is enp1s0f0np0 on
// one node and another name on the next (field-2026 §6).
//
// Row names and severity keys are public (`--json`): append only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/snapshot.h"

namespace sparkdoc::compare {

enum class Severity {
  kBreaks,    // the job fails, hangs or loses a rail when this differs: exit 1
  kLook,      // it runs, but slower or differently on one node
  kHarmless,  // differs by design (ranks) or only in what is reported
};
std::string_view severity_key(Severity severity);  // "breaks", "look", "harmless"

enum class RowState {
  kSame,         // every node recorded it, with one value
  kDiffers,      // two nodes recorded different values
  kNotRecorded,  // the nodes that recorded it agree; some did not record it
};
std::string_view row_state_key(RowState state);  // "same", "differs", "not_recorded"

struct Row {
  std::string reading;  // "driver", "MTU 0002:01:00.0", "env NCCL_IB_HCA"
  std::string why;      // one line: what a difference does to a job
  std::vector<std::optional<std::string>> values;  // one per node; none: not recorded
  RowState state = RowState::kSame;
  Severity severity = Severity::kHarmless;  // as judged on the recorded values
  bool operator==(const Row&) const = default;
};

struct Node {
  std::string name;
  Snapshot snapshot;
};

struct Comparison {
  std::vector<std::string> nodes;  // in the order given
  std::vector<Row> rows;           // every reading, the table's order (the port halves last)
  bool operator==(const Comparison&) const = default;
};

Comparison compare_nodes(const std::vector<Node>& nodes);

// Whether a row that differs would break the job.
bool breaks_job(const Row& row);
bool breaks_job(const Comparison& comparison);
// Rows that differ or are not recorded everywhere: what the report shows without --all.
bool shown_by_default(const Row& row);

}  // namespace sparkdoc::compare
