#!/usr/bin/env bash
# A fuzz campaign over many cores: each target runs as several libFuzzer processes (different
# seeds, a corpus copy each) for a fixed time, then their corpora are merged and minimised
# (-merge=1) into one. Prints one line per target: executions summed over its processes and the
# crashes (artifacts) found; then the minimised corpus sizes. docs/BENCHMARKS.md records the runs.
#
#   bench/fuzz_campaign.sh BIN_DIR CORPUS_DIR OUT SECONDS TARGET:PROCESSES...
#
# BIN_DIR holds the fuzz_* binaries (the asan preset's build-asan/fuzz: ASan and UBSan, every
# undefined behaviour fatal); CORPUS_DIR the committed corpora (fuzz/corpus); OUT receives
# OUT/corpus/<target> (minimised), OUT/artifacts and OUT/logs. A target already in OUT/corpus
# starts from that corpus (a second campaign continues the first).
set -uo pipefail
bin=$1 corpus=$2 out=$3 seconds=$4
shift 4
mkdir -p "$out/corpus" "$out/artifacts" "$out/logs" "$out/work"

for spec in "$@"; do
  target=${spec%%:*} processes=${spec##*:}
  seed_corpus="$out/corpus/$target"
  [ -d "$seed_corpus" ] || seed_corpus="$corpus/$target"
  for ((p = 0; p < processes; p++)); do
    work="$out/work/$target.$p"
    rm -rf "$work" && mkdir -p "$work"
    [ -d "$seed_corpus" ] && cp -r "$seed_corpus"/. "$work"/
    "$bin/$target" -max_total_time="$seconds" -max_len=4096 -seed=$((1000 + p)) \
      -print_final_stats=1 -artifact_prefix="$out/artifacts/$target.$p." "$work" \
      >"$out/logs/$target.$p.log" 2>&1 &
  done
done
wait

# The counts first, so that a call cut short while merging still has them.
printf '%-26s %14s %8s\n' target executions crashes
for spec in "$@"; do
  target=${spec%%:*} processes=${spec##*:}
  runs=0
  for ((p = 0; p < processes; p++)); do
    n=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$out/logs/$target.$p.log" |
      grep -Eo '[0-9]+$' || echo 0)
    runs=$((runs + n))
  done
  printf '%-26s %14d %8d\n' "$target" "$runs" "$(find "$out/artifacts" -name "$target.*" | wc -l)"
done

# Then each target's corpora merged and minimised, all targets at once.
for spec in "$@"; do
  target=${spec%%:*} processes=${spec##*:}
  (
    merged="$out/merged/$target"
    rm -rf "$merged" && mkdir -p "$merged"
    dirs=()
    for ((p = 0; p < processes; p++)); do dirs+=("$out/work/$target.$p"); done
    "$bin/$target" -merge=1 -max_len=4096 "$merged" "${dirs[@]}" >"$out/logs/$target.merge.log" 2>&1
    rm -rf "$out/corpus/$target" && mv "$merged" "$out/corpus/$target"
    echo "$target: minimised corpus of $(ls "$out/corpus/$target" | wc -l) inputs"
  ) &
done
wait
