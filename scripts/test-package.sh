#!/usr/bin/env bash
# Tests the Debian packages scripts/package.sh builds (run it first):
#  - both .deb files hold what they should (dpkg-deb -I / -c), and lintian has nothing to say
#    beyond the overrides the package carries (docs/PACKAGING.md justifies each);
#  - the arm64 binary is an aarch64 ELF that needs only glibc, and under qemu-aarch64-static it
#    judges a GB10 fixture snapshot exactly as the x86_64 binary does;
#  - the amd64 package installs with dpkg -i, `sparkdoc check`, `man sparkdoc` and the bash
#    completion work, and dpkg -r removes every file (as root under CI=true; elsewhere the
#    package is unpacked into a temporary folder instead, and nothing is installed);
#  - the exporter unit's ExecStart line, run as an unprivileged user, serves /metrics on
#    127.0.0.1 (systemd does not run in CI's container; systemd-analyze verifies the unit).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^project(sparkdoc VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
amd64=dist/sparkdoc_${version}_amd64.deb
arm64=dist/sparkdoc_${version}_arm64.deb
work=$(mktemp -d)
exporter=""
cleanup() {
  [ -n "$exporter" ] && kill "$exporter" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "test-package: $*" >&2; exit 1; }
arches=(amd64 arm64)
if [ -n "${SPARKDOC_PACKAGE_ARCHES:-}" ]; then
  read -r -a arches <<<"$SPARKDOC_PACKAGE_ARCHES"  # e.g. "amd64": test only these
elif ! command -v aarch64-linux-gnu-readelf >/dev/null; then
  arches=(amd64)
  echo "test-package: no aarch64 cross toolchain here; only the amd64 package is tested"
fi
for arch in "${arches[@]}"; do
  deb=dist/sparkdoc_${version}_${arch}.deb
  [ -f "$deb" ] || fail "$deb is missing (scripts/package.sh)"
done

# Contents and control fields.
for arch in "${arches[@]}"; do
  deb=dist/sparkdoc_${version}_${arch}.deb
  triplet=$([ "$arch" = amd64 ] && echo x86_64-linux-gnu || echo aarch64-linux-gnu)
  info=$(dpkg-deb -I "$deb")
  grep -q "^ Architecture: $arch$" <<<"$info" || fail "$deb: not Architecture: $arch"
  grep -Eq "^ Depends: libc6 \(>= 2\.(2[0-9]|3[0-5])\)$" <<<"$info" ||
    fail "$deb: Depends is not glibc alone, or needs more than glibc 2.35: $(grep Depends <<<"$info")"
  dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$work/$arch.list"
  for path in /usr/bin/sparkdoc "/usr/lib/$triplet/libsparkdoc.so.$version" \
    "/usr/lib/$triplet/libsparkdoc.so.1" "/usr/lib/$triplet/libsparkdoc.so" \
    /usr/include/sparkdoc/sparkdoc.h /usr/share/man/man1/sparkdoc.1.gz \
    /usr/share/man/man1/sparkdoc-check.1.gz /usr/share/man/man1/sparkdoc-watch.1.gz \
    /usr/share/bash-completion/completions/sparkdoc /usr/share/zsh/vendor-completions/_sparkdoc \
    /usr/lib/systemd/system/sparkdoc-exporter.service /usr/share/doc/sparkdoc/copyright \
    /usr/share/doc/sparkdoc/CHECKS.md /usr/share/doc/sparkdoc/changelog.gz \
    /usr/lib/sparkdoc/sparkdoc-health-check /usr/share/sparkdoc/grafana/sparkdoc-dashboard.json \
    /usr/share/sparkdoc/kubernetes/sparkdoc-monitor.json; do
    grep -qx "$path" "$work/$arch.list" || fail "$deb does not hold $path"
  done
  if [ -x scripts/build-wheel.sh ]; then
    grep -Eq "^/usr/share/sparkdoc/sparkdoc-$version-.*\.whl$" "$work/$arch.list" ||
      fail "$deb does not hold the Python wheel"
  fi
  echo "test-package: $deb: $(wc -l <"$work/$arch.list") entries, $(grep Depends <<<"$info" | xargs)"
done

if command -v lintian >/dev/null; then
  for arch in "${arches[@]}"; do
    deb=dist/sparkdoc_${version}_${arch}.deb
    # Tags the package overrides are shown as "N:" lines with --show-overrides only.
    lintian --tag-display-limit 0 --fail-on error,warning "$deb" >"$work/lintian.log" 2>&1 ||
      { cat "$work/lintian.log"; fail "lintian finds fault with $deb"; }
    echo "test-package: lintian: $deb clean ($(grep -c . "$work/lintian.log" || true) lines)"
  done
else
  echo "test-package: lintian not installed; not run"
fi

mkdir -p "$work/arm64" "$work/amd64"
dpkg-deb -x "$amd64" "$work/amd64"
# The arm64 binary: an aarch64 ELF needing only glibc, judging as the x86_64 one does.
if [ ${#arches[@]} -eq 2 ]; then
  dpkg-deb -x "$arm64" "$work/arm64"
  arm_bin=$work/arm64/usr/bin/sparkdoc
  aarch64-linux-gnu-readelf -h "$arm_bin" | grep -q "Machine: *AArch64" || fail "arm64 binary is not aarch64"
  needed=$(aarch64-linux-gnu-readelf -d "$arm_bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | xargs)
  [ "$needed" = "ld-linux-aarch64.so.1 libc.so.6 libm.so.6" ] || [ "$needed" = "ld-linux-aarch64.so.1 libc.so.6" ] ||
    fail "arm64 binary needs $needed"
  echo "test-package: arm64 binary needs only: $needed"
  qemu=(qemu-aarch64-static -L /usr/aarch64-linux-gnu)
  judged=0
  for snapshot in tests/fixtures/snapshots/*.json; do
    case "$snapshot" in *.workload.json) continue ;; esac
    for format in "" "--json"; do
      # shellcheck disable=SC2086
      "${qemu[@]}" "$arm_bin" check --snapshot "$snapshot" $format >"$work/arm.out" 2>&1 || true
      # shellcheck disable=SC2086
      "$work/amd64/usr/bin/sparkdoc" check --snapshot "$snapshot" $format >"$work/x86.out" 2>&1 || true
      cmp -s "$work/arm.out" "$work/x86.out" ||
        { diff "$work/x86.out" "$work/arm.out" | head -20; fail "aarch64 judges $snapshot otherwise"; }
    done
    judged=$((judged + 1))
  done
  [ -f tests/fixtures/snapshots/gb10-healthy-ngc.json ] || fail "the GB10 fixture snapshot is missing"
  echo "test-package: aarch64 binary under qemu judges $judged fixture snapshots (GB10 among them) as the x86_64 one"
fi

# Install, use, remove (root under CI), or use the unpacked tree.
if [ ! -f "$amd64" ]; then
  echo "test-package: no amd64 package; installing it was not tested"
  exit 0
fi
if [ "${CI:-}" = true ] && [ "$(id -u)" -eq 0 ]; then
  # Container images often exclude /usr/share/man and docs from dpkg; the test wants them.
  include=(--path-include='/usr/share/man/*' --path-include='/usr/share/doc/sparkdoc/*')
  dpkg "${include[@]}" -i "$amd64" >/dev/null
  bin=/usr/bin/sparkdoc
  status=0
  "$bin" check >"$work/check.out" 2>&1 || status=$?
  [ "$status" -le 1 ] || { cat "$work/check.out"; fail "installed sparkdoc check exited $status"; }
  # man justifies lines: spaces are squeezed before the text is looked for.
  man -P cat sparkdoc 2>&1 | tr -s ' ' | grep -q "sparkdoc - a doctor for ML training" ||
    fail "man sparkdoc fails"
  man -P cat sparkdoc-plan 2>&1 | grep -q -- "--seq" || fail "man sparkdoc-plan has no --seq"
  bash -c 'source /usr/share/bash-completion/completions/sparkdoc && COMP_WORDS=(sparkdoc pl) &&
    COMP_CWORD=1 && _sparkdoc && [ "${COMPREPLY[*]}" = plan ]' || fail "bash completion fails"
  if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify /usr/lib/systemd/system/sparkdoc-exporter.service >"$work/verify.log" 2>&1 ||
      { cat "$work/verify.log"; fail "systemd-analyze verify rejects the exporter unit"; }
  fi
  echo "test-package: dpkg -i: check exit $status, man pages, completion and unit verified"
else
  bin=$work/amd64/usr/bin/sparkdoc
  man -l -P cat "$work/amd64/usr/share/man/man1/sparkdoc.1.gz" 2>&1 | tr -s ' ' |
    grep -q "sparkdoc - a doctor for ML training" || fail "the man page does not render"
  echo "test-package: not root under CI: the package was unpacked, not installed"
fi

# The exporter, as its unit starts it, as an unprivileged user.
unit=contrib/systemd/sparkdoc-exporter.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[ "${exec_start%% *}" = /usr/bin/sparkdoc ] || fail "ExecStart does not start /usr/bin/sparkdoc"
args=${exec_start#/usr/bin/sparkdoc }
# GET /metrics from 127.0.0.1:9400 through bash's /dev/tcp; fails when nothing listens.
get_metrics() {
  bash -c 'exec 3<>/dev/tcp/127.0.0.1/9400 &&
    printf "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3 && cat <&3' 2>/dev/null
}
if get_metrics >/dev/null; then
  echo "test-package: 127.0.0.1:9400 is in use here; the exporter was not started"
else
  run_as=()
  if [ "$(id -u)" -eq 0 ]; then
    run_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs)
  fi
  # shellcheck disable=SC2086
  (cd / && exec "${run_as[@]}" "$bin" $args) >"$work/exporter.log" 2>&1 &
  exporter=$!
  metrics=""
  # Until it listens (its first sample is taken before the socket opens): at most 10 s.
  for _ in $(seq 1 100); do
    metrics=$(get_metrics) && break
    sleep 0.1
  done
  user=$(ps -o user= -p "$exporter" | xargs)
  kill "$exporter" 2>/dev/null || true
  wait "$exporter" 2>/dev/null || true
  exporter=""
  grep -q "^HTTP/1\.[01] 200" <<<"$metrics" || { cat "$work/exporter.log"; fail "no /metrics from: $exec_start"; }
  grep -q "^sparkdoc_" <<<"$metrics" || fail "/metrics has no sparkdoc_ metric"
  echo "test-package: '$exec_start' as $user serves /metrics ($(grep -c '^[a-z]' <<<"$metrics") samples)"
fi

if [ "${CI:-}" = true ] && [ "$(id -u)" -eq 0 ]; then
  dpkg -L sparkdoc | sort >"$work/installed.list"
  dpkg -r sparkdoc >/dev/null
  dpkg-query -W -f='${Status}' sparkdoc 2>/dev/null | grep -q "install ok installed" &&
    fail "dpkg -r left sparkdoc installed"
  left=""
  while read -r path; do
    [ -f "$path" ] || [ -L "$path" ] && left+=" $path"
  done <"$work/installed.list"
  [ -z "$left" ] || fail "dpkg -r left files:$left"
  echo "test-package: dpkg -r removed every file"
fi
echo "test-package: all package tests passed"
