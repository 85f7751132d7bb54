#!/usr/bin/env python3
"""Warm `sparkdoc check` of several builds, alternating, each with an audit cache of its own:
wall time (a monotonic clock around fork/exec/wait), user and system time and peak RSS (wait4),
with and without --no-gpu; then each build's `snapshot` timings (the audit's phases among them)
and its cache file (copied to $OUT when set).
    python3 bench/check_builds_warm.py PYTHON RUNS SPARKDOC...
Peak RSS here is that of a fork of this interpreter until the exec, then the command's: below
about 12 MB it is the interpreter's (bench/check_cold_warm_vs_skill.py takes it from GNU time)."""
import os, sys, time, json, statistics, subprocess, tempfile, shutil
py, runs, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
caches = {b: tempfile.mkdtemp() for b in builds}
def run(sd, args):
    env = dict(os.environ, SPARKDOC_CACHE=caches[sd])
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
        os.execve(sd, [sd] + args, env)
    _, status, ru = os.wait4(pid, 0)
    return (time.perf_counter() - t0, ru.ru_utime, ru.ru_stime, ru.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status))
kinds = {'check': ['check', '--python', py], 'check --no-gpu': ['check', '--python', py, '--no-gpu']}
for b in builds:
    for _ in range(3): run(b, kinds['check'])
rows = {(b, k): [] for b in builds for k in kinds}
for i in range(runs):
    for k, a in kinds.items():
        for b in builds: rows[(b, k)].append(run(b, a))
print(f"{'build':14} {'kind':16} {'wall ms med (min-max)':>24} {'user':>6} {'sys':>6} {'RSS MB med (max)':>16}")
for (b, k), r in rows.items():
    w = [x[0]*1000 for x in r]
    print(f"{os.path.basename(b):14} {k:16} {statistics.median(w):7.1f} ({min(w):5.1f}-{max(w):5.1f}) {statistics.median([x[1]*1000 for x in r]):6.1f} {statistics.median([x[2]*1000 for x in r]):6.1f} {statistics.median([x[3] for x in r]):7.1f} ({max(x[3] for x in r):.1f})")
for b in builds:
    print(os.path.basename(b), "check walls:", " ".join(f"{x[0]*1000:.0f}" for x in rows[(b, 'check')]))
for b in builds:
    tm = {}
    env = dict(os.environ, SPARKDOC_CACHE=caches[b])
    for i in range(runs):
        d = json.loads(subprocess.run([b, 'snapshot', '--python', py], capture_output=True, env=env).stdout)
        for k, v in d.get('timings_ms', {}).items(): tm.setdefault(k, []).append(v)
    print(os.path.basename(b), "snapshot timings_ms:", "; ".join(f"{k} {statistics.median(v):.1f}" for k, v in sorted(tm.items()) if k not in ('cuda', 'nvml', 'total')))
    for dp, _, fs in os.walk(caches[b]):
        for f in fs:
            print("  cache", f, os.path.getsize(os.path.join(dp, f)), "bytes")
            if os.environ.get('OUT'): shutil.copy(os.path.join(dp, f), os.path.join(os.environ['OUT'], f))
