// Helpers shared by the check implementations. Internal to the checks library and pure like
// the checks themselves (no clock, no environment, no files). Facts that other components
// need too (platform, headroom, container, nodes, GPU users, Python environments) live in
// src/facts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "facts/platform.h"
#include "model/snapshot.h"

namespace sparkdoc::checks {

Finding make_finding(std::string_view id, Verdict verdict, std::string detail,
                     std::vector<std::string> details = {});

// The native-code audit, when the snapshot has one judged for this platform's GPU (or
// recorded without a target where no GPU was read); nullptr otherwise, with the reason in
// `why` when given.
const audit::NativeAudit* native_audit(const Snapshot& s, const facts::Platform& p,
                                       std::string* why = nullptr);
// An audited package by any spelling of its name; nullptr when it has no native code.
const audit::PackageAudit* audited_package(const audit::NativeAudit& a, std::string_view name);
// "flash_attn 2.7.4: <text>" for each note of `topic` at `severity` in packages other than
// the `except` ones (normalised names).
std::vector<std::string> audit_notes(const audit::NativeAudit& a, std::string_view topic,
                                     std::string_view severity,
                                     const std::vector<std::string_view>& except = {});

}  // namespace sparkdoc::checks
