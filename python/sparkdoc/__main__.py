"""`python -m sparkdoc ARGS` runs the sparkdoc binary with ARGS and its exit status.

The binary is the one the wheel carries (sparkdoc/bin/sparkdoc); in a source checkout without
one, a release build's (build-release/src/cli/sparkdoc), else `sparkdoc` on PATH."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def candidates(package_dir: Path):
    yield package_dir / "bin" / "sparkdoc"
    yield package_dir.parent.parent / "build-release" / "src" / "cli" / "sparkdoc"
    found = shutil.which("sparkdoc")
    if found:
        yield Path(found)


def binary(package_dir: Path | None = None) -> Path | None:
    """The sparkdoc executable to run, or None."""
    package_dir = package_dir or Path(__file__).resolve().parent
    for path in candidates(package_dir):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path = binary()
    if path is None:
        print("sparkdoc: no sparkdoc binary in this package, in a release build or on PATH; "
              "install the wheel that scripts/build-wheel.sh writes, or build with "
              "`cmake --preset release -G Ninja && cmake --build --preset release`",
              file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    # exec, not a child: the exit status, signals and the terminal are the binary's own.
    os.execv(str(path), ["sparkdoc", *argv])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())
