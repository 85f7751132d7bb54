#!/usr/bin/env python3
"""sparkdoc load against safetensors, in one run on one GPU machine.

Creates the checkpoints it measures (an 8 GB shard of 64 bf16 tensors, on tmpfs and on disk;
a multi-shard model of a real architecture for transformers), then measures, each loader in a
process of its own so that peak RSS is its own:
  1. pinned host-to-device copy rate (the ceiling for any loader),
  2. from tmpfs (/dev/shm): sparkdoc CLI (a sweep of readers x chunk size), sparkdoc Python
     load_file, safetensors load_file(device="cuda:0"); bitwise comparison of the two,
  3. cold from disk (after sync; echo 3 > drop_caches): dd with O_DIRECT, dd buffered, sparkdoc
     CLI, sparkdoc Python, safetensors; page-cache growth and peak RSS growth of each,
  4. transformers from_pretrained plain and with sparkdoc.patch_transformers, cold, with the
     state_dicts compared.
Prints a table last; writes results.json under --out.

Usage (root, for drop_caches):
  python3 bench/load_vs_safetensors.py --sparkdoc BIN --out DIR [--size-gb 8] [--disk-dir D]
The sparkdoc Python package and libsparkdoc.so are found through PYTHONPATH/SPARKDOC_LIBRARY.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve()


# ---- measurements shared by the workers --------------------------------------------------

def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            out[key] = int(value.split()[0]) * 1024
    return out


def page_cache_bytes():
    m = meminfo()
    return m["Cached"] + m.get("Buffers", 0) - m.get("Shmem", 0)


def reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


class Watch:
    """RSS before, peak RSS (VmHWM after a reset) and page cache before/after/peak (10 ms)."""

    def __init__(self):
        import threading

        self.exact = reset_peak_rss()
        self.rss_before = status_bytes("VmRSS")
        self.cache_before = page_cache_bytes()
        self.cache_peak = self.cache_before
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._stop.wait(0.01):
            self.cache_peak = max(self.cache_peak, page_cache_bytes())

    def stop(self):
        self._stop.set()
        self._thread.join()
        after = page_cache_bytes()
        return {
            "rss_before_bytes": self.rss_before,
            "peak_rss_growth_bytes": status_bytes("VmHWM") - self.rss_before,
            "peak_rss_exact": self.exact,
            "page_cache_growth_bytes": after - self.cache_before,
            "page_cache_peak_growth_bytes": max(self.cache_peak, after) - self.cache_before,
        }


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


# ---- workers: one loader, one process ------------------------------------------------------

def worker(args):
    import torch

    torch.cuda.init()
    torch.zeros(1, device="cuda:0")
    result = {"loader": args.worker, "path": args.path, "runs": []}
    if args.worker == "pinned":
        n = 2 << 30
        src = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        dst = torch.empty(n, dtype=torch.uint8, device="cuda:0")
        for _ in range(4):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dst.copy_(src, non_blocking=True)
            end.record()
            end.synchronize()
            result["runs"].append({"seconds": start.elapsed_time(end) / 1e3, "bytes": n})
        return result
    if args.worker == "sparkdoc":
        import sparkdoc

        if args.config:
            readers, chunk_mib, slots = (int(x) for x in args.config.split(","))
            sparkdoc.configure(reader_threads=readers, chunk_bytes=chunk_mib << 20,
                               slots_per_reader=slots)
        if args.warm:  # the loader's one-time set-up (context, staging) out of the timing
            sparkdoc.load_file(args.warm, "cuda:0")
    if args.worker == "safetensors":
        import safetensors.torch as st

        if args.warm:
            st.load_file(args.warm, device="cuda:0")
    torch.cuda.synchronize()
    for _ in range(args.runs):
        if args.cold:
            drop_caches()
        watch = Watch()
        start = time.perf_counter()
        if args.worker == "sparkdoc":
            tensors, stats = sparkdoc.load_file(args.path, "cuda:0", stats=True)
        else:
            tensors = st.load_file(args.path, device="cuda:0")
            stats = None
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        run = {"seconds": seconds, "bytes": sum(t.numel() * t.element_size() for t in tensors.values())}
        run.update(watch.stop())
        if stats:
            run["sparkdoc_stats"] = stats
        result["runs"].append(run)
        del tensors
    return result


def compare_worker(args):
    """Bitwise comparison of sparkdoc.load_file and safetensors.load_file on one checkpoint."""
    import torch
    import safetensors.torch as st
    import sparkdoc

    paths = args.path.split(",")
    want = {}
    for p in paths:
        want.update(st.load_file(p, device="cuda:0"))
    got = {}
    for p in paths:
        got.update(sparkdoc.load_file(p, "cuda:0"))
    differ = [k for k in want if k not in got or got[k].dtype != want[k].dtype
              or got[k].shape != want[k].shape
              or not torch.equal(got[k].reshape(-1).view(torch.uint8), want[k].reshape(-1).view(torch.uint8))]
    return {"tensors": len(want), "differ": differ,
            "bytes": sum(t.numel() * t.element_size() for t in want.values())}


def hf_worker(args):
    """from_pretrained cold, plain or patched; times it and digests the state_dict."""
    import hashlib
    import torch
    from transformers import AutoModelForCausalLM

    torch.zeros(1, device="cuda:0")
    patch = None
    if args.worker == "hf-patched":
        import sparkdoc

        patch = sparkdoc.patch_transformers(device="cuda:0")
    drop_caches()
    watch = Watch()
    start = time.perf_counter()
    if patch is None:
        model = AutoModelForCausalLM.from_pretrained(args.path, device_map={"": 0}, dtype=torch.bfloat16)
    else:
        model = AutoModelForCausalLM.from_pretrained(args.path, dtype=torch.bfloat16)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    run = {"seconds": seconds}
    run.update(watch.stop())
    if patch is not None:
        run["patch"] = patch.stats
        run["patch"].pop("files", None)
        patch.undo()
    digest = hashlib.sha256()
    nbytes = 0
    for name, t in sorted(model.state_dict().items()):
        b = t.detach().reshape(-1).view(torch.uint8).cpu().numpy().tobytes()
        nbytes += len(b)
        digest.update(name.encode())
        digest.update(str(t.dtype).encode())
        digest.update(str(t.device).encode())
        digest.update(b)
    run.update({"sha256": digest.hexdigest(), "bytes": nbytes})
    return {"loader": args.worker, "runs": [run]}


# ---- the driver ---------------------------------------------------------------------------

class Results:
    def __init__(self, out: Path):
        self.out = out
        self.data = {"steps": {}, "errors": {}}
        self.skip = set()

    def save(self):
        (self.out / "results.json").write_text(json.dumps(self.data, indent=2, default=str))

    def step(self, name, fn):
        if name in self.skip:
            return None
        start = time.perf_counter()
        print(f"== {name}", flush=True)
        try:
            value = fn()
            self.data["steps"][name] = value
            print(f"   {json.dumps(value, default=str)[:600]}", flush=True)
        except Exception as e:
            self.data["errors"][name] = f"{e}\n{traceback.format_exc()}"
            print(f"   FAILED: {e}", flush=True)
            value = None
        print(f"   ({time.perf_counter() - start:.1f} s)", flush=True)
        self.save()
        return value


def run_worker(kind, path, runs=1, warm=None, cold=False, config=None, timeout=600):
    cmd = [sys.executable, str(HERE), "--worker", kind, "--path", str(path), "--runs", str(runs)]
    if config:
        cmd += ["--config", config]
    if warm:
        cmd += ["--warm", str(warm)]
    if cold:
        cmd += ["--cold"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} worker failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def sparkdoc_cli(binary, path, *extra, timeout=300):
    cmd = [binary, "load", str(path), "--json", *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: rc {done.returncode}: {done.stderr[-2000:]} {done.stdout[-2000:]}")
    return json.loads(done.stdout)


def dd_rate(path, direct):
    cmd = ["dd", f"if={path}", "of=/dev/null", "bs=16M"] + (["iflag=direct"] if direct else [])
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    size = os.path.getsize(path)
    m = re.search(r"copied, ([0-9.]+) s", done.stderr)
    dd_seconds = float(m.group(1)) if m else seconds
    return {"gb_per_s": size / dd_seconds / 1e9, "seconds": dd_seconds, "bytes": size, "stderr": done.stderr.strip()[-200:]}


def make_shard(path: Path, size_gb: float):
    """64 bf16 tensors of random data (8 GB at --size-gb 8.6), plus a few small ones."""
    import torch
    import safetensors.torch as st

    count = 64
    side = int(((size_gb * 1e9) / count / 2) ** 0.5) // 64 * 64
    tensors = {}
    g = torch.Generator(device="cuda:0").manual_seed(1)
    for i in range(count):
        tensors[f"layers.{i}.weight"] = torch.randn(side, side, device="cuda:0", generator=g,
                                                    dtype=torch.bfloat16).cpu()
    tensors["norm.weight"] = torch.randn(side, device="cuda:0", generator=g).cpu()
    tensors["position"] = torch.arange(4097, dtype=torch.int64)
    st.save_file(tensors, str(path), metadata={"format": "pt"})
    return {"path": str(path), "bytes": path.stat().st_size, "tensors": len(tensors), "side": side}


def make_model(folder: Path):
    """A Llama of about 1.1 B parameters, random, bf16, saved in 500 MB shards."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632,
                         num_hidden_layers=16, num_attention_heads=16, num_key_value_heads=4,
                         tie_word_embeddings=False)
    torch.manual_seed(0)
    with torch.device("cuda:0"):
        model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(str(folder), max_shard_size="500MB")
    del model
    torch.cuda.empty_cache()
    files = sorted(folder.glob("*.safetensors"))
    return {"shards": len(files), "bytes": sum(f.stat().st_size for f in files)}


def best(result):
    runs = result["runs"]
    return min(runs, key=lambda r: r["seconds"])


def gbps(run):
    return run["bytes"] / run["seconds"] / 1e9


def mib(n):
    return f"{n / 2**20:+.0f} MiB" if n is not None else "n/a"


def table(r):
    s = r.data["steps"]
    rows = []

    def add(what, loader, run, note=""):
        if run is None:
            return
        rows.append(f"| {what} | {loader} | {run.get('seconds', 0):.3f} | {gbps(run):.1f} | "
                    f"{mib(run.get('peak_rss_growth_bytes'))} | {mib(run.get('page_cache_growth_bytes'))} | {note} |")

    if s.get("pinned"):
        add("pinned H2D 2 GiB", "torch copy_", best(s["pinned"]))
    if s.get("shm_cli_best"):
        c = s["shm_cli_best"]
        run = c["runs"][max(range(len(c["runs"])), key=lambda i: c["runs"][i]["gb_per_s"])]
        add("tmpfs 8 GB shard", "sparkdoc load (CLI)", run, c["config"])
    if s.get("shm_sparkdoc_py"):
        add("tmpfs 8 GB shard", "sparkdoc.load_file", best(s["shm_sparkdoc_py"]), "defaults")
    if s.get("shm_sparkdoc_py_best"):
        add("tmpfs 8 GB shard", "sparkdoc.load_file", best(s["shm_sparkdoc_py_best"]),
            f"configure({r.data.get('best_config')})")
    if s.get("shm_cli_default"):
        c = s["shm_cli_default"]
        run = c["runs"][max(range(len(c["runs"])), key=lambda i: c["runs"][i]["gb_per_s"])]
        add("tmpfs 8 GB shard", "sparkdoc load (CLI)", run,
            "defaults; verify " + ("ok" if c.get("verify", {}).get("differ") == [] else "FAILED"))
    if s.get("shm_safetensors"):
        add("tmpfs 8 GB shard", "safetensors load_file(cuda)", best(s["shm_safetensors"]))
    if s.get("disk_dd_direct"):
        d = s["disk_dd_direct"]
        rows.append(f"| disk cold | dd iflag=direct bs=16M | {d['seconds']:.3f} | {d['gb_per_s']:.2f} | | | |")
    if s.get("disk_dd_buffered"):
        d = s["disk_dd_buffered"]
        rows.append(f"| disk cold | dd buffered bs=16M | {d['seconds']:.3f} | {d['gb_per_s']:.2f} | | | |")
    if s.get("disk_cli"):
        c = s["disk_cli"]["runs"][0]
        add("disk cold", "sparkdoc load (CLI)", c, s["disk_cli"]["files"][0]["mode"])
    if s.get("disk_sparkdoc_py"):
        add("disk cold", "sparkdoc.load_file", best(s["disk_sparkdoc_py"]))
    if s.get("disk_safetensors"):
        add("disk cold", "safetensors load_file(cuda)", best(s["disk_safetensors"]))
    if s.get("hf_plain"):
        add("from_pretrained cold", "transformers", best(s["hf_plain"]))
    if s.get("hf_patched"):
        same = s["hf_plain"] and best(s["hf_plain"])["sha256"] == best(s["hf_patched"])["sha256"]
        add("from_pretrained cold", "transformers + patch_transformers", best(s["hf_patched"]),
            "state_dict identical" if same else "STATE_DICT DIFFERS")
    print("\n| what | loader | s | GB/s | peak RSS growth | page cache growth | note |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if s.get("shm_compare"):
        c = s["shm_compare"]
        print(f"\nbitwise: {c['tensors']} tensors, {c['bytes'] / 1e9:.2f} GB, differ: {c['differ']}")
    if s.get("shm_cli_sweep"):
        print("\nsweep (tmpfs, CLI, best of 3): " + "; ".join(
            f"{k}: {v:.1f}" for k, v in s["shm_cli_sweep"].items()))
    for k, v in r.data["errors"].items():
        print(f"\nERROR {k}: {v.splitlines()[0]}")


def driver(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    r = Results(out)
    r.skip = set(args.skip)
    shm = Path(args.shm_dir)
    disk = Path(args.disk_dir)
    disk.mkdir(parents=True, exist_ok=True)

    def environment():
        import torch, safetensors, transformers  # noqa: E401

        info = {"torch": torch.__version__, "safetensors": safetensors.__version__,
                "transformers": transformers.__version__, "gpu": torch.cuda.get_device_name(0),
                "cpus": os.cpu_count(), "kernel": os.uname().release,
                "shm_free_gb": shutil.disk_usage(shm).free / 1e9,
                "disk_free_gb": shutil.disk_usage(disk).free / 1e9,
                "mem_total_gb": meminfo()["MemTotal"] / 1e9}
        for p in (shm, disk):
            info[f"fs {p}"] = subprocess.run(["stat", "-f", "-c", "%T", str(p)], capture_output=True,
                                             text=True).stdout.strip()
        return info

    r.data["environment"] = r.step("environment", environment)
    need = args.size_gb * 1e9 * 1.1 + 1e9
    if shutil.disk_usage(shm).free < need and os.geteuid() == 0:
        # Containers often give /dev/shm 64 MB; tmpfs takes its size at remount time.
        subprocess.run(["mount", "-o", f"remount,size={int(need * 1.5 / 2**30) + 1}G", str(shm)],
                       check=False)
    shard = shm / "sparkdoc-bench-shard.safetensors"
    small = shm / "sparkdoc-bench-warm.safetensors"

    def make_files():
        import torch
        import safetensors.torch as st

        st.save_file({"w": torch.zeros(1024, 1024)}, str(small))
        return make_shard(shard, args.size_gb)

    r.step("make_shard", make_files)
    r.step("pinned", lambda: run_worker("pinned", "-"))

    sweep = {}

    best_config = {"value": None}

    def cli_sweep():
        best_run = None
        for readers in args.readers:
            for chunk in args.chunks:
                for slots in args.slots:
                    res = sparkdoc_cli(args.sparkdoc, shard, "--bench", "--repeat", "3",
                                       "--readers", str(readers), "--chunk-mib", str(chunk),
                                       "--slots", str(slots))
                    key = f"{readers} readers x {slots} slots x {chunk} MiB"
                    sweep[key] = res["best_gb_per_s"]
                    if best_run is None or res["best_gb_per_s"] > best_run["best_gb_per_s"]:
                        best_run = res
                        best_run["config"] = key
                        best_config["value"] = f"{readers},{chunk},{slots}"
        r.data["steps"]["shm_cli_sweep"] = sweep
        r.data["best_config"] = best_config["value"]
        return best_run

    r.step("shm_cli_best", cli_sweep)
    r.step("shm_cli_default", lambda: sparkdoc_cli(args.sparkdoc, shard, "--bench", "--repeat", "3", "--verify"))
    r.step("shm_sparkdoc_py", lambda: run_worker("sparkdoc", shard, runs=3, warm=small))
    r.step("shm_sparkdoc_py_best", lambda: run_worker("sparkdoc", shard, runs=3, warm=small,
                                                      config=best_config["value"]))
    r.step("shm_safetensors", lambda: run_worker("safetensors", shard, runs=args.safetensors_runs, warm=small))
    r.step("shm_compare", lambda: run_worker_compare(shard))

    disk_shard = disk / "sparkdoc-bench-shard.safetensors"

    def copy_to_disk():
        shutil.copyfile(shard, disk_shard)
        os.sync()
        return {"path": str(disk_shard), "bytes": disk_shard.stat().st_size}

    r.step("copy_to_disk", copy_to_disk)

    def cold(fn):
        def go():
            drop_caches()
            return fn()
        return go

    r.step("disk_dd_direct", cold(lambda: dd_rate(disk_shard, True)))
    r.step("disk_cli", cold(lambda: sparkdoc_cli(args.sparkdoc, disk_shard)))
    r.step("disk_sparkdoc_py", lambda: run_worker("sparkdoc", disk_shard, runs=1, warm=small, cold=True))
    r.step("disk_safetensors", lambda: run_worker("safetensors", disk_shard, runs=1, warm=small, cold=True))
    r.step("disk_dd_buffered", cold(lambda: dd_rate(disk_shard, False)))
    r.step("disk_dd_direct_again", cold(lambda: dd_rate(disk_shard, True)))
    os.remove(disk_shard)

    if not args.skip_transformers:
        model_dir = disk / "sparkdoc-bench-llama"
        r.step("make_model", lambda: make_model(model_dir))
        r.step("hf_plain", lambda: run_hf("hf-plain", model_dir))
        r.step("hf_patched", lambda: run_hf("hf-patched", model_dir))
        shutil.rmtree(model_dir, ignore_errors=True)
    for p in (shard, small):
        p.unlink(missing_ok=True)
    r.save()
    table(r)


def run_worker_compare(path):
    cmd = [sys.executable, str(HERE), "--worker", "compare", "--path", str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_hf(kind, path):
    cmd = [sys.executable, str(HERE), "--worker", kind, "--path", str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sparkdoc", help="the sparkdoc binary")
    p.add_argument("--out", default="bench-out")
    p.add_argument("--size-gb", type=float, default=8.6)
    p.add_argument("--shm-dir", default="/dev/shm")
    p.add_argument("--disk-dir", default=str(Path.cwd() / "sparkdoc-bench"))
    p.add_argument("--readers", type=int, nargs="+", default=[4, 8, 12, 16])
    p.add_argument("--chunks", type=int, nargs="+", default=[4, 8, 16])
    p.add_argument("--slots", type=int, nargs="+", default=[2])
    p.add_argument("--safetensors-runs", type=int, default=2)
    p.add_argument("--skip", nargs="*", default=[], help="step names to leave out")
    p.add_argument("--skip-transformers", action="store_true")
    p.add_argument("--config", help=argparse.SUPPRESS)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--path", help=argparse.SUPPRESS)
    p.add_argument("--runs", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--warm", help=argparse.SUPPRESS)
    p.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        if args.worker == "compare":
            result = compare_worker(args)
        elif args.worker.startswith("hf-"):
            result = hf_worker(args)
        else:
            result = worker(args)
        print(json.dumps(result, default=str))
        return
    if not args.sparkdoc:
        p.error("--sparkdoc BIN is required")
    driver(args)


if __name__ == "__main__":
    main()
