"""The in-process guard of seed 000 §7: while a model loads, a thread periodically returns
PyTorch's freed-but-cached CUDA blocks to the driver (torch.cuda.empty_cache) and drops the
page cache, so that neither piles up on a unified-memory machine (seed 000: ~41 GB of cached
blocks by 80 % of a load, out of memory at ~97 % without it).

Dropping the page cache: as root, `1` into /proc/sys/vm/drop_caches (page cache only; the seed
wrote 3, which also drops dentries and inodes that a load does not need dropped); otherwise
posix_fadvise(POSIX_FADV_DONTNEED) over the files given (folders: their *.safetensors), which
needs no privilege. Files on tmpfs are never advised: there the pages are the file.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

_TMPFS = {"tmpfs", "ramfs"}


def on_tmpfs(path) -> bool:
    """Whether `path` lives on tmpfs/ramfs (by the longest matching mount in /proc/self/mounts)."""
    try:
        real = os.path.realpath(path)
        best, kind = "", ""
        with open("/proc/self/mounts") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) < 3:
                    continue
                point = fields[1].replace("\\040", " ")
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and len(point) > len(best):
                    best, kind = point, fields[2]
        return kind in _TMPFS
    except OSError:
        return False


def _expand(paths):
    files = []
    for p in paths or ():
        p = Path(p)
        if p.is_dir():
            files.extend(sorted(p.glob("*.safetensors")))
        elif p.exists():
            files.append(p)
    return [f for f in files if not on_tmpfs(f)]


class Guard:
    """The running guard; its counters say what it did."""

    def __init__(self, interval, paths, empty_cache, drop_page_cache, log):
        self.interval = interval
        self.files = _expand(paths)
        self.empty_cache = empty_cache
        self.drop_page_cache = drop_page_cache
        self.log = log
        self.rounds = 0
        self.cuda_bytes_returned = 0
        self.drops = 0
        self.errors = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sparkdoc-guard", daemon=True)

    def _drop(self):
        if os.geteuid() == 0:
            try:
                with open("/proc/sys/vm/drop_caches", "w") as f:
                    f.write("1\n")
                self.drops += 1
                return
            except OSError as e:  # read-only /proc/sys in a container: fall back to advice
                self.errors.append(f"drop_caches: {e}")
        for path in self.files:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)
                self.drops += 1
            except OSError as e:
                self.errors.append(f"{path}: {e}")

    def _empty_cache(self):
        import torch

        if not torch.cuda.is_available() or not torch.cuda.is_initialized():
            return
        before = torch.cuda.memory_reserved()
        torch.cuda.empty_cache()
        returned = before - torch.cuda.memory_reserved()
        self.cuda_bytes_returned += max(returned, 0)
        if self.log is not None:
            self.log(f"[sparkdoc guard] returned {returned / 1e9:+.2f} GB of cached CUDA blocks; "
                     f"allocated {torch.cuda.memory_allocated() / 1e9:.2f} GB")

    def round(self):
        """One pass: what the thread does every `interval` seconds."""
        self.rounds += 1
        if self.drop_page_cache:
            self._drop()
        if self.empty_cache:
            try:
                self._empty_cache()
            except Exception as e:  # a guard never breaks the load it protects
                self.errors.append(f"empty_cache: {e}")

    def _loop(self):
        while not self._stop.wait(self.interval):
            self.round()


@contextlib.contextmanager
def memory_guard(interval: float = 5.0, paths=(), *, empty_cache: bool = True,
                 drop_page_cache: bool = True, log=None):
    """Runs the guard while the block runs, then one last round. `paths`: the checkpoint's
    files or folders, for the unprivileged page-cache drop. `log`: a callable for one line per
    round (print, logging.info), or None."""
    guard = Guard(interval, paths, empty_cache, drop_page_cache, log)
    guard._thread.start()
    try:
        yield guard
    finally:
        guard._stop.set()
        guard._thread.join()
        guard.round()
