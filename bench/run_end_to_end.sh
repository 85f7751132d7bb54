#!/usr/bin/env bash
# `sparkdoc run` end to end on a machine with a GPU, torch and root: a real torch child
# (bench/run_child.py), the watch sidecar, --tune-vm, page-cache drops in the load window,
# SIGTERM forwarded, and the journal of a SIGKILLed sparkdoc restored by the next start.
# Prints the vm values before, during and after each run.
#
#   sudo bench/run_end_to_end.sh SPARKDOC OUT_DIR [PYTHON]
#     SPARKDOC  the sparkdoc binary (build-release/src/cli/sparkdoc)
#     OUT_DIR   where the three runs' logs, run.html and the transcript go
#     PYTHON    a Python with torch and CUDA (default python3)
set -u
sparkdoc=$(realpath "$1") out=$2 python=${3:-python3}
child=$(realpath "$(dirname "$0")/run_child.py")
mkdir -p "$out"
cd "$out" || exit 2
vm() {
  echo "min_free_kbytes=$(cat /proc/sys/vm/min_free_kbytes)" \
    "vfs_cache_pressure=$(cat /proc/sys/vm/vfs_cache_pressure)"
}
{
  echo "== before: $(vm)"
  echo "== run 1: exit 3, distributed variables set, --tune-vm --drop-cache-every 3s"
  WORLD_SIZE=2 RANK=0 MASTER_ADDR=10.0.0.1 NCCL_DEBUG=INFO \
    "$sparkdoc" run --tune-vm --drop-cache-every 3s --log-dir r1 -- "$python" "$child" 30 3
  echo "sparkdoc run exit: $?"
  echo "after run 1: $(vm)"
  grep -c '"type":"sample"' r1/watch.jsonl
  grep -E '"type":"(cache_drop|load_window_end|run_end)"' r1/run.jsonl
  "$sparkdoc" report r1 -o r1/run.html
  echo "report exit: $?"

  echo "== run 2: SIGTERM to sparkdoc after 15 s"
  "$sparkdoc" run --tune-vm --log-dir r2 -- "$python" "$child" 120 0 &
  pid=$!
  sleep 15
  echo "during run 2: $(vm)"
  kill -TERM "$pid"
  wait "$pid"
  echo "sparkdoc run exit: $?"
  echo "after run 2: $(vm)"

  echo "== run 3: SIGKILL to sparkdoc after 12 s"
  "$sparkdoc" run --tune-vm --log-dir r3 -- "$python" "$child" 40 0 >r3.out 2>&1 &
  pid=$!
  sleep 12
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  echo "sparkdoc killed; now: $(vm)"
  echo "== a start while run 3's command still runs (it outlives a SIGKILLed sparkdoc)"
  "$sparkdoc" run --no-preflight --no-watch --log-dir r4 -- true
  echo "exit: $?"
  echo "after that start: $(vm)"
  command=$(pgrep -f "run_child.py 40")
  echo "run 3's command: pid $command; ending it"
  kill -TERM $command
  # Gone, or a zombie its new parent has not reaped: either way no longer running.
  while [ -r /proc/$command/stat ] && [ "$(sed 's/.*) //' /proc/$command/stat | cut -d' ' -f1)" != Z ]; do
    sleep 0.2
  done
  echo "== the first start after it ended"
  "$sparkdoc" run --no-preflight --no-watch --log-dir r5 -- true
  echo "exit: $?"
  echo "after that start: $(vm)"
} 2>&1 | tee "$out/transcript.txt"
