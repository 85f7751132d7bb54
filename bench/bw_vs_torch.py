#!/usr/bin/env python3
"""`sparkdoc bw` against torch on the same GPU, in one run, same sizes and run counts.

sparkdoc runs first (its own process, which frees its buffers on exit), then torch measures
the same things in this process, then sparkdoc runs once more, so the spread between two
sparkdoc runs shows beside the difference to torch. Every figure is GB/s (1e9 bytes/s) at the
median time and at the best time of the timed runs after the warm-up, timed with CUDA events:
  device copy   y.copy_(x) and x.clone() of a uint8 tensor of SIZE bytes; read + write bytes
                counted (2 x SIZE per copy), as sparkdoc counts its cuMemcpyDtoDAsync
  pinned H2D    d.copy_(h, non_blocking=True) from a pin_memory tensor of SIZE bytes
  pinned D2H    h.copy_(d, non_blocking=True)
Usage (GPU machine, repository root):
    /opt/torch/.venv/bin/python bench/bw_vs_torch.py --sparkdoc build-release/src/cli/sparkdoc \
        --size-gib 2 --iterations 20 --json out.json
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time


def rate(times_ms, bytes_per_run):
    return {
        "median_gbps": bytes_per_run / (statistics.median(times_ms) * 1e-3) / 1e9,
        "best_gbps": bytes_per_run / (min(times_ms) * 1e-3) / 1e9,
        "bytes_per_run": bytes_per_run,
        "runs": len(times_ms),
        "times_ms": times_ms,
    }


def timed(torch, fn, warmup, runs):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(warmup + runs):
        start.record()
        fn()
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return times


def measure_torch(size, warmup, runs, device):
    import torch

    torch.cuda.set_device(device)
    out = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "device_name": torch.cuda.get_device_name(device)}
    x = torch.empty(size, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    x.fill_(0x5A)
    y.zero_()
    torch.cuda.synchronize()
    out["device_copy"] = rate(timed(torch, lambda: y.copy_(x), warmup, runs), 2 * size)

    def clone():
        z = x.clone()
        del z
    out["device_clone"] = rate(timed(torch, clone, warmup, runs), 2 * size)
    del y
    h = torch.empty(size, dtype=torch.uint8, pin_memory=True)
    h.fill_(0x3C)
    out["h2d"] = rate(timed(torch, lambda: x.copy_(h, non_blocking=True), warmup, runs), size)
    out["d2h"] = rate(timed(torch, lambda: h.copy_(x, non_blocking=True), warmup, runs), size)
    del x, h
    torch.cuda.empty_cache()
    return out


def run_sparkdoc(binary, size, warmup, runs, device):
    argv = [binary, "bw", "--json", "--device", str(device), "--size", str(size),
            "--iterations", str(runs), "--warmup", str(warmup)]
    t0 = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - t0
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        sys.exit(f"sparkdoc bw did not write JSON (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return {"argv": argv, "exit_status": proc.returncode, "wall_s": wall, "output": doc}


def fmt(r):
    if not r:
        return f"{'-':>10} {'-':>10}"
    return f"{r['median_gbps']:>10.1f} {r['best_gbps']:>10.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparkdoc", required=True)
    ap.add_argument("--size-gib", type=float, default=2.0)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    size = int(args.size_gib * (1 << 30))

    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.mem",
                          "--format=csv,noheader", "-i", str(args.device)],
                         capture_output=True, text=True).stdout.strip()
    results = {
        "machine": {"node": platform.node(), "machine": platform.machine(),
                    "kernel": platform.release(), "cpus": os.cpu_count(), "nvidia_smi": smi},
        "size_bytes": size, "iterations": args.iterations, "warmup": args.warmup,
        "sparkdoc_first": run_sparkdoc(args.sparkdoc, size, args.warmup, args.iterations, args.device),
        "torch": measure_torch(size, args.warmup, args.iterations, args.device),
        "sparkdoc_second": run_sparkdoc(args.sparkdoc, size, args.warmup, args.iterations, args.device),
    }

    def spark(run, key):
        b = run["output"].get("bandwidth", {})
        if key == "device_copy":
            if "device_copy_gbps" not in b:
                return None
            return {"median_gbps": b["device_copy_gbps"], "best_gbps": b["device_copy_best_gbps"]}
        r = b.get(key, {})
        return r if "median_gbps" in r else None

    t = results["torch"]
    print(f"machine: {smi}; {platform.machine()}, {os.cpu_count()} CPUs; torch {t['torch']} (CUDA {t['cuda']})")
    print(f"buffers of {size / (1 << 30):.1f} GiB, {args.iterations} timed runs after {args.warmup} "
          f"warm-up, CUDA events; GB/s at the median time and at the best time")
    print(f"{'':<28} {'sparkdoc 1st':>21} {'sparkdoc 2nd':>21} {'torch':>21}  {'1st/torch':>9}")
    print(f"{'':<28} {'median':>10} {'best':>10} {'median':>10} {'best':>10} {'median':>10} {'best':>10}  {'(median)':>9}")
    rows = [("device copy, read + write", "device_copy", t["device_copy"]),
            ("pinned H2D", "h2d", t["h2d"]), ("pinned D2H", "d2h", t["d2h"])]
    summary = {}
    for label, key, theirs in rows:
        a = spark(results["sparkdoc_first"], key)
        b = spark(results["sparkdoc_second"], key)
        ratio = a["median_gbps"] / theirs["median_gbps"] if a else float("nan")
        summary[key] = ratio
        print(f"{label:<28} {fmt(a)} {fmt(b)} {fmt(theirs)}  {ratio:>9.3f}")
    print(f"{'torch x.clone(), read + write':<28} {'':>21} {'':>21} {fmt(t['device_clone'])}")
    ok = abs(summary["device_copy"] - 1) <= 0.10
    print(f"device copy: sparkdoc is {100 * (summary['device_copy'] - 1):+.1f} % of torch's y.copy_(x) "
          f"(median): {'within' if ok else 'NOT within'} 10 %")
    print("sparkdoc G5:", results["sparkdoc_first"]["output"].get("g5", {}).get("detail", ""))
    host = results["sparkdoc_first"]["output"].get("host", {})
    if "read" in host:
        print(f"sparkdoc host memory, {host['threads']} threads{' pinned' if host['pinned'] else ''}: "
              f"read {host['read']['median_gbps']:.1f}, write {host['write']['median_gbps']:.1f}, "
              f"copy (read + write) {host['copy']['median_gbps']:.1f} GB/s (median)")
    results["within_10_percent"] = ok
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
