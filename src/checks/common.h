// Helpers shared by the check implementations. Internal to the checks library and pure like
// the checks themselves (no clock, no environment, no files). Facts that other components
// need too (platform, headroom, container, nodes, GPU users, Python environments) live in
// src/facts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "checks/native_code.h"
#include "facts/platform.h"
#include "model/snapshot.h"

namespace sparkdoc::checks {

Finding make_finding(std::string_view id, Verdict verdict, std::string detail,
                     std::vector<std::string> details = {});

// The native-code audit's facts judged for the target: --arch when the workload names one,
// else the platform's GPU (none read: GPU code listed, not judged). nullopt when the snapshot
// has no audit, with the reason in `why` when given.
// Whether `id` is among `only` (case-insensitively; an empty `only` wants every ID).
bool id_wanted(std::string_view id, const std::vector<std::string>& only);

std::optional<NativeVerdict> native_verdict(const Snapshot& s, const Workload& w,
                                            const facts::Platform& p, std::string* why = nullptr);
// An audited package by any spelling of its name; nullptr when it has no native code.
const PackageVerdict* audited_package(const NativeVerdict& v, std::string_view name);
// "flash_attn 2.7.4: <text>" for each note of `topic` at `severity` in packages other than
// the `except` ones (normalised names).
std::vector<std::string> audit_notes(const NativeVerdict& v, NoteTopic topic, Severity severity,
                                     const std::vector<std::string_view>& except = {});

// The network readings, or the SKIP finding of check `id` when the snapshot has none (the N
// checks).
const net::NetReadings* network_or_skip(const Snapshot& s, std::string_view id, Finding* skip);
// "enp1s0f0np0 (rocep1s0f0)": an RDMA device named by its interface when it has one.
std::string rdma_label(const net::RdmaDevice& device);
// An RDMA device or interface by name; nullptr when the snapshot has none of that name.
const net::RdmaDevice* find_rdma(const net::NetReadings& net, std::string_view name);
const net::Interface* find_interface(const net::NetReadings& net, std::string_view name);

// An installed package by exact name; nullptr when dpkg does not list it (F checks).
const sys::Package* find_package(const sys::PackageList& list, std::string_view name);
// The NVIDIA driver's version: the loaded kernel module's, else NVML's; nullopt when neither
// was read.
std::optional<std::string> driver_version(const Snapshot& s);
// "580.95.05-0ubuntu1" -> "580.95.05": a Debian version without its epoch and revision.
std::string upstream_version(std::string_view debian_version);

}  // namespace sparkdoc::checks
