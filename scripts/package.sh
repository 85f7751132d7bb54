#!/usr/bin/env bash
# Builds the Debian packages of sparkdoc: dist/sparkdoc_<version>_amd64.deb from the release
# build (build-release) and dist/sparkdoc_<version>_arm64.deb from the aarch64 cross build
# (build-arm64), configuring and building what is missing. Each holds the binary, libsparkdoc.so
# with its soname link and header, the Python wheel when scripts/build-wheel.sh exists, man
# pages and bash/zsh completions written from the command line itself (sparkdoc_docs), the docs
# and the exporter's systemd unit. Needs dpkg-deb (dpkg), gzip and, for arm64, the cross
# toolchain: scripts/install-deps.sh installs them.
#
#   scripts/package.sh              the native package, and on amd64 with the cross
#                                   toolchain the arm64 one too
#   scripts/package.sh arm64        one of them (amd64 or arm64)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
arches=("$@")
jobs=$(nproc 2>/dev/null || echo 2)

version=$(sed -n 's/^project(sparkdoc VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
abi=$(sed -n 's/^#define SPARKDOC_ABI_VERSION \([0-9]*\)$/\1/p' include/sparkdoc/sparkdoc.h)
[ -n "$version" ] && [ -n "$abi" ] || { echo "package: no version or ABI version found" >&2; exit 2; }
# The oldest glibc the binaries may need: Ubuntu 22.04's. Checked on every ELF file shipped.
glibc_floor=2.35
maintainer=${SPARKDOC_MAINTAINER:-"sparkdoc maintainers <sparkdoc@localhost>"}
date_rfc=$(date -u -R ${SOURCE_DATE_EPOCH:+-d @"$SOURCE_DATE_EPOCH"})

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p dist

if [ ${#arches[@]} -eq 0 ]; then
  arches=("$(dpkg --print-architecture)")
  if [ "${arches[0]}" = amd64 ] && command -v aarch64-linux-gnu-g++ >/dev/null; then
    arches+=(arm64)
  fi
fi

# The native release build: the native payload and the generator of man pages and completions.
cmake --preset release -G Ninja >/dev/null
cmake --build --preset release -j "$jobs" --target sparkdoc sparkdoc_abi sparkdoc_docs
build-release/src/cli/sparkdoc_docs "$work/docs"

# The newest GLIBC_x.y version an ELF file needs, from its dynamic symbol table.
glibc_needed() {
  "$1" --dyn-syms --wide "$2" | grep -Eo 'GLIBC_[0-9]+\.[0-9]+' | sed 's/GLIBC_//' |
    sort -V | tail -1
}

# The native package comes from the release build; on x86_64 the arm64 one from the cross build.
native=$(dpkg --print-architecture)
build_dir_of() {
  if [ "$1" = "$native" ]; then
    echo build-release
  elif [ "$1" = arm64 ] && [ "$native" = amd64 ]; then
    echo build-arm64
  else
    echo "package: an $1 package cannot be built on $native (only the native one, and arm64 on amd64)" >&2
    exit 2
  fi
}

for arch in "${arches[@]}"; do
  case "$arch" in
    amd64) triplet=x86_64-linux-gnu; tools=""; machine="Advanced Micro Devices X86-64"
      wheel_arch=x86_64 ;;
    arm64) triplet=aarch64-linux-gnu; tools=aarch64-linux-gnu-; machine="AArch64"
      wheel_arch=aarch64 ;;
    *) echo "package: unknown architecture '$arch' (amd64 or arm64)" >&2; exit 2 ;;
  esac
  build=$(build_dir_of "$arch")
  if [ "$build" = build-arm64 ]; then
    cmake --preset arm64 -G Ninja >/dev/null
    cmake --build --preset arm64 -j "$jobs" --target sparkdoc sparkdoc_abi
  fi
  readelf="${tools}readelf"
  stage="$work/$arch"
  lib="$stage/usr/lib/$triplet"
  doc="$stage/usr/share/doc/sparkdoc"
  mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$lib" "$stage/usr/include/sparkdoc" \
    "$stage/usr/share/man/man1" "$stage/usr/share/bash-completion/completions" \
    "$stage/usr/share/zsh/vendor-completions" "$stage/usr/lib/systemd/system" "$doc" \
    "$stage/usr/share/sparkdoc"

  install -m 0755 "$build/src/cli/sparkdoc" "$stage/usr/bin/sparkdoc"
  install -m 0644 "$build/src/load/libsparkdoc.so.$version" "$lib/libsparkdoc.so.$version"
  ln -s "libsparkdoc.so.$version" "$lib/libsparkdoc.so.$abi"
  ln -s "libsparkdoc.so.$abi" "$lib/libsparkdoc.so"
  "${tools}strip" --strip-unneeded --remove-section=.comment --remove-section=.note \
    "$stage/usr/bin/sparkdoc" "$lib/libsparkdoc.so.$version"
  install -m 0644 include/sparkdoc/sparkdoc.h "$stage/usr/include/sparkdoc/sparkdoc.h"

  # Only glibc may be needed, and no newer one than the floor.
  for elf in "$stage/usr/bin/sparkdoc" "$lib/libsparkdoc.so.$version"; do
    "$readelf" -h "$elf" | grep -q "Machine: *$machine" ||
      { echo "package: $elf is not a $arch ELF file" >&2; exit 1; }
    needed=$("$readelf" -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
    for n in $needed; do
      case "$n" in
        libc.so.6 | libm.so.6 | ld-linux-x86-64.so.2 | ld-linux-aarch64.so.1) ;;
        *) echo "package: $elf needs $n; only glibc may be needed (static runtime)" >&2; exit 1 ;;
      esac
    done
    newest=$(glibc_needed "$readelf" "$elf")
    if [ "$(printf '%s\n%s\n' "$newest" "$glibc_floor" | sort -V | tail -1)" != "$glibc_floor" ]; then
      echo "package: $elf needs glibc $newest, newer than $glibc_floor" >&2
      exit 1
    fi
  done

  for page in "$work/docs/man1/"*.1; do
    gzip -9n <"$page" >"$stage/usr/share/man/man1/$(basename "$page").gz"
  done
  install -m 0644 "$work/docs/bash-completion/sparkdoc" \
    "$stage/usr/share/bash-completion/completions/sparkdoc"
  install -m 0644 "$work/docs/zsh/_sparkdoc" "$stage/usr/share/zsh/vendor-completions/_sparkdoc"
  install -m 0644 contrib/systemd/sparkdoc-exporter.service \
    "$stage/usr/lib/systemd/system/sparkdoc-exporter.service"
  mkdir -p "$stage/usr/lib/sparkdoc" "$stage/usr/share/sparkdoc/grafana" \
    "$stage/usr/share/sparkdoc/kubernetes"
  install -m 0755 contrib/slurm/sparkdoc-health-check "$stage/usr/lib/sparkdoc/sparkdoc-health-check"
  install -m 0644 contrib/grafana/sparkdoc-dashboard.json "$stage/usr/share/sparkdoc/grafana/"
  install -m 0644 contrib/kubernetes/sparkdoc-monitor.json "$stage/usr/share/sparkdoc/kubernetes/"
  install -m 0644 README.md docs/CHECKS.md docs/LINT.md "$doc/"
  install -m 0644 contrib/debian/copyright "$doc/copyright"
  mkdir -p "$stage/usr/share/lintian/overrides"
  install -m 0644 contrib/debian/lintian-overrides "$stage/usr/share/lintian/overrides/sparkdoc"
  cat >"$work/changelog" <<EOF
sparkdoc ($version) unstable; urgency=medium

  * Release $version (commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)).

 -- $maintainer  $date_rfc
EOF
  gzip -9n <"$work/changelog" >"$doc/changelog.gz"

  if [ -x scripts/build-wheel.sh ]; then
    scripts/build-wheel.sh "$build" "$wheel_arch" >"$work/wheel-$arch.log" 2>&1 ||
      { cat "$work/wheel-$arch.log"; echo "package: the wheel did not build" >&2; exit 1; }
    cp dist/sparkdoc-"$version"-*"$wheel_arch"*.whl "$stage/usr/share/sparkdoc/"
  fi

  newest=$(for elf in "$stage/usr/bin/sparkdoc" "$lib/libsparkdoc.so.$version"; do
    glibc_needed "$readelf" "$elf"; done | sort -V | tail -1)
  size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
  cat >"$stage/DEBIAN/control" <<EOF
Package: sparkdoc
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: libc6 (>= $newest)
Suggests: python3
Section: utils
Priority: optional
Description: doctor for ML training on NVIDIA DGX Spark and NVIDIA GPU machines
 sparkdoc judges whether a machine is ready for a multi-hour fine-tuning run
 on NVIDIA DGX Spark (GB10) or any Linux machine with an NVIDIA GPU: the
 CUDA ABI of the Python environment's native code, unified-memory headroom,
 contention, containers and the recipes' set-up rules, one line per check.
 It plans memory and time before a download, watches a run with detectors
 and a Prometheus endpoint, and loads checkpoints without the page cache.
 .
 It links neither libcuda nor libnvidia-ml (they are opened at run time) and
 needs only the C library.
EOF
  echo "libsparkdoc $abi sparkdoc (>= $version)" >"$stage/DEBIAN/shlibs"
  echo "activate-noawait ldconfig" >"$stage/DEBIAN/triggers"
  (cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
  find "$stage" -type d -exec chmod 0755 {} +
  chmod 0644 "$stage/DEBIAN/"*
  out="dist/sparkdoc_${version}_${arch}.deb"
  dpkg-deb --root-owner-group -Zxz --build "$stage" "$out" >/dev/null
  echo "package: $out ($(du -h "$out" | cut -f1), needs glibc >= $newest)"
done
