#!/usr/bin/env bash
# sparkdoc compare over a fleet: 1,000 snapshots made from the two-node fixture's healthy node
# (tests/fixtures/compare/node-a.json) with hostnames node0001..node1000 and six drifted nodes,
# compared as a folder of files and as one pdsh-labelled stream; beside it, in the same run, a
# Python script that loads the same 1,000 files with the json module and diffs the same readings
# (bench/compare_fleet.py). Prints the wall time, user time and peak RSS of three warm runs each.
#   bench/compare_fleet.sh SPARKDOC PYTHON OUT_DIR
set -euo pipefail
sparkdoc=$1
python=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/fleet"
"$python" "$here/compare_fleet.py" generate "$here/../tests/fixtures/compare/node-a.json" "$out"
echo "snapshots: $(ls "$out/fleet" | wc -l) files, $(du -sm "$out/fleet" | cut -f1) MiB; stream: $(wc -c <"$out/fleet.pdsh") bytes"
cat "$out/fleet"/*.json "$out/fleet.pdsh" >/dev/null  # warm the page cache for every run
for i in 1 2 3; do
  /usr/bin/time -f "sparkdoc compare DIR: %e s wall, %U s user, %M KB peak" \
    "$sparkdoc" compare "$out/fleet" >"$out/compare-fleet.txt" || true
done
for i in 1 2 3; do
  /usr/bin/time -f "sparkdoc compare - (pdsh stream): %e s wall, %U s user, %M KB peak" \
    "$sparkdoc" compare - <"$out/fleet.pdsh" >"$out/compare-stream.txt" || true
done
for i in 1 2 3; do
  /usr/bin/time -f "python json + diff: %e s wall, %U s user, %M KB peak" \
    "$python" "$here/compare_fleet.py" diff "$out/fleet" >"$out/python-fleet.txt" || true
done
echo "sparkdoc rows that differ: $(grep -cE '^(BREAKS|LOOK|harmless) ' "$out/compare-fleet.txt")"
echo "python rows that differ: $(grep -c '^differs ' "$out/python-fleet.txt")"
tail -2 "$out/compare-fleet.txt"
