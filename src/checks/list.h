// The checks, in the order reports list them: one line each. G1-G10 keep the seed's
// numbering; then the recipe checks S1.., then F1.. from owners' field reports of 2025-2026
// (shared reference field-2026), then N1.. for the network a multi-node job runs over
// (field-2026 §6). IDs and meanings are public and permanent: add a
// line, never renumber or reuse an ID. Each name is a file src/checks/NAME.cpp that defines
// `const CheckInfo& NAME()`: the check's ID, catalogue row and judgement.
//
// Included twice (registry.h declares the functions, registry.cpp builds the table), with
// SPARKDOC_CHECK defined by the includer.
SPARKDOC_CHECK(g1_cuda_abi)
SPARKDOC_CHECK(g2_flash_attn)
SPARKDOC_CHECK(g3_uma_headroom)
SPARKDOC_CHECK(g4_thermal_power)
SPARKDOC_CHECK(g5_bandwidth)
SPARKDOC_CHECK(g6_contention)
SPARKDOC_CHECK(g7_nvfp4)
SPARKDOC_CHECK(g8_playbooks)
SPARKDOC_CHECK(g9_container)
SPARKDOC_CHECK(g10_parallelism)
SPARKDOC_CHECK(s1_distributed_env)
SPARKDOC_CHECK(s2_accelerate_config)
SPARKDOC_CHECK(s3_alloc_conf)
SPARKDOC_CHECK(s4_tokenizers_parallelism)
SPARKDOC_CHECK(s5_container_limits)
SPARKDOC_CHECK(s6_vm_tunables)
SPARKDOC_CHECK(s7_remote_desktop)
SPARKDOC_CHECK(s8_transformers)
SPARKDOC_CHECK(s9_native_extensions)
SPARKDOC_CHECK(s10_orphaned_memory)
SPARKDOC_CHECK(f1_driver_pairing)
SPARKDOC_CHECK(f2_driver_errors)
SPARKDOC_CHECK(f3_kernel)
SPARKDOC_CHECK(f4_container_runtime)
SPARKDOC_CHECK(f5_swap)
SPARKDOC_CHECK(f6_dev_shm)
SPARKDOC_CHECK(f7_boot_memory)
SPARKDOC_CHECK(f8_capability_warning)
SPARKDOC_CHECK(n1_nccl_port_halves)
SPARKDOC_CHECK(n2_mtu)
SPARKDOC_CHECK(n3_link_rate)
SPARKDOC_CHECK(n4_remove_ipc)
SPARKDOC_CHECK(n5_nccl_conf)
SPARKDOC_CHECK(n6_cx7_hotplug)
