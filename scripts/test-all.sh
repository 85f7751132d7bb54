#!/usr/bin/env bash
# The whole test suite: unit and golden tests, the same under ASan+UBSan, and a short run of
# every fuzz target over its committed corpus. GPU tests skip themselves without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== build and test (default preset)"
cmake --preset default -G Ninja >/dev/null
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs" | tee -a "$log"

echo "== build and test under ASan+UBSan"
cmake --preset asan -G Ninja >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs" -L unit | tee -a "$log"

if command -v clang++ >/dev/null 2>&1; then
  echo "== fuzz smoke (each target over its corpus, then 20000 new inputs)"
  cmake --preset fuzz -G Ninja >/dev/null
  cmake --build --preset fuzz -j "$jobs" --target fuzz_all
  for target in build-fuzz/fuzz/fuzz_*; do
    [ -x "$target" ] || continue
    name=$(basename "$target")
    corpus="fuzz/corpus/${name}"
    work=$(mktemp -d)
    [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
    "$target" -runs=20000 -max_total_time=60 "$work" >"$work.log" 2>&1 \
      || { cat "$work.log"; echo "fuzz target $name failed"; exit 1; }
    echo "$name: $(grep -Eo 'Done [0-9]+ runs' "$work.log" || echo ok)"
    rm -rf "$work" "$work.log"
  done
fi

# One closing line over both ctest runs (ctest itself stops the script on a failure).
total=$(grep -Eo 'tests failed out of [0-9]+' "$log" | awk '{s += $5} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ tests failed out of' "$log" | awk '{s += $1} END {print s + 0}')
echo "$((total - failed)) passed, $failed failed"
