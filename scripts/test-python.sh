#!/usr/bin/env bash
# The Python package as a user gets it: the wheel built from the release build
# (scripts/build-wheel.sh build-release), installed offline into a fresh venv (python3-venv),
# then, from outside the source tree and without SPARKDOC_LIBRARY: `import sparkdoc` loads the
# wheel's own libsparkdoc.so, `python -m sparkdoc` runs the wheel's binary with the arguments and
# exit status it is given, and the unit tests of the package and of the recipes' fixes pass
# against the installed copy (stand-in objects: no torch, no GPU). Needs build-release's
# sparkdoc and sparkdoc_abi targets; scripts/test-all.sh builds them first.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
started=$SECONDS
python=/usr/bin/python3
[ -x "$python" ] || python=python3

for f in build-release/src/load/libsparkdoc.so build-release/src/cli/sparkdoc; do
  [ -f "$f" ] || {
    echo "test-python: no $f; build it: cmake --preset release -G Ninja &&" \
      "cmake --build --preset release --target sparkdoc sparkdoc_abi" >&2
    exit 1
  }
done
wheel_line="$(scripts/build-wheel.sh build-release)"
echo "$wheel_line"
wheel="$root/${wheel_line%% *}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$work/venv/bin/python" -m pip install --quiet --no-index \
  --no-deps "$wheel"
py="$work/venv/bin/python"
unset SPARKDOC_LIBRARY PYTHONPATH
cd "$work"

# The library in use is the wheel's, of the package's version.
"$py" - <<'PY'
import sparkdoc
path = sparkdoc.library_path()
assert "/site-packages/sparkdoc/" in path, f"loaded {path}, not the wheel's library"
version = sparkdoc.library().sparkdoc_version().decode()
assert version == sparkdoc.__version__, (version, sparkdoc.__version__)
print(f"import sparkdoc: {sparkdoc.__version__}, {path}")
PY

version_line="$("$py" -m sparkdoc --version | head -1)"
direct_line="$("$root/build-release/src/cli/sparkdoc" --version | head -1)"
[ "$version_line" = "$direct_line" ] || {
  echo "test-python: python -m sparkdoc --version says '$version_line'," \
    "the binary '$direct_line'" >&2
  exit 1
}
echo "python -m sparkdoc --version: $version_line"
# The exit status is the binary's: 2 for a usage error.
rc=0
"$py" -m sparkdoc --no-such-option >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || { echo "test-python: python -m sparkdoc --no-such-option exited $rc, not 2" >&2; exit 1; }
snapshot="$root/tests/fixtures/snapshots/gb10-bare-pip-cu12.json"  # a FAIL: exit 1, not 0
"$py" -m sparkdoc check --snapshot "$snapshot" >"$work/module.out" 2>&1 && m=0 || m=$?
"$root/build-release/src/cli/sparkdoc" check --snapshot "$snapshot" >"$work/direct.out" 2>&1 && d=0 || d=$?
if [ "$m" -ne "$d" ] || ! cmp -s "$work/module.out" "$work/direct.out"; then
  echo "test-python: python -m sparkdoc check --snapshot $snapshot differs from the binary's" \
    "(exit $m, $d)" >&2
  exit 1
fi
echo "python -m sparkdoc check --snapshot $(basename "$snapshot"): exit $m, as the binary"

# The unit tests against the installed package: tests/python has no sparkdoc/ of its own, so
# `import sparkdoc` there is the venv's.
if ! (cd "$root/tests/python" &&
  "$py" -c "import sparkdoc, sys; sys.exit('/site-packages/' not in sparkdoc.__file__)" &&
  SPARKDOC_SOURCE="$root" PYTHONDONTWRITEBYTECODE=1 "$py" -m unittest test_package test_fixes \
    >"$work/unit.log" 2>&1); then
  cat "$work/unit.log"
  echo "test-python: the unit tests failed against the installed package" >&2
  exit 1
fi
echo "unit tests of the installed package: $(grep -Eo '^Ran [0-9]+ tests' "$work/unit.log")"
echo "test-python: $((SECONDS - started)) s"
