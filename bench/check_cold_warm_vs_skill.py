#!/usr/bin/env python3
"""Issue 18's acceptance in one run: `sparkdoc check` after the page cache is dropped (its audit
cache warm: two checks fill it first) and warm, alternating with the skill's preflight
(bench/skill_preflight.sh, run from the repository root). Wall time by a monotonic clock around
fork/exec/wait of GNU time, peak RSS from GNU time's %M (thousands of KiB); needs root for
/proc/sys/vm/drop_caches.
    sudo python3 bench/check_cold_warm_vs_skill.py SPARKDOC PYTHON COLD_RUNS WARM_RUNS
The skill's warm runs are the first three of the warm ones."""
import os, sys, time, statistics, subprocess
sd, py, cold_runs, warm_runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
env = dict(os.environ, SPARKDOC_CACHE='/tmp/sc-accept', PATH='/opt/torch/.venv/bin:' + os.environ['PATH'])
def drop():
    subprocess.run(['sync']); open('/proc/sys/vm/drop_caches', 'w').write('3\n')
# Peak RSS from GNU time (a small C parent: wait4's ru_maxrss of a fork of this interpreter
# would count the interpreter's own pages until the exec).
def run(argv):
    argv = ['/usr/bin/time', '-f', '%M', '-o', '/tmp/accept-rss'] + argv
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
        os.execvpe(argv[0], argv, env)
    _, status, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    kb = int(open('/tmp/accept-rss').read().split()[-1])
    return wall, kb / 1000.0, os.waitstatus_to_exitcode(status)
check = [sd, 'check', '--python', py]
skill = ['bash', 'bench/skill_preflight.sh']
for _ in range(2): run(check); time.sleep(2)
rows = {}
def rec(k, r):
    rows.setdefault(k, []).append(r); print(f"{k:14} {r[0]:9.1f} ms {r[1]:7.1f} MB exit {r[2]}", flush=True)
for i in range(cold_runs):
    drop(); rec('skill cold', run(skill))
    drop(); rec('check cold', run(check))
for i in range(warm_runs):
    if i < 3: rec('skill warm', run(skill))
    rec('check warm', run(check))
print()
print("| kind | runs | wall median (min-max) | peak RSS median (max) |")
print("|---|---:|---:|---:|")
for k, r in rows.items():
    w = [x[0] for x in r]; m = [x[1] for x in r]
    unit = lambda v: f"{v/1000:.2f} s" if v >= 1000 else f"{v:.0f} ms"
    print(f"| {k} | {len(r)} | {unit(statistics.median(w))} ({unit(min(w))}-{unit(max(w))}) | {statistics.median(m):.1f} MB ({max(m):.1f}) |")
