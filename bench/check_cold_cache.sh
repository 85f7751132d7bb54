#!/bin/bash
# The first `sparkdoc check` after a reboot, with the audit's cache warm and without it
# (--no-cache), and warm runs of both (issue 18: 2.4-3.5 s cold on the H200 before the cache).
# "Cold" is the page cache dropped right before the run (sync; echo 3 > drop_caches), which is
# what a reboot leaves; the audit cache (audit/fact_cache.h) is in a folder of the script's own,
# filled by one check first.
#   sudo bench/check_cold_cache.sh SPARKDOC PYTHON [RUNS] [-- CHECK-OPTIONS...]
# SPARKDOC: the binary; PYTHON: the interpreter whose environment to audit (its site-packages).
# RUNS (default 5) of each kind, alternating; every run is `/usr/bin/time -f "%e s %M KB"
# sparkdoc check --python PYTHON`. Prints each run, then a table: wall time and peak RSS,
# median (min-max), per kind. Needs root for drop_caches.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 SPARKDOC PYTHON [RUNS] [-- CHECK-OPTIONS...]" >&2
  exit 2
fi
sparkdoc=$1
python=$2
shift 2
runs=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  runs=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
if [ "$(id -u)" != 0 ]; then
  echo "$0: needs root, to drop the page cache (/proc/sys/vm/drop_caches)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/check-cold-cache-XXXXXX)
trap 'rm -rf "$work"' EXIT
export SPARKDOC_CACHE=$work/cache
unset SPARKDOC_NO_AUDIT_CACHE

# One run: KIND, cold or warm, then check's extra options. Prints it; appends "KIND|wall|rss".
run() {
  local kind=$1 temperature=$2
  shift 2
  if [ "$temperature" = cold ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
  fi
  /usr/bin/time -f "%e s %M KB" -o "$work/time" \
    "$sparkdoc" check --python "$python" "$@" >/dev/null 2>"$work/stderr"
  local status=$?
  local wall rss
  read -r wall _ rss _ <"$work/time"
  printf '%-22s %6s s %7s KB  exit %s\n' "$kind" "$wall" "$rss" "$status"
  echo "$kind|$wall|$rss" >>"$work/rows"
}

echo "sparkdoc: $("$sparkdoc" --version 2>/dev/null | head -1)"
echo "python:   $python"
echo "kernel:   $(uname -r), $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
# The cache filled; a second run keeps any file the first found too new to keep.
"$sparkdoc" check --python "$python" "$@" >/dev/null 2>&1
sleep 3
"$sparkdoc" check --python "$python" "$@" >/dev/null 2>&1
echo "audit cache: $(find "$SPARKDOC_CACHE" -type f -name '*.bin' -printf '%s bytes %p\n')"
echo
for i in $(seq 1 "$runs"); do
  run "cold, cache" cold "$@"
  run "cold, --no-cache" cold --no-cache "$@"
done
for i in $(seq 1 "$runs"); do
  run "warm, cache" warm "$@"
  run "warm, --no-cache" warm --no-cache "$@"
done
echo
echo "| check ($runs runs each) | wall, median (min-max) | peak RSS, median (min-max) |"
echo "|---|---:|---:|"
for kind in "cold, cache" "cold, --no-cache" "warm, cache" "warm, --no-cache"; do
  awk -F'|' -v kind="$kind" '
    $1 == kind { n++; w[n] = $2; r[n] = $3 }
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      if (n == 0) exit
      mw = median(w, n); lo_w = w[1]; hi_w = w[n]
      mr = median(r, n); lo_r = r[1]; hi_r = r[n]
      printf "| %s | %.2f s (%.2f-%.2f) | %.1f MB (%.1f-%.1f) |\n", kind, mw, lo_w, hi_w,
        mr / 1000, lo_r / 1000, hi_r / 1000
    }' "$work/rows"
done
