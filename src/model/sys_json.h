// JSON field lists of the sys readings. Key names are public (snapshot schema): append only.
#pragma once

#include "core/json.h"
#include "model/sys.h"

namespace sparkdoc::sys {

SPARKDOC_JSON(MemInfo, mem_total_bytes, mem_free_bytes, mem_available_bytes, buffers_bytes,
              cached_bytes, swap_cached_bytes, active_file_bytes, inactive_file_bytes,
              anon_pages_bytes, mapped_bytes, shmem_bytes, dirty_bytes, writeback_bytes,
              mlocked_bytes, swap_total_bytes, swap_free_bytes, hugepages_total, hugepages_free,
              hugepages_rsvd, hugepage_size_bytes, slab_bytes, slab_reclaimable_bytes,
              kernel_stack_bytes, page_tables_bytes, cma_total_bytes, cma_free_bytes)
SPARKDOC_JSON(VmTunables, min_free_kbytes, vfs_cache_pressure, swappiness)
SPARKDOC_JSON(PsiLine, avg10, avg60, avg300, total_us)
SPARKDOC_JSON(Psi, some, full)
SPARKDOC_JSON(NvidiaKernelModule, version, flavor, line)
SPARKDOC_JSON(CgroupInfo, version, self_path, self_lines, pid1_path, memory_limit_bytes)
SPARKDOC_JSON(ContainerMarkers, dockerenv, containerenv, singularity, mountinfo_docker,
              mountinfo_kubepods, mountinfo_overlay_root, pid1_container_env)
SPARKDOC_JSON(Rlimit, soft, hard)
SPARKDOC_JSON(Limits, memlock_bytes, stack_bytes, shm_size_bytes)
SPARKDOC_JSON(Host, cpu_arch, kernel_release, hostname, dmi_product, cpu_count, is_root)
SPARKDOC_JSON(AccelerateConfig, path, distributed_type, num_processes, num_machines,
              has_fsdp_config, has_deepspeed_config)
SPARKDOC_JSON(GpuHolder, pid, comm, cmdline, devices)
SPARKDOC_JSON(KnownServer, pid, kind, cmdline)
SPARKDOC_JSON(ProcessScan, gpu_holders, servers, processes_seen, fd_dirs_unreadable)
SPARKDOC_JSON(ParallelConfigHit, file, line, key, value)
SPARKDOC_JSON(ParallelConfigScan, directory, files_scanned, hits)
SPARKDOC_JSON(KernelLogLine, usec, level, text)
SPARKDOC_JSON(KernelLog, records, nvidia_records, lost, lines)
SPARKDOC_JSON(KernelBoot, cmdline, kexec_crash_size_bytes)
SPARKDOC_JSON(OsRelease, os_release, dgx_release, dmi)
SPARKDOC_JSON(Package, name, version, status)
SPARKDOC_JSON(PackageList, packages, installed)
SPARKDOC_JSON(DockerDaemon, path, default_runtime, runtimes, cdi, cdi_spec_dirs)
SPARKDOC_JSON(DockerSetup, daemon, snap, docker_binary, cdi_specs)
SPARKDOC_JSON(ShmFile, name, size_bytes, uid, mtime_s)
SPARKDOC_JSON(ShmScan, size_bytes, used_bytes, files_total, files, live_uids)

}  // namespace sparkdoc::sys
