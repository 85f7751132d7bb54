#!/usr/bin/env python3
"""Times `sparkdoc audit` of one folder with two or more builds, runs interleaved.

Each round runs every build once (the order reversed every other round, so neither build always
follows the other), timing the wall (monotonic clock around fork/exec/wait) and the child's
user + system CPU (rusage). On a shared machine the load drifts between rounds; interleaving
makes the builds see the same drift, and the median of the per-round ratios to the first build
is the figure to read.
    python3 bench/audit_ab.py --site /tmp/fakesp --threads 1 --runs 60 before=/tmp/a after=/tmp/b
"""
import argparse
import resource
import statistics
import subprocess
import time


def run_once(binary, site, threads):
    argv = [binary, "audit", "--site-packages", site, "--arch", "12.1", "--threads", str(threads),
            "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall * 1e3, cpu * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", required=True, help="the folder to audit")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=60, help="rounds (each build once a round)")
    parser.add_argument("builds", nargs="+",
                        help="NAME=PATH of a sparkdoc binary; the first is the base")
    args = parser.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    wall = {name: [] for name, _ in builds}
    cpu = {name: [] for name, _ in builds}
    for i in range(args.runs):
        for name, path in builds if i % 2 == 0 else builds[::-1]:
            w, c = run_once(path, args.site, args.threads)
            wall[name].append(w)
            cpu[name].append(c)
    base = builds[0][0]
    for name, _ in builds:
        line = (f"threads {args.threads} {name:10s} n={args.runs} wall median "
                f"{statistics.median(wall[name]):.1f} ms, "
                f"cpu median {statistics.median(cpu[name]):.1f} ms")
        if name != base:
            w = statistics.median(x / y for x, y in zip(wall[name], wall[base]))
            c = statistics.median(x / y for x, y in zip(cpu[name], cpu[base]) if y > 0)
            line += f"; per-round ratio to {base}: wall {w:.3f}, cpu {c:.3f}"
        print(line)


if __name__ == "__main__":
    main()
