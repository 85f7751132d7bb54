#!/usr/bin/env bash
# `sparkdoc mem` and `sparkdoc clean --yes` on a GPU machine, beside what /proc/meminfo and
# nvidia-smi say at the same moments (root; drops the page cache).
#   bench/mem_on_gpu.sh SPARKDOC PYTHON_WITH_TORCH OUT_DIR
# 1. idle; 2. with a process holding 20 GiB of GPU memory; 3. after reading an 8 GiB file,
# clean --yes (page cache before and after).
set -u
sparkdoc=$1 py=$2 out=$3
mkdir -p "$out"
meminfo() { grep -E '^(MemTotal|MemFree|MemAvailable|Cached|AnonPages|SwapFree):' /proc/meminfo; }

{ echo "== idle"; "$sparkdoc" mem; meminfo; nvidia-smi --query-gpu=memory.used,memory.total --format=csv; } >"$out/mem.txt" 2>&1

ready=$(mktemp -u)
"$py" -c '
import sys, time, torch
x = torch.empty(20 << 30, dtype=torch.uint8, device="cuda")
x.fill_(1); torch.cuda.synchronize()
open(sys.argv[1], "w").write("ok")
time.sleep(300)' "$ready" &
holder=$!
for _ in $(seq 1 120); do [ -e "$ready" ] && break; sleep 0.5; done
{
  echo "== a process (pid $holder) holding 20 GiB"
  "$sparkdoc" mem
  meminfo
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv
  nvidia-smi --query-gpu=memory.used,memory.total --format=csv
} >>"$out/mem.txt" 2>&1
"$sparkdoc" mem --json >"$out/mem-busy.json" 2>&1
kill "$holder"; wait "$holder" 2>/dev/null

file=/tmp/sparkdoc-8g
head -c 8G /dev/zero >"$file"
sync; echo 3 >/proc/sys/vm/drop_caches
cat "$file" >/dev/null
{
  echo "== after reading an 8 GiB file"
  meminfo
  "$sparkdoc" clean --yes
  echo "== after clean"
  meminfo
} >"$out/clean.txt" 2>&1
rm -f "$file"
echo "mem and clean written to $out"
