#!/bin/bash
# `sparkdoc audit` beside an install: audits of four copies of ELF, one audit process after
# another, while a Python writer rewrites the copies, in turn in place (open 'wb', O_TRUNC, as
# cp does) and as pip does (unlink, then a new file), in 64 KB writes.
#   bench/audit_beside_install.sh SPARKDOC ELF [AUDITS]
# ELF: a shared object with GPU code, such as tests/audit's ext_large.so (in any build folder,
# tests/audit/audit_fixture/).
# Prints each audit that died of a signal and, at the end, how the files were reported: whole
# (the untouched file's facts), changed during the read, or "between" (read, unchanged
# throughout, as what the file was between the two steps of a rewrite: truncated, empty or
# absent), and every other outcome, one line each ("odd: ...").
set -u
sparkdoc=$1
elf=$2
audits=${3:-200}
site=$(mktemp -d /tmp/audit-beside-install-XXXXXX)
trap 'touch "$site.stop"; wait; rm -rf "$site" "$site".*' EXIT
for i in 0 1 2 3; do mkdir -p "$site/pkg$i" && cp "$elf" "$site/pkg$i/_big.so"; done
"$sparkdoc" audit --site-packages "$site" --json >"$site.base.json"
: >"$site.seen"

python3 - "$site" "$elf" <<'PY' &
import os, sys
site, elf = sys.argv[1], sys.argv[2]
data = open(elf, "rb").read()
paths = [f"{site}/pkg{i}/_big.so" for i in range(4)]
n = 0
while not os.path.exists(site + ".stop"):
    path = paths[n % 4]
    if n % 2:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    with open(path, "wb" if n % 2 == 0 else "xb") as f:
        for at in range(0, len(data), 65536):
            f.write(data[at:at + 65536])
    n += 1
print(f"writer: {n} rewrites", file=sys.stderr)
PY

died=0
for run in $(seq 1 "$audits"); do
  "$sparkdoc" audit --site-packages "$site" --json --threads 2 >"$site.json" 2>/dev/null
  status=$?
  if [ "$status" -ge 128 ]; then
    died=$((died + 1))
    echo "audit $run: died, status $status ($(kill -l $((status - 128))))"
    continue
  fi
  python3 - "$site.json" "$site.base.json" >>"$site.seen" <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["files"]
base = json.load(open(sys.argv[2]))["files"][0]
for f in files:
    error = f.get("error")
    if error is None:
        same = (f["code_groups"], f["needs"]) == (base["code_groups"], base["needs"])
        print("whole" if same else f"odd: {f['file']}: facts differ")
    elif f.get("changed_during_read"):
        print("changed")
    elif ": truncated: " in error or error.endswith(
            (": not an ELF file", ": No such file or directory")):
        print("between")
    else:
        print(f"odd: {error}")
PY
done
grep -h '^odd' "$site.seen"
echo "$audits audits: $died died of a signal; files: $(grep -c '^whole' "$site.seen") whole," \
  "$(grep -c '^changed' "$site.seen") changed during the read, $(grep -c '^between' "$site.seen")" \
  "between, $(grep -c '^odd' "$site.seen") odd"
