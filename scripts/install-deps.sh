#!/usr/bin/env bash
# Installs what sparkdoc builds and tests with, from the distribution's packages only
# (Debian 12 / Ubuntu 24.04). Safe to run again. libcurl4-openssl-dev gives libcurl's header
# (sparkdoc loads libcurl.so.4 with dlopen and never links it) and the library the Hub tests use.
# libzstd-dev: the audit decompresses the few cubins it reads whole (elf/payload.h).
# python3-build, -setuptools and -wheel build the Python wheel offline (scripts/build-wheel.sh);
# python3-venv gives the fresh environment scripts/test-python.sh installs it into.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libcli11-dev nlohmann-json3-dev libfmt-dev libelf-dev libexpected-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-dev
  zlib1g-dev libzstd-dev
  libcurl4-openssl-dev
  python3-build python3-setuptools python3-wheel python3-venv
)
# Headless Chromium renders the HTML report in report_screenshot_test (which skips without it).
# Only where the distribution's archive has a real package: Debian's chromium; Ubuntu's
# chromium-browser is a snap wrapper that does not install in a container.
chromium_policy="$(apt-cache policy chromium 2>/dev/null || true)"
if [[ "$chromium_policy" == *"Candidate: "[0-9]* ]]; then
  packages+=(chromium)
else
  echo "install-deps: no chromium package here; the HTML screenshot test will skip"
fi
# The packages (scripts/package.sh, scripts/test-package.sh): lintian, man pages, ps.
packages+=(lintian man-db procps zsh)
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
# The aarch64 build every DGX Spark runs: Debian's cross toolchain, the arm64 -dev packages
# through multiarch and qemu-user-static for its tests. Debian's archive carries arm64 beside
# amd64; Ubuntu's does not (its arm64 packages are on ports.ubuntu.com), so there the aarch64
# build is left out and scripts/test-all.sh says so.
. /etc/os-release
if [ "$(dpkg --print-architecture)" = amd64 ] && [ "${ID:-}" = debian ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
    added_arm64=1
  fi
  packages+=(crossbuild-essential-arm64 qemu-user-static
    libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64 libfmt-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64
    libcurl4-openssl-dev:arm64)
else
  echo "install-deps: no arm64 cross build here (it needs Debian's archive on amd64)"
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ] && [ -z "${added_arm64:-}" ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
