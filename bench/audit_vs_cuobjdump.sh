#!/usr/bin/env bash
# `sparkdoc audit` on a site-packages folder against the cuobjdump loop people run today, in
# the same run: the file-by-file listing comparison (sparkdoc audit --list-elf vs
# cuobjdump --list-elf --list-ptx) and the timings.
#   bench/audit_vs_cuobjdump.sh SPARKDOC SITE_PACKAGES OUT_DIR [LIST_GPU_CODE]
# The files are the ones the audit reads (its --json "files"); LIST_GPU_CODE (bench/
# list_gpu_code) adds a one-process listing for timing the listing alone.
set -u
sparkdoc=$1 site=$2 out=$3 lister=${4:-}
py=$(command -v python3)
mkdir -p "$out/cuobjdump" "$out/sparkdoc"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }

"$sparkdoc" audit --site-packages "$site" --json >"$out/audit.json"
mapfile -t files < <("$py" -c 'import json,sys; [print(sys.argv[2] + "/" + f["file"]) for f in json.load(open(sys.argv[1]))["files"]]' "$out/audit.json" "$site")
echo "files: ${#files[@]}"
# Warm the page cache for both tools alike.
cat "${files[@]}" >/dev/null

start=$(now)
for i in "${!files[@]}"; do
  cuobjdump --list-elf --list-ptx "${files[$i]}" >"$out/cuobjdump/$i.txt" 2>&1
done
end=$(now)
cuobjdump_s=$(secs "$start" "$end")
echo "cuobjdump loop (${#files[@]} processes): $cuobjdump_s s"

for i in "${!files[@]}"; do
  "$sparkdoc" audit --list-elf "${files[$i]}" >"$out/sparkdoc/$i.txt" 2>&1
done
same=0 differ=0
: >"$out/differences.txt"
for i in "${!files[@]}"; do
  if cmp -s "$out/cuobjdump/$i.txt" "$out/sparkdoc/$i.txt"; then
    same=$((same + 1))
  else
    differ=$((differ + 1))
    { echo "== ${files[$i]}"; diff "$out/cuobjdump/$i.txt" "$out/sparkdoc/$i.txt" | head -20; } >>"$out/differences.txt"
  fi
done
echo "compared ${#files[@]} files: $same identical, $differ different"

echo "full audit, warm (process wall time; audit's own elapsed_ms):"
best=""
for run in 1 2 3 4 5; do
  start=$(now)
  "$sparkdoc" audit --site-packages "$site" --json >"$out/audit-$run.json"
  end=$(now)
  s=$(secs "$start" "$end")
  inner=$("$py" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["audit"]["elapsed_ms"])' "$out/audit-$run.json")
  echo "  run $run: $s s (elapsed_ms $inner)"
  if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN {exit !(a < b)}'; then best=$s; fi
done
echo "best full audit: $best s; cuobjdump loop $cuobjdump_s s; ratio $(awk -v a="$cuobjdump_s" -v b="$best" 'BEGIN {printf "%.0f", a / b}')x"
if [ -n "$lister" ]; then
  for run in 1 2 3; do "$lister" --out "$out/sparkdoc" "${files[@]}"; done
fi
