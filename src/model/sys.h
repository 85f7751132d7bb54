// Readings of the operating system: what the sys probes produce and the snapshot records.
// Units are in the names. Every field a probe can fail to read is a Reading with its reason.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/reading.h"

namespace sparkdoc::sys {

// /proc/meminfo, converted from kB to bytes. HugePages_* are page counts.
struct MemInfo {
  uint64_t mem_total_bytes = 0;
  uint64_t mem_free_bytes = 0;
  uint64_t mem_available_bytes = 0;
  uint64_t buffers_bytes = 0;
  uint64_t cached_bytes = 0;
  uint64_t swap_cached_bytes = 0;
  uint64_t active_file_bytes = 0;
  uint64_t inactive_file_bytes = 0;
  uint64_t anon_pages_bytes = 0;
  uint64_t mapped_bytes = 0;
  uint64_t shmem_bytes = 0;
  uint64_t dirty_bytes = 0;
  uint64_t writeback_bytes = 0;
  uint64_t mlocked_bytes = 0;
  uint64_t swap_total_bytes = 0;
  uint64_t swap_free_bytes = 0;
  uint64_t hugepages_total = 0;
  uint64_t hugepages_free = 0;
  uint64_t hugepages_rsvd = 0;
  uint64_t hugepage_size_bytes = 0;
  // Kernel memory that /proc/meminfo itemises, for the accounting of what no process owns
  // (sparkdoc mem). Snapshots taken before these fields existed read them as 0.
  uint64_t slab_bytes = 0;
  uint64_t slab_reclaimable_bytes = 0;  // SReclaimable: part of Slab that drop_caches frees
  uint64_t kernel_stack_bytes = 0;
  uint64_t page_tables_bytes = 0;
  // CmaTotal and CmaFree: none when the kernel has no CMA (or the snapshot predates them).
  // Kernel 7.0.0-1019-nvidia reports CmaFree above CmaTotal: memory kexec handover reserved
  // and handed back as MIGRATE_CMA, which long-term pinning (RDMA registration) cannot use.
  std::optional<uint64_t> cma_total_bytes;
  std::optional<uint64_t> cma_free_bytes;
  bool operator==(const MemInfo&) const = default;
};

// /proc/sys/vm tunables that the seeds change for a model load (000 §6).
struct VmTunables {
  Reading<int64_t> min_free_kbytes;
  Reading<int64_t> vfs_cache_pressure;
  Reading<int64_t> swappiness;
  bool operator==(const VmTunables&) const = default;
};

// One line of /proc/pressure/memory ("some" or "full").
struct PsiLine {
  double avg10 = 0;
  double avg60 = 0;
  double avg300 = 0;
  uint64_t total_us = 0;
  bool operator==(const PsiLine&) const = default;
};
struct Psi {
  PsiLine some;
  std::optional<PsiLine> full;
  bool operator==(const Psi&) const = default;
};

// /proc/driver/nvidia/version: the kernel module's version line.
struct NvidiaKernelModule {
  std::string version;  // "580.95.05"
  std::string flavor;   // "open" for the open kernel module, "proprietary" otherwise
  std::string line;     // the NVRM line as read
  bool operator==(const NvidiaKernelModule&) const = default;
};

// Control groups of this process (and PID 1 when readable).
struct CgroupInfo {
  int version = 0;        // 1, 2, or 0 when unknown
  std::string self_path;  // v2 path of "0::<path>", or the v1 memory controller's path
  std::vector<std::string> self_lines;  // /proc/self/cgroup as read
  std::optional<std::string> pid1_path;
  std::optional<uint64_t>
      memory_limit_bytes;  // memory.max / memory.limit_in_bytes; none = unlimited
  bool operator==(const CgroupInfo&) const = default;
};

// Evidence of running inside a container. Each marker is recorded on its own; judging is G9's.
struct ContainerMarkers {
  bool dockerenv = false;                         // /.dockerenv
  bool containerenv = false;                      // /run/.containerenv (podman, CRI-O)
  bool singularity = false;                       // /.singularity.d
  bool mountinfo_docker = false;                  // /proc/self/mountinfo names /docker/containers/
  bool mountinfo_kubepods = false;                // ... or /kubepods
  bool mountinfo_overlay_root = false;            // "/" is an overlay mount
  std::optional<std::string> pid1_container_env;  // container= from /proc/1/environ
  bool operator==(const ContainerMarkers&) const = default;
};

// A resource limit; nullopt means unlimited.
struct Rlimit {
  std::optional<uint64_t> soft;
  std::optional<uint64_t> hard;
  bool operator==(const Rlimit&) const = default;
};

struct Limits {
  Reading<Rlimit> memlock_bytes;
  Reading<Rlimit> stack_bytes;
  Reading<uint64_t> shm_size_bytes;  // size of the /dev/shm filesystem
  bool operator==(const Limits&) const = default;
};

struct Host {
  Reading<std::string> cpu_arch;        // uname machine: "aarch64", "x86_64"
  Reading<std::string> kernel_release;  // uname release
  Reading<std::string> hostname;
  Reading<std::string> dmi_product;  // /sys/class/dmi/id/product_name (a label, never identity)
  Reading<unsigned> cpu_count;
  Reading<bool> is_root;  // effective uid 0
  bool operator==(const Host&) const = default;
};

// accelerate's cached default config (001: it can switch on FSDP/DeepSpeed by itself).
struct AccelerateConfig {
  std::string path;
  std::string distributed_type;  // "NO", "MULTI_GPU", "FSDP", "DEEPSPEED", ...
  std::optional<int64_t> num_processes;
  std::optional<int64_t> num_machines;
  bool has_fsdp_config = false;
  bool has_deepspeed_config = false;
  bool operator==(const AccelerateConfig&) const = default;
};

// A process that holds a /dev/nvidia* file open.
struct GpuHolder {
  int pid = 0;
  std::string comm;
  std::string cmdline;               // arguments joined by spaces, cut at 512 characters
  std::vector<std::string> devices;  // "/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"
  bool operator==(const GpuHolder&) const = default;
};

// A known GPU server found by its command line (G6; 000 §6 for gnome-remote-desktop).
struct KnownServer {
  int pid = 0;
  std::string
      kind;  // "vllm", "ollama", "llama-server", "sglang", "tritonserver", "gnome-remote-desktop"
  std::string cmdline;
  bool operator==(const KnownServer&) const = default;
};

struct ProcessScan {
  std::vector<GpuHolder> gpu_holders;
  std::vector<KnownServer> servers;
  unsigned processes_seen = 0;
  unsigned fd_dirs_unreadable = 0;  // other users' processes when not root
  bool operator==(const ProcessScan&) const = default;
};

// A line in a config file under the working directory that sets tensor parallelism (G10).
struct ParallelConfigHit {
  std::string file;  // relative to the scanned directory
  unsigned line = 0;
  std::string key;    // "tensor_parallel_size", "tp_size", ...
  std::string value;  // as written
  bool operator==(const ParallelConfigHit&) const = default;
};

struct ParallelConfigScan {
  std::string directory;
  unsigned files_scanned = 0;
  std::vector<ParallelConfigHit> hits;
  bool operator==(const ParallelConfigScan&) const = default;
};

// One active swap area, a line of /proc/swaps (sys/swaps.h reads it for `sparkdoc clean`).
struct SwapArea {
  std::string path;  // "/swap.img", "/dev/dm-1"; the kernel's \040-style escapes undone
  std::string type;  // "file" or "partition"
  uint64_t size_bytes = 0;
  uint64_t used_bytes = 0;
  int priority = 0;  // swapon(2) priority; negative when the kernel chose it
  bool operator==(const SwapArea&) const = default;
};

// ---- Readings for the F checks (what DGX Spark owners reported in 2025-2026). A snapshot
// taken before one of them existed holds it as "not recorded" (model/snapshot.h).

// One record of the kernel log (/dev/kmsg) that names the NVIDIA driver.
struct KernelLogLine {
  uint64_t usec = 0;  // microseconds since boot
  int level = 0;      // syslog level, 0 (emerg) to 7 (debug)
  std::string text;   // the message as the kernel escaped it, cut at 512 bytes
  bool operator==(const KernelLogLine&) const = default;
};

// The kernel log since boot, as far as the ring still holds it: only records naming the
// NVIDIA driver (NVRM, Xid, GSP, nvidia) are kept, the first 512 of them.
struct KernelLog {
  uint64_t records = 0;         // records read
  uint64_t nvidia_records = 0;  // of which name the NVIDIA driver (more than `lines` may hold)
  bool lost = false;            // the ring overwrote records while they were read
  std::vector<KernelLogLine> lines;
  bool operator==(const KernelLog&) const = default;
};

// How the kernel was booted: /proc/cmdline and the kexec crash reservation.
struct KernelBoot {
  std::string cmdline;                       // /proc/cmdline, trimmed
  Reading<uint64_t> kexec_crash_size_bytes;  // /sys/kernel/kexec_crash_size
  bool operator==(const KernelBoot&) const = default;
};

// Which operating system and machine: /etc/os-release, /etc/dgx-release (DGX OS), and the
// firmware's DMI strings. Labels to report and to pair versions with, never identity.
struct OsRelease {
  std::map<std::string, std::string> os_release;            // ID, VERSION_ID, PRETTY_NAME, ...
  Reading<std::map<std::string, std::string>> dgx_release;  // DGX_OTA_VERSION, DGX_OTA_DATE, ...
  std::map<std::string, std::string> dmi;  // sys_vendor, product_name, bios_version, ... as read
  bool operator==(const OsRelease&) const = default;
};

// One package dpkg lists as installed.
struct Package {
  std::string name;     // "nvidia-driver-580-open"
  std::string version;  // "580.95.05-0ubuntu1"
  std::string status;   // "install ok installed", "hold ok installed"
  bool operator==(const Package&) const = default;
};

// The installed packages that matter to the F checks (sys::is_watched_package: the driver,
// firmware and kernel modules, the kernel, container runtimes, fwupd, DKMS), from
// /var/lib/dpkg/status, never by running dpkg.
struct PackageList {
  std::vector<Package> packages;  // sorted by name
  uint64_t installed = 0;         // every installed package the file lists
  bool operator==(const PackageList&) const = default;
};

// What /etc/docker/daemon.json configures.
struct DockerDaemon {
  std::string path;                             // the file read
  std::optional<std::string> default_runtime;   // "default-runtime"
  std::map<std::string, std::string> runtimes;  // "runtimes": name -> path ("" when none)
  std::optional<bool> cdi;                      // "features": {"cdi": ...}
  std::vector<std::string> cdi_spec_dirs;       // "cdi-spec-dirs"
  bool operator==(const DockerDaemon&) const = default;
};

// Docker as installed: the daemon's configuration, whether it is the snap, and CDI specs.
struct DockerSetup {
  Reading<DockerDaemon> daemon;
  bool snap = false;                   // /snap/docker: Docker from the snap store
  bool docker_binary = false;          // /usr/bin/docker
  std::vector<std::string> cdi_specs;  // files in /etc/cdi and /var/run/cdi
  bool operator==(const DockerSetup&) const = default;
};

// A file in /dev/shm.
struct ShmFile {
  std::string name;  // "sem.mp-1a2b3c", "torch_1234_5678_0"
  uint64_t size_bytes = 0;
  uint32_t uid = 0;
  int64_t mtime_s = 0;  // seconds since the epoch
  bool operator==(const ShmFile&) const = default;
};

// /dev/shm: a tmpfs carved from the same memory as everything else, and the IPC files in it.
struct ShmScan {
  uint64_t size_bytes = 0;  // statvfs
  uint64_t used_bytes = 0;
  uint64_t files_total = 0;         // more than `files` may hold
  std::vector<ShmFile> files;       // the first 256 by name
  std::vector<uint32_t> live_uids;  // users that own a live process (/proc/<pid>), sorted
  bool operator==(const ShmScan&) const = default;
};

}  // namespace sparkdoc::sys
