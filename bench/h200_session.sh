#!/usr/bin/env bash
# One call on the GPU machine: build the release binary there, record this machine's snapshot and
# judge it for a DGX Spark (--arch 12.1), time check, and lint the Python of real
# site-packages (bench/lint_site_packages.sh). Results under $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
jobs=$(nproc)
# The GPU machine has libelf.so.1 but not its headers: .carry/elf holds them and a .pc file.
export PKG_CONFIG_PATH="$PWD/.carry/elf"
cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DSPARKDOC_STATIC_RUNTIME=ON \
  -DSPARKDOC_BUILD_TESTS=OFF -Dtl-expected_DIR="$PWD/.carry/tlx/share/cmake/tl-expected" \
  >/tmp/b.cfg 2>&1 || { tail -20 /tmp/b.cfg; exit 1; }
cmake --build /tmp/b -j "$jobs" --target sparkdoc >/tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }
s=/tmp/b/src/cli/sparkdoc
python=
for p in python3 /opt/torch/.venv/bin/python; do
  if "$p" -c 'import transformers, peft, accelerate, torch' 2>/dev/null; then python=$p; break; fi
done
echo "== python: $python ($($python -c 'import transformers, peft; print("transformers", transformers.__version__, "peft", peft.__version__)'))"
echo "== snapshot, judged here and for 12.1"
$s snapshot -o "$out/h200-snapshot.json" 2>&1 | tail -2
$s check --snapshot "$out/h200-snapshot.json" >"$out/h200-check.txt" 2>&1
$s check --snapshot "$out/h200-snapshot.json" --arch 12.1 >"$out/h200-as-gb10.txt" 2>&1
grep -E "^(G1|G2|G7|S9) |^verdict" "$out/h200-check.txt" | cut -c1-200
echo "-- for 12.1:"
grep -E "^(G1|G2|G7|S9) |^verdict" "$out/h200-as-gb10.txt" | cut -c1-240
for i in 1 2 3; do /usr/bin/time -f "check: %e s, %M KB" $s check >/dev/null 2>>"$out/times.txt"; done
tail -3 "$out/times.txt"
echo "== lint of library code"
bench/lint_site_packages.sh "$s" "$python" "$out"
site=$($python -c 'import os, transformers; print(os.path.dirname(os.path.dirname(transformers.__file__)))')
echo "== every .py of site-packages"
echo "files: $(find "$site" -name '*.py' -type f | wc -l)"
/usr/bin/time -f "sparkdoc lint site-packages: %e s wall, %M KB peak" $s lint "$site" --json >"$out/lint-all.json" 2>"$out/lint-all.err"; echo "exit $?"; tail -2 "$out/lint-all.err"
$python -c "import json; d=json.load(open('$out/lint-all.json')); print(d['files'], 'read,', len(d['skipped']), 'skipped,', len(d['findings']), 'findings')"
echo "== transformers' Nemotron-H and gradient checkpointing"
grep -rn "supports_gradient_checkpointing" "$site/transformers/models/nemotron_h/" | head -3
