#!/usr/bin/env python3
"""Times `sparkdoc check` against the skill's shell preflight, in one run, on one machine.

For each command: wall time of every run (monotonic clock around fork/exec/wait) and the
child's peak RSS from wait4's rusage. Prints a table (median, min, max) and writes JSON.
    python3 bench/check_vs_skill.py --sparkdoc build-release/src/cli/sparkdoc --runs 20
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time


def measure(argv, runs, warmup):
    walls, rss = [], []
    for i in range(warmup + runs):
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if i >= warmup:
            walls.append(wall)
            rss.append(usage.ru_maxrss / 1024.0)  # kB -> MB
    return {
        "argv": argv, "runs": runs, "exit_status": proc.returncode,
        "wall_s": {"median": statistics.median(walls), "min": min(walls), "max": max(walls)},
        "peak_rss_mb": {"median": statistics.median(rss), "max": max(rss)},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparkdoc", required=True)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--skill-runs", type=int, default=5)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    results = {
        "machine": {"node": platform.node(), "machine": platform.machine(),
                    "kernel": platform.release(), "cpus": os.cpu_count()},
        "sparkdoc_check": measure([args.sparkdoc, "check", "--color", "never"], args.runs, 2),
        "skill_preflight": measure(["bash", os.path.join(here, "skill_preflight.sh")],
                                   args.skill_runs, 1),
    }
    print(f"{'command':<18} {'runs':>4} {'wall median':>12} {'wall min':>9} {'wall max':>9} "
          f"{'peak RSS':>10}")
    for name in ("sparkdoc_check", "skill_preflight"):
        r = results[name]
        print(f"{name:<18} {r['runs']:>4} {r['wall_s']['median']:>11.3f}s "
              f"{r['wall_s']['min']:>8.3f}s {r['wall_s']['max']:>8.3f}s "
              f"{r['peak_rss_mb']['max']:>8.1f}MB")
    speedup = results["skill_preflight"]["wall_s"]["median"] / results["sparkdoc_check"]["wall_s"]["median"]
    print(f"sparkdoc check is {speedup:.0f}x faster (median wall)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
