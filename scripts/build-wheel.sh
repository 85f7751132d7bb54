#!/usr/bin/env bash
# Builds the sparkdoc wheel from a CMake build folder, offline, with the distribution's build
# tools (python3-build, python3-setuptools, python3-wheel: scripts/install-deps.sh), as
# `python3 -m build --wheel --no-isolation` (Debian 12's build 0.9 spells --no-build-isolation
# so):
#
#   scripts/build-wheel.sh BUILD_DIR [ARCH]    ARCH x86_64 or aarch64, default this machine's
#
# writes dist/sparkdoc-<version>-py3-none-<platform>.whl carrying BUILD_DIR's libsparkdoc.so
# (target sparkdoc_abi) and sparkdoc binary (target sparkdoc). The platform tag comes from the
# ELF files themselves (scripts/wheel_platform.py): a file of another architecture than ARCH is
# refused, so a cross build is wheeled with its ARCH and a wrong folder is caught. The build
# runs in a staging copy; the source tree is left as it was.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  echo "usage: scripts/build-wheel.sh BUILD_DIR [ARCH]   (ARCH: x86_64 or aarch64)" >&2
  exit 2
fi
build="$(cd "$1" 2>/dev/null && pwd)" || { echo "build-wheel: no folder $1" >&2; exit 2; }
arch="${2:-$(uname -m)}"
case "$arch" in
  x86_64 | aarch64) ;;
  amd64) arch=x86_64 ;;
  arm64) arch=aarch64 ;;
  *) echo "build-wheel: ARCH is x86_64 or aarch64, not $arch" >&2; exit 2 ;;
esac
library="$build/src/load/libsparkdoc.so"
binary="$build/src/cli/sparkdoc"
for f in "$library" "$binary"; do
  if [ ! -f "$f" ]; then
    echo "build-wheel: $f is missing; build it first:" \
      "cmake --build $1 --target sparkdoc sparkdoc_abi" >&2
    exit 1
  fi
done
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! "$python" -c "import build, setuptools, wheel" 2>/dev/null; then
  echo "build-wheel: $python lacks build, setuptools or wheel; run scripts/install-deps.sh" \
    "(python3-build python3-setuptools python3-wheel)" >&2
  exit 1
fi

# The version of the build must be the package's: the library refuses to be loaded otherwise.
version="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$root/python/sparkdoc/_version.py")"
built="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt" 2>/dev/null || true)"
if [ -n "$built" ] && [ "$built" != "$version" ]; then
  echo "build-wheel: $build is sparkdoc $built, python/sparkdoc/_version.py says $version;" \
    "build from this checkout" >&2
  exit 1
fi

platform="$("$python" "$root/scripts/wheel_platform.py" "$arch" "$library" "$binary")"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp -r "$root/python/pyproject.toml" "$root/python/setup.py" "$root/python/sparkdoc" "$stage/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
mkdir -p "$stage/sparkdoc/bin"
install -m 0755 "$library" "$stage/sparkdoc/libsparkdoc.so"
install -m 0755 "$binary" "$stage/sparkdoc/bin/sparkdoc"

mkdir -p "$root/dist"
wheel="sparkdoc-$version-py3-none-$platform.whl"
rm -f "$root/dist/$wheel"
(cd "$stage" && SPARKDOC_WHEEL_PLATFORM="$platform" "$python" -m build --wheel \
  --no-isolation --outdir "$root/dist" . >"$stage/build.log" 2>&1) ||
  { cat "$stage/build.log" >&2; echo "build-wheel: the wheel did not build" >&2; exit 1; }
if [ ! -f "$root/dist/$wheel" ]; then
  cat "$stage/build.log" >&2
  echo "build-wheel: expected dist/$wheel, the build wrote: $(ls "$root/dist")" >&2
  exit 1
fi
echo "dist/$wheel ($(du -k "$root/dist/$wheel" | cut -f1) KiB)"
