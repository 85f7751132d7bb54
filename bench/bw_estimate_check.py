#!/usr/bin/env python3
"""How true `sparkdoc bw`'s "about N s left" is: runs it on a pseudo-terminal (its progress line
is drawn only on one), stamps every progress line with the time it arrived, and prints, for
each estimate, what it said against the time the run then really had left.

    python3 bench/bw_estimate_check.py build-release/src/cli/sparkdoc [bw options...]
"""
import os
import pty
import re
import sys
import time

LEFT = re.compile(rb"sparkdoc bw: ([a-zA-Z0-9 ]+?) (\d+)/(\d+)(?:, (about (\d+) (s|min) left|under a second left))?")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    argv = [sys.argv[1], "bw"] + sys.argv[2:]
    start = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    seen = []  # (t, phase, done, total, said_s or None)
    buf = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        now = time.monotonic() - start
        buf += chunk
        parts = re.split(rb"[\r\n]", buf)
        buf = parts.pop()
        for part in parts:
            m = LEFT.search(part)
            if not m:
                continue
            said = None
            if m.group(4):
                if m.group(4).startswith(b"under"):
                    said = 0.5
                else:
                    said = float(m.group(5)) * (60 if m.group(6) == b"min" else 1)
            seen.append((now, m.group(1).decode(), int(m.group(2)), int(m.group(3)), said))
    _, status = os.waitpid(pid, 0)
    end = time.monotonic() - start
    print(f"sparkdoc bw ran {end:.1f} s (exit {os.waitstatus_to_exitcode(status)}), "
          f"{len(seen)} progress lines")
    print(f"{'at':>7} {'part':<12} {'runs':>7} {'said left':>10} {'really left':>12} {'error':>7}")
    shown = set()
    for t, phase, done, total, said in seen:
        key = (phase, done)
        if said is None or key in shown:
            continue
        shown.add(key)
        # The run's own end: the last progress line, not the process's exit (the closing
        # verdict is printed after the measuring).
        real = seen[-1][0] - t
        err = "" if real < 1 else f"{100 * (said - real) / real:+.0f}%"
        print(f"{t:7.1f} {phase:<12} {done:>3}/{total:<3} {said:>9.0f}s {real:>11.1f}s {err:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
