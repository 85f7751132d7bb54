#!/usr/bin/env bash
# sparkdoc lint over real library code: every .py file of transformers, peft, accelerate and
# torch in a Python environment, read and judged, side by side with Python's own parser
# (ast.parse of the same files, the least a Python-based linter does). Prints the file count,
# the wall time and peak RSS of each run (three warm runs each), and writes the findings as JSON.
#   bench/lint_site_packages.sh SPARKDOC PYTHON OUT_DIR
set -euo pipefail
sparkdoc=$1
python=$2
out=$3
mkdir -p "$out"
site=$("$python" -c 'import os, transformers; print(os.path.dirname(os.path.dirname(transformers.__file__)))')
dirs=()
for p in transformers peft accelerate torch; do dirs+=("$site/$p"); done
files=$(find "${dirs[@]}" -name '*.py' -type f | wc -l)
bytes=$(find "${dirs[@]}" -name '*.py' -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "site-packages: $site"
echo "python files: $files ($((bytes / 1048576)) MiB) in transformers, peft, accelerate, torch"
cat "${dirs[@]/%//__init__.py}" >/dev/null  # warm the page cache for both
find "${dirs[@]}" -name '*.py' -type f -print0 | xargs -0 cat >/dev/null
for i in 1 2 3; do
  /usr/bin/time -f "sparkdoc lint: %e s wall, %U s user, %M KB peak" \
    "$sparkdoc" lint "${dirs[@]}" --json >"$out/lint-site-packages.json" || true
done
for i in 1 2 3; do
  /usr/bin/time -f "python ast.parse: %e s wall, %U s user, %M KB peak" "$python" - "${dirs[@]}" <<'PY'
import ast, os, sys, warnings
warnings.simplefilter("ignore")
n = bad = 0
for root in sys.argv[1:]:
    for d, _, names in os.walk(root):
        for name in names:
            if name.endswith(".py"):
                n += 1
                try:
                    with open(os.path.join(d, name), "rb") as f:
                        ast.parse(f.read())
                except (SyntaxError, ValueError):
                    bad += 1
print(f"python ast.parse: {n} files, {bad} not parsed")
PY
done
"$python" - "$out/lint-site-packages.json" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
print(f"sparkdoc lint: {d['files']} files read, {len(d['skipped'])} skipped, verdict {d['verdict']}")
by = collections.Counter((f["id"], f["verdict"]) for f in d["findings"])
for (i, v), n in sorted(by.items(), key=lambda kv: -kv[1]):
    print(f"  {i} {v}: {n}")
for s in d["skipped"][:10]:
    print("  skipped:", s)
PY
