#!/usr/bin/env python3
"""The resident set of a short command over time: runs it, samples /proc/PID/smaps as fast as it
can (about every 1-3 ms), and prints the largest VmHWM seen, the mappings of the sample with the
largest total Rss, and a timeline of the NVIDIA libraries, the binary, the heap and anonymous
memory (docs/BENCHMARKS.md, "NVML unloaded once read").
    python3 bench/rss_timeline.py build-release/src/cli/sparkdoc check --python PY
The command is started with posix_spawn; wait4's ru_maxrss would count this interpreter's pages
(a vfork child shares them until exec), so VmHWM is read from /proc instead."""
import os, sys, time, collections

def smaps(pid):
    out = []
    try:
        with open(f"/proc/{pid}/smaps") as f:
            cur = None
            for line in f:
                parts = line.split()
                if len(parts) >= 5 and '-' in parts[0] and ':' not in parts[0]:
                    name = parts[5] if len(parts) > 5 else '[anon]'
                    cur = [name, 0, parts[1]]
                    out.append(cur)
                elif parts and parts[0] == 'Rss:' and cur is not None:
                    cur[1] = int(parts[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return out

def threads(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0

cmd = sys.argv[1:]
pid = os.posix_spawnp(cmd[0], cmd, os.environ)  # vfork-like: the child's maxrss is its own
best, best_total, best_threads, samples, max_threads, hwm = None, 0, 0, 0, 0, 0
timeline = []
t0 = time.monotonic()
while True:
    w, status, ru = os.wait4(pid, os.WNOHANG)
    if w != 0:
        break
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    hwm = max(hwm, int(line.split()[1]))
    except OSError:
        pass
    m = smaps(pid)
    t = threads(pid)
    max_threads = max(max_threads, t)
    if m:
        samples += 1
        total = sum(x[1] for x in m)
        parts = collections.defaultdict(int)
        for k, v, _ in m:
            if k.startswith('/dev/') or 'nvidia' in k or 'cuda' in k or k in ('[heap]', '[anon]') or 'sparkdoc' in k:
                parts[k] += v
        timeline.append((time.monotonic() - t0, total, t, parts))
        if total > best_total:
            best, best_total, best_threads = m, total, t
print(f"VmHWM seen {hwm} KB; sampled peak {best_total} KB in {samples} samples; threads at peak {best_threads}, max {max_threads}")
agg = collections.defaultdict(lambda: [0, 0])
for name, rss, perm in best or []:
    key = name
    agg[key][0] += rss
    agg[key][1] += 1
for name, (rss, n) in sorted(agg.items(), key=lambda kv: -kv[1][0])[:25]:
    print(f"  {rss:7d} KB  {n:3d} maps  {name}")

step = max(1, len(timeline) // 24)
for t, total, th, parts in timeline[::step]:
    agg2 = collections.defaultdict(int)
    for k, v in parts.items():
        agg2[k] += v
    print(f"  t={t*1000:6.1f} ms total {total:6d} KB threads {th:2d} " + " ".join(f"{k.split('/')[-1]}={v}" for k, v in sorted(agg2.items()) if v))
