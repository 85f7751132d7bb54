#!/usr/bin/env bash
# CPU overhead of `sparkdoc watch --interval 1s` beside a GPU load, against `nvidia-smi -l 1` and
# the skill's thermal sampler at the same rate (`nvidia-smi --query-gpu=timestamp,temperature.gpu,
# power.draw --format=csv -l 1`), all three running at the same time over the same load, each
# measured the same way: utime + stime from /proc/PID/stat over the wall time, read just before
# each is stopped. A curl scrape of the Prometheus endpoint runs in the middle.
#
#   bench/watch_overhead.sh SPARKDOC OUT_DIR [SECONDS] [PYTHON]
#     SPARKDOC  the sparkdoc binary (build-release/src/cli/sparkdoc, or a carried copy)
#     OUT_DIR   where the log, the CSV, the scrape and summary.txt go
#     SECONDS   how long the three run side by side (default 600)
#     PYTHON    a Python with torch and CUDA for the load (default /opt/torch/.venv/bin/python)
# WARMUP_S (default 15) is how long the load runs before the three start.
# Where one command may run at most 10 minutes: DETACH=1 starts the whole run in the background
# (its own session) and returns at once; `bench/watch_overhead.sh --wait OUT_DIR` then waits for
# it to finish and prints the summary.
# Target (issue 5): sparkdoc watch at 1 Hz uses <= 0.2 % of one core.
set -u
if [ "${1:-}" = "--wait" ]; then
  if [ ! -e "$2/detached.log" ]; then
    echo "watch_overhead.sh: no detached run in $2 (start one with DETACH=1)" >&2
    exit 2
  fi
  while [ ! -e "$2/done" ]; do sleep 2; done
  if [ -s "$2/summary.txt" ]; then cat "$2/summary.txt"; exit 0; fi
  echo "watch_overhead.sh: the detached run ended without a summary; its output:" >&2
  cat "$2/detached.log" >&2
  exit 1
fi
if [ -n "${DETACH:-}" ]; then
  mkdir -p "$2"
  rm -f "$2/done" "$2/summary.txt"
  # "done" appears however the run ends, so that --wait never waits for a run that died.
  DETACH= setsid nohup bash -c 'trap "touch \"$3/done\"" EXIT; bash "$@"' _ "$0" "$@" \
    >"$2/detached.log" 2>&1 </dev/null &
  echo "running in the background; wait with: $0 --wait $2"
  exit 0
fi
sparkdoc=$1 out=$2 seconds=${3:-600} python=${4:-/opt/torch/.venv/bin/python}
mkdir -p "$out"
hz=$(getconf CLK_TCK)
port=9400

# utime + stime of PID, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
now() { date +%s.%N; }

# The GPU load: bf16 matmuls in a loop until it is stopped (SIGTERM), then its throughput.
cat >"$out/load.py" <<'PY'
import signal, time, torch
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
steps = 0
start = time.time()
while not stop:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    steps += 20
elapsed = time.time() - start
print(f"load: {steps} bf16 matmuls of 8192^3 in {elapsed:.0f} s, "
      f"{2 * 8192**3 * steps / elapsed / 1e12:.0f} TFLOP/s")
PY
"$python" "$out/load.py" >"$out/load.txt" 2>&1 &
load=$!
sleep "${WARMUP_S:-15}"  # the load reaches steady clocks and power before anything is measured

# Where a sample's time goes, call by call, when the cost tool sits beside the binary (built
# with -DSPARKDOC_BUILD_BENCH=ON). It runs before the three, so it does not disturb them.
cost_tool=$(dirname "$sparkdoc")/watch_sample_cost
[ -x "$cost_tool" ] || cost_tool=$(dirname "$sparkdoc")/../../bench/watch_sample_cost
if [ -x "$cost_tool" ]; then
  "$cost_tool" 50 "$out/cost.jsonl" >"$out/sample_cost.txt" 2>&1
fi

"$sparkdoc" watch --interval 1s --log "$out/watch.jsonl" --csv "$out/watch.csv" \
  --listen "127.0.0.1:$port" --quiet 2>"$out/watch.err" &
watch=$!
nvidia-smi -l 1 >"$out/nvidia-smi-l1.txt" 2>&1 &
smi=$!
nvidia-smi --query-gpu=timestamp,temperature.gpu,power.draw --format=csv -l 1 \
  >"$out/nvidia-smi-query.csv" 2>&1 &
query=$!
started=$(now)

sleep "$((seconds / 2))"
curl -s -o "$out/metrics.txt" \
  -w 'scrape: HTTP %{http_code}, %{size_download} bytes in %{time_total} s\n' \
  "http://127.0.0.1:$port/metrics" >"$out/scrape.txt" 2>&1
sleep "$((seconds - seconds / 2))"

# Read all three at the same instant, then stop them and the load.
ended=$(now)
declare -A ticks rss
for name in watch smi query; do
  pid=${!name}
  ticks[$name]=$(cpu_ticks "$pid")
  rss[$name]=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
done
kill -TERM "$watch" "$smi" "$query" "$load" 2>/dev/null
wait "$watch"
watch_status=$?
wait "$smi" "$query" "$load" 2>/dev/null

wall=$(awk -v a="$started" -v b="$ended" 'BEGIN {printf "%.1f", b - a}')
samples=$(grep -c '"type":"sample"' "$out/watch.jsonl")
events=$(grep -c '"type":"event"' "$out/watch.jsonl")
{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)," \
    "$(nproc) CPUs, kernel $(uname -r)"
  echo "sparkdoc: $("$sparkdoc" --version 2>&1)"
  cat "$out/load.txt"
  echo "wall: $wall s side by side; CPU from /proc/PID/stat utime+stime at $hz ticks/s"
  printf '%-60s %8s %10s %12s\n' "tool" "CPU s" "% of core" "peak RSS MB"
  for name in watch smi query; do
    case $name in
      watch) label="sparkdoc watch --interval 1s (log, csv, --listen)" ;;
      smi) label="nvidia-smi -l 1" ;;
      query) label="nvidia-smi --query-gpu=timestamp,temperature.gpu,power.draw -l 1" ;;
    esac
    awk -v l="$label" -v t="${ticks[$name]}" -v hz="$hz" -v w="$wall" -v r="${rss[$name]}" \
      'BEGIN {printf "%-60s %8.2f %9.3f%% %12.1f\n", l, t / hz, 100 * t / hz / w, r / 1024}'
  done
  echo "sparkdoc watch: exit $watch_status, $samples samples, $events events in the log"
  cat "$out/scrape.txt"
  echo "metric families in the scrape: $(grep -c '^# TYPE' "$out/metrics.txt")"
  grep -E '^DCGM_FI_DEV_(POWER_USAGE|GPU_TEMP|SM_CLOCK)' "$out/metrics.txt"
  [ -s "$out/sample_cost.txt" ] && cat "$out/sample_cost.txt"
} | tee "$out/summary.txt"
