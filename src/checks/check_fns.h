// The check functions behind the table in table.cpp. Each is pure: it judges the snapshot and
// the planned workload on the classified platform, and nothing else.
#pragma once

#include "checks/finding.h"
#include "facts/platform.h"
#include "model/snapshot.h"

namespace sparkdoc::checks {

Finding check_g1_cuda_abi(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g2_flash_attn(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g3_uma_headroom(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g4_thermal_power(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g5_bandwidth(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g6_contention(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g7_nvfp4(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g8_playbooks(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g9_container(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_g10_parallelism(const Snapshot& s, const Workload& w, const facts::Platform& p);

Finding check_s1_distributed_env(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_s2_accelerate_config(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_s3_alloc_conf(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_s4_tokenizers_parallelism(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_s5_container_limits(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_s6_vm_tunables(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_s7_remote_desktop(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_s8_transformers(const Snapshot& s, const Workload& w, const facts::Platform& p);
Finding check_s9_native_extensions(const Snapshot& s, const Workload& w, const facts::Platform& p);

}  // namespace sparkdoc::checks
