#!/usr/bin/env python3
"""The fleet of bench/compare_fleet.sh, and the competitor it is timed against.

  compare_fleet.py generate NODE.json OUT   writes OUT/fleet/node0001.json ... node1000.json and
                                            OUT/fleet.pdsh (the same documents as pdsh prints
                                            them, every line labelled "nodeNNNN: ")
  compare_fleet.py diff DIR                 loads every DIR/*.json with the json module and
                                            prints each reading that differs between the nodes,
                                            with its values grouped: what `sparkdoc compare`
                                            does, written the way a script would do it
"""
import collections
import copy
import json
import os
import sys

NODES = 1000


def generate(base_path, out):
    with open(base_path) as f:
        base = json.load(f)
    pdsh = []
    for n in range(1, NODES + 1):
        name = "node%04d" % n
        s = copy.deepcopy(base)
        s["host"]["hostname"] = name
        if n >= 999:
            s["gpu"]["nvml"]["driver_version"] = "580.82.09"
        if n == 500:
            for i in s["network"]["interfaces"]:
                if i["pci_address"] == "0002:01:00.0":
                    i["mtu"] = 1500
        if n == 250:
            s["env"]["NCCL_IB_HCA"] = "rocep1s0f0"
        if n == 750:
            s["python"][0]["packages"]["nvidia-nccl-cu13"]["version"] = "2.27.7"
        if n == 100:
            s["network"]["logind"]["remove_ipc"] = None
        if n == 333:
            s["network"]["cx7_hotplug_flag"] = True
        text = json.dumps(s, indent=2, sort_keys=True) + "\n"
        with open(os.path.join(out, "fleet", name + ".json"), "w") as f:
            f.write(text)
        pdsh.extend("%s: %s\n" % (name, line) for line in text.splitlines())
    with open(os.path.join(out, "fleet.pdsh"), "w") as f:
        f.writelines(pdsh)


def readings(s):
    """The readings sparkdoc compare rows hold, by name."""
    r = {}
    nvml = s.get("gpu", {}).get("nvml", {})
    r["driver"] = nvml.get("driver_version")
    cuda = nvml.get("cuda_driver_version")
    r["CUDA (driver)"] = "%d.%d" % (cuda // 1000, cuda % 1000 // 10) if isinstance(cuda, int) else None
    devices = nvml.get("devices", [])
    r["GPU max clock"] = ", ".join(str(d.get("max_sm_clock_mhz")) for d in devices)
    r["kernel"] = s.get("host", {}).get("kernel_release")
    r["CPU architecture"] = s.get("host", {}).get("cpu_arch")
    envs = s.get("python") or []
    env = envs[0] if isinstance(envs, list) and envs else {}
    for name, dist in sorted(env.get("packages", {}).items()):
        r[name] = dist.get("version")
    for name, value in s.get("env", {}).items():
        r["env " + name] = value
    net = s.get("network") or {}
    rdma = {d["pci_address"]: d for d in net.get("rdma", [])}
    for i in net.get("interfaces", []):
        pci = i.get("pci_address")
        if not pci:
            continue
        r["MTU " + pci] = i.get("mtu")
        d = rdma.get(pci)
        if d and d["ports"]:
            p = d["ports"][0]
            r["link rate " + pci] = p["rate_gbps"] if "ACTIVE" in p["state"] else "down"
        else:
            r["link rate " + pci] = i.get("speed_mbps")
    for pci, d in rdma.items():
        gid = "none"
        for g in d["ports"][0]["gids"] if d["ports"] else []:
            if "v2" in g["type"] and g["gid"].startswith("0000:0000:0000:0000:0000:ffff:"):
                gid = g["index"]
                break
        r["RoCE v2 GID index " + pci] = gid
    r["CX-7 firmware"] = ", ".join(sorted({d["fw_ver"] for d in rdma.values()}))
    r["cx7 hot-plug flag"] = net.get("cx7_hotplug_flag")
    logind = net.get("logind") or {}
    r["RemoveIPC"] = logind.get("remove_ipc")
    r["nccl.conf"] = json.dumps(net.get("nccl_conf"), sort_keys=True)
    mem = s.get("meminfo") or {}
    r["CMA"] = mem.get("cma_total_bytes")
    return r


def diff(folder):
    nodes = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                s = json.load(f)
            nodes[s.get("host", {}).get("hostname") or name] = readings(s)
    keys = []
    for r in nodes.values():
        for k in r:
            if k not in keys:
                keys.append(k)
    for k in keys:
        groups = collections.defaultdict(list)
        for node, r in nodes.items():
            groups[json.dumps(r.get(k, "unset"))].append(node)
        if len(groups) < 2:
            continue
        ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
        text = "; ".join("%s: %s" % (v, ", ".join(n) if len(n) <= 3 else "%d nodes (%s...)" % (len(n), n[0]))
                         for v, n in ordered)
        print("differs %s\n  %s" % (k, text))
    print("%d nodes" % len(nodes))


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(sys.argv[2], sys.argv[3])
    else:
        diff(sys.argv[2])
