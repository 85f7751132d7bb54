#include "compare/nodes.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "core/strings.h"
#include "facts/container.h"
#include "facts/network.h"
#include "facts/python.h"

namespace sparkdoc::compare {
namespace {

// What one node says for the rows of a family: (row name, value) pairs, or none when the
// reading the family reads was not recorded there.
using Values = std::vector<std::pair<std::string, std::string>>;
using Extract = std::optional<Values> (*)(const Snapshot&);
// The severity of a difference, from the distinct values recorded (sorted); for rows whose
// values say more than "they differ" (a driver branch, a link that is down).
using Judge = Severity (*)(const std::set<std::string>& distinct);

struct Family {
  Severity severity;
  std::string_view why;
  std::string_view unset;  // the value where a recorded node has no such row (no such port)
  Extract extract;
  Judge judge = nullptr;
};

Values one(std::string_view name, std::string value) {
  return Values{{std::string(name), std::move(value)}};
}

template <class T>
std::optional<std::string> text_of(const Reading<T>& reading) {
  if (!reading.ok()) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    return *reading;
  } else {
    return fmt::format("{}", *reading);
  }
}

const pyenv::PythonEnv* judged(const Snapshot& s) {
  if (!s.python.ok()) return nullptr;
  return facts::judged_env(*s.python);
}

// "580.95.05" -> "580": NVIDIA's driver branch.
std::string leading_field(std::string_view version) {
  return std::string(version.substr(0, version.find('.')));
}

Severity branch_judge(const std::set<std::string>& distinct) {
  std::set<std::string> branches;
  for (const auto& v : distinct) branches.insert(leading_field(v));
  return branches.size() > 1 ? Severity::kBreaks : Severity::kLook;
}

// ---- the GPU and its driver

std::optional<Values> driver(const Snapshot& s) {
  if (s.gpu.nvml.ok() && s.gpu.nvml->driver_version.ok()) {
    return one("driver", *s.gpu.nvml->driver_version);
  }
  if (s.nvidia_module.ok() && !s.nvidia_module->version.empty()) {
    return one("driver", s.nvidia_module->version);
  }
  return std::nullopt;
}

std::string cuda_text(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

std::optional<Values> cuda_driver(const Snapshot& s) {
  if (s.gpu.nvml.ok() && s.gpu.nvml->cuda_driver_version.ok()) {
    return one("CUDA (driver)", cuda_text(*s.gpu.nvml->cuda_driver_version));
  }
  if (s.gpu.cuda.ok() && s.gpu.cuda->driver_version.ok()) {
    return one("CUDA (driver)", cuda_text(*s.gpu.cuda->driver_version));
  }
  return std::nullopt;
}

std::optional<Values> gpu_model(const Snapshot& s) {
  if (!s.gpu.nvml.ok()) return std::nullopt;
  std::map<std::string, unsigned> count;
  for (const auto& d : s.gpu.nvml->devices) ++count[d.name.value_or("unnamed GPU")];
  if (count.empty()) return one("GPU", "none");
  std::vector<std::string> parts;
  for (const auto& [name, n] : count) parts.push_back(fmt::format("{} x {}", n, name));
  return one("GPU", join(parts, ", "));
}

// One value per device, joined: "3003 MHz"; none when no device recorded it.
template <class Field>
std::optional<Values> per_device(const Snapshot& s, std::string_view row, Field field,
                                 std::string_view unit) {
  if (!s.gpu.nvml.ok()) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& d : s.gpu.nvml->devices) {
    const Reading<unsigned>& r = field(d);
    if (r.ok()) parts.push_back(fmt::format("{} {}", *r, unit));
  }
  if (parts.empty()) return std::nullopt;
  return one(row, join(parts, ", "));
}

std::optional<Values> gpu_max_clock(const Snapshot& s) {
  return per_device(
      s, "GPU max clock",
      [](const gpu::Device& d) -> const Reading<unsigned>& { return d.max_sm_clock_mhz; }, "MHz");
}

std::optional<Values> gpu_power_limit(const Snapshot& s) {
  if (!s.gpu.nvml.ok()) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& d : s.gpu.nvml->devices) {
    if (d.power_limit_mw.ok()) parts.push_back(fmt::format("{} W", *d.power_limit_mw / 1000));
  }
  if (parts.empty()) return std::nullopt;
  return one("GPU power limit", join(parts, ", "));
}

// ---- the machine

std::optional<Values> kernel(const Snapshot& s) {
  auto v = text_of(s.host.kernel_release);
  if (!v) return std::nullopt;
  return one("kernel", *v);
}

std::optional<Values> dgx_os(const Snapshot& s) {
  if (!s.os_release.ok()) return std::nullopt;
  const auto& dgx = s.os_release->dgx_release;
  if (!dgx.ok()) return one("DGX OS", "not DGX OS");
  auto get = [&](const char* key) {
    auto it = dgx->find(key);
    return it == dgx->end() ? std::string() : it->second;
  };
  std::string build = get("DGX_SWBUILD_VERSION");
  std::string ota = get("DGX_OTA_VERSION");
  if (build.empty() && ota.empty()) return one("DGX OS", "unknown release");
  if (ota.empty()) return one("DGX OS", build);
  if (build.empty()) return one("DGX OS", ota);
  return one("DGX OS", fmt::format("{} ({})", build, ota));
}

std::optional<Values> os_name(const Snapshot& s) {
  if (!s.os_release.ok()) return std::nullopt;
  auto it = s.os_release->os_release.find("PRETTY_NAME");
  return one("OS", it == s.os_release->os_release.end() ? "unknown" : it->second);
}

std::optional<Values> cpu_arch(const Snapshot& s) {
  auto v = text_of(s.host.cpu_arch);
  if (!v) return std::nullopt;
  return one("CPU architecture", *v);
}

std::optional<Values> container_image(const Snapshot& s) {
  facts::Container c = facts::detect_container(s);
  if (c.ngc_image) return one("container image", *c.ngc_image);
  if (c.inside) return one("container image", fmt::format("a {} container", c.kind));
  return one("container image", "none (on the host)");
}

std::string mib(uint64_t bytes) {
  return fmt::format("{} MiB", bytes >> 20);
}

std::optional<Values> cma_total(const Snapshot& s) {
  if (!s.meminfo.ok() || !s.meminfo->cma_total_bytes) return std::nullopt;
  return one("CMA", mib(*s.meminfo->cma_total_bytes));
}

Severity cma_judge(const std::set<std::string>& distinct) {
  return distinct.contains("0 MiB") ? Severity::kBreaks : Severity::kLook;
}

std::optional<Values> memlock(const Snapshot& s) {
  if (!s.limits.memlock_bytes.ok()) return std::nullopt;
  const auto& soft = s.limits.memlock_bytes->soft;
  return one("memlock limit", soft ? mib(*soft) : "unlimited");
}

std::optional<Values> shm_size(const Snapshot& s) {
  if (!s.limits.shm_size_bytes.ok()) return std::nullopt;
  return one("/dev/shm size", mib(*s.limits.shm_size_bytes));
}

// ---- Python and its stack

std::optional<Values> python_version(const Snapshot& s) {
  if (!s.python.ok()) return std::nullopt;
  const pyenv::PythonEnv* env = judged(s);
  return one("Python", env ? env->python_version : "none");
}

std::optional<Values> torch(const Snapshot& s) {
  if (!s.python.ok()) return std::nullopt;
  const pyenv::PythonEnv* env = judged(s);
  auto v = env ? facts::torch_version(*env) : std::nullopt;
  return one("torch", v.value_or("not installed"));
}

std::optional<Values> torch_cuda(const Snapshot& s) {
  if (!s.python.ok()) return std::nullopt;
  const pyenv::PythonEnv* env = judged(s);
  if (!env || !env->torch.ok()) return one("CUDA (torch)", "no torch");
  return one("CUDA (torch)", env->torch->cuda.value_or("CPU build"));
}

bool is_nccl_wheel(std::string_view name) {
  return name.starts_with("nvidia-nccl");
}

std::optional<Values> nccl_wheel(const Snapshot& s) {
  if (!s.python.ok()) return std::nullopt;
  const pyenv::PythonEnv* env = judged(s);
  std::vector<std::string> versions;
  if (env) {
    for (const auto& [name, dist] : env->packages) {
      if (is_nccl_wheel(name)) versions.push_back(dist.version);
    }
  }
  return one("NCCL (torch's wheel)", versions.empty() ? "none" : join(versions, ", "));
}

std::optional<Values> packages(const Snapshot& s) {
  if (!s.python.ok()) return std::nullopt;
  Values out;
  if (const pyenv::PythonEnv* env = judged(s)) {
    for (const auto& [name, dist] : env->packages) {
      if (name == "torch" || is_nccl_wheel(name)) continue;
      out.emplace_back(name, dist.version);
    }
  }
  return out;
}

// ---- the launch environment

// Every rank must agree on these: the rendezvous and NCCL's choice of transport and protocol.
constexpr auto kMustAgreeNames = std::to_array<std::string_view>({
    "WORLD_SIZE",
    "NNODES",
    "GROUP_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "SLURM_NNODES",
    "SLURM_JOB_NUM_NODES",
    "NCCL_IB_DISABLE",
    "NCCL_NET",
    "NCCL_NET_PLUGIN",
    "NCCL_PROTO",
    "NCCL_ALGO",
});
// Different on every node by design, or only what is logged.
constexpr auto kPerNodeNames = std::to_array<std::string_view>({
    "RANK",
    "LOCAL_RANK",
    "NODE_RANK",
    "NCCL_DEBUG",
    "NCCL_DEBUG_SUBSYS",
    "NCCL_DEBUG_FILE",
});
// Names of this node's devices: they may rightly differ (interface names, cabling).
constexpr auto kDeviceNameVars = std::to_array<std::string_view>({
    "NCCL_IB_HCA",
    "NCCL_SOCKET_IFNAME",
    "NCCL_IB_GID_INDEX",
});

template <size_t N>
bool listed(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

enum class EnvKind { kMustAgree, kPerNode, kDeviceNames, kOther };

EnvKind env_kind(std::string_view name) {
  if (listed(kMustAgreeNames, name)) return EnvKind::kMustAgree;
  if (listed(kPerNodeNames, name)) return EnvKind::kPerNode;
  if (listed(kDeviceNameVars, name)) return EnvKind::kDeviceNames;
  return EnvKind::kOther;
}

template <EnvKind kind>
std::optional<Values> env_rows(const Snapshot& s) {
  Values out;
  for (const auto& [name, value] : s.env) {
    if (env_kind(name) == kind) out.emplace_back("env " + name, value);
  }
  return out;
}

// ---- the network, by role (PCI address)

const net::RdmaDevice* rdma_at(const net::NetReadings& net, std::string_view pci) {
  for (const auto& d : net.rdma) {
    if (d.pci_address == pci) return &d;
  }
  return nullptr;
}

template <class PerInterface>
std::optional<Values> per_port(const Snapshot& s, std::string_view row, PerInterface value) {
  if (!s.network.ok()) return std::nullopt;
  Values out;
  for (const auto& i : s.network->interfaces) {
    if (i.pci_address.empty()) continue;  // virtual: lo, bridges, docker0
    out.emplace_back(fmt::format("{} {}", row, i.pci_address), value(*s.network, i));
  }
  return out;
}

std::optional<Values> mtu(const Snapshot& s) {
  return per_port(s, "MTU", [](const net::NetReadings&, const net::Interface& i) {
    return i.mtu ? std::to_string(*i.mtu) : std::string("unknown");
  });
}

std::string gbps(double rate) {
  return fmt::format("{:g} Gb/s", rate);
}

std::optional<Values> link_rate(const Snapshot& s) {
  return per_port(s, "link rate", [](const net::NetReadings& net, const net::Interface& i) {
    // The RDMA port's rate is what RoCE trains at; the interface's speed is the fallback for
    // a NIC without RDMA.
    if (const net::RdmaDevice* d = rdma_at(net, i.pci_address); d && !d->ports.empty()) {
      const net::RdmaPort& p = d->ports.front();
      if (!facts::port_active(p)) return std::string("down");
      if (p.rate_gbps) return gbps(*p.rate_gbps);
    }
    if (i.operstate != "up") return std::string("down");
    if (i.speed_mbps && *i.speed_mbps > 0) return gbps(static_cast<double>(*i.speed_mbps) / 1000);
    return std::string("up, rate unknown");
  });
}

Severity link_judge(const std::set<std::string>& distinct) {
  return distinct.contains("down") ? Severity::kBreaks : Severity::kLook;
}

// RoCE v2 over IPv4 uses the GID whose address is IPv4-mapped (::ffff:a.b.c.d).
constexpr std::string_view kIpv4Mapped = "0000:0000:0000:0000:0000:ffff:";

std::optional<Values> gid_index(const Snapshot& s) {
  if (!s.network.ok()) return std::nullopt;
  Values out;
  for (const auto& d : s.network->rdma) {
    if (d.pci_address.empty() || d.ports.empty()) continue;
    std::string value = "none";
    for (const auto& g : d.ports.front().gids) {
      if (g.type.find("v2") != std::string::npos && g.gid.starts_with(kIpv4Mapped)) {
        value = std::to_string(g.index);
        break;
      }
    }
    out.emplace_back("RoCE v2 GID index " + d.pci_address, value);
  }
  return out;
}

std::optional<Values> firmware(const Snapshot& s) {
  if (!s.network.ok()) return std::nullopt;
  std::set<std::string> versions;
  for (const auto& d : s.network->rdma) {
    if (!d.fw_ver.empty()) versions.insert(d.fw_ver);
  }
  if (versions.empty()) return one("CX-7 firmware", "none");
  return one("CX-7 firmware", join({versions.begin(), versions.end()}, ", "));
}

std::optional<Values> hotplug(const Snapshot& s) {
  if (!s.network.ok()) return std::nullopt;
  return one("cx7 hot-plug flag", s.network->cx7_hotplug_flag ? "present" : "absent");
}

std::optional<Values> remove_ipc(const Snapshot& s) {
  if (!s.network.ok() || !s.network->logind.ok()) return std::nullopt;
  const auto& v = s.network->logind->remove_ipc;
  return one("RemoveIPC", !v ? "yes (default)" : *v ? "yes" : "no");
}

Severity remove_ipc_judge(const std::set<std::string>& distinct) {
  return distinct.contains("no") ? Severity::kBreaks : Severity::kHarmless;
}

std::optional<Values> nccl_conf(const Snapshot& s) {
  if (!s.network.ok()) return std::nullopt;
  const auto& conf = s.network->nccl_conf;
  if (!conf.ok()) {
    if (conf.missing().why == Why::kAbsent) return one("nccl.conf", "none");
    return std::nullopt;
  }
  std::vector<std::string> parts;
  for (const auto& [key, value] : conf->settings) parts.push_back(key + "=" + value);
  return one("nccl.conf", parts.empty() ? "no settings" : join(parts, " "));
}

std::optional<Values> system_nccl(const Snapshot& s) {
  if (!s.network.ok()) return std::nullopt;
  std::set<std::string> versions;
  for (const auto& n : s.network->system_nccl) versions.insert(n.version);
  if (versions.empty()) return one("NCCL (system)", "none");
  return one("NCCL (system)", join({versions.begin(), versions.end()}, ", "));
}

// Which halves of each QSFP port NCCL would use: "both halves (01:00.0)", or the one it was
// given, "rocep1s0f0 only (01:00.0)"; ports joined with " + ".
std::optional<Values> port_halves(const Snapshot& s) {
  if (!s.network.ok()) return std::nullopt;
  std::vector<facts::PortHalves> ports = facts::cx7_port_halves(*s.network);
  if (ports.empty()) return one("NCCL port halves", "no CX-7 port halves");
  facts::NcclIbDevices nccl = facts::nccl_ib_devices(s);
  auto used = [&](const std::string& device) {
    return std::find(nccl.devices.begin(), nccl.devices.end(), device) != nccl.devices.end();
  };
  std::vector<std::string> parts;
  for (const auto& port : ports) {
    std::vector<std::string> in;
    for (const auto& device : port.devices) {
      if (used(device)) in.push_back(device);
    }
    if (in.empty()) continue;
    parts.push_back(in.size() == port.devices.size()
                        ? fmt::format("both halves ({})", port.function)
                        : fmt::format("{} only ({})", join(in, ", "), port.function));
  }
  return one("NCCL port halves", parts.empty() ? "none of them" : join(parts, " + "));
}

// The table: the order the report lists rows in. The port halves row, which reads facts that
// combine the environment and the network, comes last.
const Family kFamilies[] = {
    {Severity::kBreaks,
     "one driver on every node: CUDA, NCCL and the CX-7 path are validated per release; "
     "another branch is another CUDA driver API (a break across branches)",
     "", driver, branch_judge},
    {Severity::kBreaks,
     "the newest CUDA each node's driver runs: what was built for a newer CUDA fails on the "
     "older node (G1); a break when the major version differs",
     "", cuda_driver, branch_judge},
    {Severity::kBreaks,
     "NCCL peers must run one version: its protocol changes between releases, and init fails or "
     "hangs (a dev build plateaus at 3 GB/s)",
     "", nccl_wheel},
    {Severity::kBreaks,
     "NCCL outside the wheels (an image's libnccl.so.2): peers must run one version", "",
     system_nccl},
    {Severity::kBreaks,
     "torch.distributed needs one torch on every rank: its store protocol, collectives and "
     "pickled objects change between releases",
     "", torch},
    {Severity::kLook, "torch built for another CUDA brings other CUDA libraries and NCCL", "",
     torch_cuda},
    {Severity::kLook,
     "another version on one node runs other model code or kernels: losses drift or shapes "
     "disagree between ranks",
     "not installed", packages},
    {Severity::kLook, "another Python on one node: pickled objects and wheels may not match", "",
     python_version},
    {Severity::kLook,
     "kernels differ in what RDMA registration and CMA allow (7.0.0-1019 has CmaTotal 0): one "
     "kernel across the job",
     "", kernel},
    {Severity::kLook,
     "a DGX OS release ships the driver, kernel and CX-7 firmware together: one release on every "
     "node",
     "", dgx_os},
    {Severity::kLook, "another operating system release on one node", "", os_name},
    {Severity::kLook, "another CPU architecture runs other wheels and images", "", cpu_arch},
    {Severity::kLook,
     "another image is another torch, NCCL and CUDA (the rows above say which); run one image", "",
     container_image},
    {Severity::kBreaks,
     "every rank must agree on this: the rendezvous, or NCCL's transport and protocol; another "
     "value on one node hangs the init or the first collective",
     "unset", env_rows<EnvKind::kMustAgree>},
    {Severity::kLook,
     "names this node's devices, which may rightly differ (interface names, cabling); the NCCL "
     "port halves row says whether each node gives NCCL both halves of its port",
     "unset", env_rows<EnvKind::kDeviceNames>},
    {Severity::kLook, "the job runs with another setting on one node", "unset",
     env_rows<EnvKind::kOther>},
    {Severity::kHarmless, "differs by design (the node's rank) or changes only what is logged",
     "unset", env_rows<EnvKind::kPerNode>},
    {Severity::kBreaks,
     "RoCE needs one MTU at both ends: 1500 on one twin gives 3 GB/s all-gathers or no "
     "connection; 9000 on both twins of both nodes",
     "no such port", mtu},
    {Severity::kLook,
     "a rail at a fraction of its rate paces every collective (a degraded CX-7 init runs at "
     "13 Gb/s); a rail down on one node is a break",
     "no such port", link_rate, link_judge},
    {Severity::kLook,
     "the RoCE v2 IPv4 GID sits at another index (3 on one node, 5 on another): a fixed "
     "NCCL_IB_GID_INDEX picks the wrong one; leave it unset",
     "no such device", gid_index},
    {Severity::kLook,
     "one CX-7 firmware across the job: a mismatch is a node that missed an update", "", firmware},
    {Severity::kBreaks,
     "/etc/nvidia/cx7-hotplug-enabled keeps the 200G link from training on its node "
     "(dgx-spark-mlnx-hotplug); move it aside and reboot",
     "", hotplug},
    {Severity::kBreaks,
     "with RemoveIPC=yes, closing the SSH session that started a worker deletes its semaphores: "
     "the worker dies, the others hang; RemoveIPC=no or lingering on every node",
     "", remove_ipc, remove_ipc_judge},
    {Severity::kBreaks,
     "NCCL reads it at init, after the environment: settings an image left behind make one "
     "node's NCCL differ from its peers'",
     "", nccl_conf},
    {Severity::kBreaks,
     "RDMA registers memory from CMA: CmaTotal 0 (kernel 7.0.0-1019) fails ibv_reg_mr with "
     "ENOMEM, a break",
     "", cma_total, cma_judge},
    {Severity::kLook, "RDMA pins its buffers: a small memlock limit fails registration there", "",
     memlock},
    {Severity::kLook,
     "NCCL and data-loader workers share memory through /dev/shm; a container's 64 MiB fails "
     "there first",
     "", shm_size},
    {Severity::kLook, "the slowest node paces every step: a capped clock on one node slows all", "",
     gpu_max_clock},
    {Severity::kLook, "a lower power limit on one node paces every step", "", gpu_power_limit},
    {Severity::kLook, "ranks on different GPUs run at different speeds and with other kernels", "",
     gpu_model},
    {Severity::kBreaks,
     "a GB10 QSFP port is two PCIe x4 halves (rocep1s0f0 and roceP2p1s0f0): NCCL_IB_HCA must name "
     "both, or that node runs at half rate and its peers wait on it",
     "", port_halves},
};

// Rank of importance, most first, for the weaker of two severities.
int rank(Severity s) {
  return static_cast<int>(s);
}

}  // namespace

std::string_view severity_key(Severity severity) {
  switch (severity) {
    case Severity::kBreaks:
      return "breaks";
    case Severity::kLook:
      return "look";
    case Severity::kHarmless:
      return "harmless";
  }
  return "look";
}

std::string_view row_state_key(RowState state) {
  switch (state) {
    case RowState::kSame:
      return "same";
    case RowState::kDiffers:
      return "differs";
    case RowState::kNotRecorded:
      return "not_recorded";
  }
  return "same";
}

Comparison compare_nodes(const std::vector<Node>& nodes) {
  Comparison out;
  for (const Node& n : nodes) out.nodes.push_back(n.name);
  const size_t count = nodes.size();
  for (const Family& family : kFamilies) {
    std::vector<std::optional<Values>> taken(count);
    std::map<std::string, std::vector<std::optional<std::string>>> rows;
    for (size_t i = 0; i < count; ++i) {
      taken[i] = family.extract(nodes[i].snapshot);
      if (!taken[i]) continue;
      for (auto& [name, value] : *taken[i]) {
        auto [it, fresh] = rows.try_emplace(name);
        if (fresh) it->second.resize(count);
        it->second[i] = std::move(value);
      }
    }
    for (auto& [name, values] : rows) {
      // A node that recorded the family but has no such row (a variable unset, a port it
      // does not have) says so in the family's words.
      for (size_t i = 0; i < count; ++i) {
        if (taken[i] && !values[i]) values[i] = std::string(family.unset);
      }
      Row row;
      row.reading = name;
      row.why = std::string(family.why);
      row.severity = family.severity;
      std::set<std::string> distinct;
      bool missing = false;
      for (const auto& v : values) {
        if (v) {
          distinct.insert(*v);
        } else {
          missing = true;
        }
      }
      if (distinct.size() > 1) {
        row.state = RowState::kDiffers;
        if (family.judge) row.severity = family.judge(distinct);
      } else if (missing) {
        row.state = RowState::kNotRecorded;
        if (rank(row.severity) < rank(Severity::kLook)) row.severity = Severity::kLook;
      }
      row.values = std::move(values);
      out.rows.push_back(std::move(row));
    }
  }
  return out;
}

bool breaks_job(const Row& row) {
  return row.state == RowState::kDiffers && row.severity == Severity::kBreaks;
}

bool breaks_job(const Comparison& comparison) {
  return std::any_of(comparison.rows.begin(), comparison.rows.end(),
                     [](const Row& r) { return breaks_job(r); });
}

bool shown_by_default(const Row& row) {
  if (row.state == RowState::kDiffers) return true;
  if (row.state != RowState::kNotRecorded) return false;
  return std::any_of(row.values.begin(), row.values.end(), [](const auto& v) { return v; });
}

}  // namespace sparkdoc::compare
