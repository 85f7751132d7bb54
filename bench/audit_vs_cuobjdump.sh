#!/usr/bin/env bash
# Compares sparkdoc's GPU-code listing with cuobjdump's, file by file, for every shared object
# in a site-packages folder, and times both in the same run.
#   bench/audit_vs_cuobjdump.sh LIST_GPU_CODE SITE_PACKAGES OUT_DIR
set -u
lister=$1 site=$2 out=$3
mkdir -p "$out/cuobjdump" "$out/sparkdoc"
mapfile -t files < <(find "$site" -name '*.so*' -type f | sort)
echo "files: ${#files[@]}"
# Warm the page cache for both tools alike.
cat "${files[@]}" >/dev/null
start=$(date +%s.%N)
for i in "${!files[@]}"; do
  cuobjdump --list-elf --list-ptx "${files[$i]}" >"$out/cuobjdump/$i.txt" 2>&1
done
end=$(date +%s.%N)
echo "cuobjdump loop: $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') s"
for run in 1 2 3; do "$lister" --out "$out/sparkdoc" "${files[@]}"; done
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
