#!/usr/bin/env bash
# The preflight approach of the spark-training-gotchas skill, for side-by-side timing with
# `sparkdoc check`: two Python probes that import torch, nvidia-smi, free and grep.
# It prints the skill's line format so the two outputs can be compared by eye.
set -u
echo "== G1: CUDA 12/13 ABI =="
if cuda=$(python3 -c "import torch; print(torch.version.cuda)" 2>/dev/null); then
  case "$cuda" in 13.*) echo "G1 PASS: torch built against CUDA $cuda" ;;
                  *) echo "G1 FAIL: torch built against CUDA $cuda" ;; esac
else
  echo "G1 SKIP: torch not importable"
fi
echo "== G3: UMA memory =="
read -r _ total used free _ < <(free -g | grep '^Mem:')
echo "G3 INFO: free/used (GB): $free $used"
grep -E '^(MemAvailable|Cached|SwapFree):' /proc/meminfo
echo "== G4: thermal =="
if out=$(nvidia-smi --query-gpu=temperature.gpu,power.draw --format=csv,noheader 2>/dev/null); then
  echo "G4 INFO: $out"
else
  echo "G4 SKIP: nvidia-smi unavailable"
fi
echo "== G7: NVFP4 =="
if cap=$(python3 -c "import torch; print(torch.cuda.get_device_capability())" 2>/dev/null); then
  if [ "$cap" = "(12, 1)" ]; then echo "G7 PASS: SM121 detected"; else echo "G7 WARN: unexpected capability $cap"; fi
else
  echo "G7 SKIP: torch not importable"
fi
echo "== G9: container =="
if grep -qi docker /proc/1/cgroup; then echo "G9 PASS: running inside a container"
else echo "G9 WARN: bare host — prefer an NGC or Unsloth container"; fi
