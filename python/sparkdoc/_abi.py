"""libsparkdoc.so through ctypes: the one place that declares every C function's signature.

The library is found, in order: libsparkdoc.so beside this package (what the wheel carries);
the path in SPARKDOC_LIBRARY; the build folders of a source checkout (build-release/, build/);
the dynamic linker's search path. As soon as it is loaded, its ABI version and its version are
checked against this package's: a library from another build is refused, never half used.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

from ._version import __version__

ABI_VERSION = 1

# Status codes of include/sparkdoc/sparkdoc.h (append-only there, append-only here).
OK = 0
INVALID_ARGUMENT = 1
NOT_FOUND = 2
IO_ERROR = 3
BAD_CHECKPOINT = 4
NO_CUDA = 5
CUDA_ERROR = 6
OUT_OF_MEMORY = 7
PERMISSION = 8
INTERNAL = 9


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("shape", ctypes.POINTER(ctypes.c_uint64)),
        ("rank", ctypes.c_uint32),
        ("file_index", ctypes.c_uint32),
        ("nbytes", ctypes.c_uint64),
        ("file_offset", ctypes.c_uint64),
    ]


class LoaderOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("reader_threads", ctypes.c_uint32),
        ("slots_per_reader", ctypes.c_uint32),
        ("direct_io", ctypes.c_uint32),
        ("chunk_bytes", ctypes.c_uint64),
        ("keep_page_cache", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
    ]


class LoadStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("reader_threads", ctypes.c_uint32),
        ("bytes", ctypes.c_uint64),
        ("bytes_read", ctypes.c_uint64),
        ("seconds", ctypes.c_double),
        ("gb_per_s", ctypes.c_double),
        ("rss_before_bytes", ctypes.c_uint64),
        ("peak_rss_bytes", ctypes.c_uint64),
        ("page_cache_growth_bytes", ctypes.c_int64),
        ("page_cache_peak_growth_bytes", ctypes.c_int64),
        ("files_direct", ctypes.c_uint32),
        ("files_buffered", ctypes.c_uint32),
    ]


_vp = ctypes.c_void_p
_int = ctypes.c_int
_size = ctypes.c_size_t
_p = ctypes.POINTER

# name -> (restype, argtypes). A test checks this set against the header's.
FUNCTIONS = {
    "sparkdoc_abi_version": (ctypes.c_uint32, []),
    "sparkdoc_version": (ctypes.c_char_p, []),
    "sparkdoc_last_error": (ctypes.c_char_p, []),
    "sparkdoc_status_name": (ctypes.c_char_p, [_int]),
    "sparkdoc_checkpoint_open": (_int, [ctypes.c_char_p, _p(_vp)]),
    "sparkdoc_checkpoint_close": (None, [_vp]),
    "sparkdoc_checkpoint_file_count": (_int, [_vp, _p(_size)]),
    "sparkdoc_checkpoint_file": (_int, [_vp, _size, _p(ctypes.c_char_p)]),
    "sparkdoc_checkpoint_tensor_count": (_int, [_vp, _p(_size)]),
    "sparkdoc_checkpoint_tensor": (_int, [_vp, _size, _p(TensorInfo)]),
    "sparkdoc_checkpoint_find": (_int, [_vp, ctypes.c_char_p, _p(_size)]),
    "sparkdoc_loader_create": (_int, [_int, _p(LoaderOptions), _p(_vp)]),
    "sparkdoc_loader_destroy": (None, [_vp]),
    "sparkdoc_load": (_int, [_vp, _vp, _size, _p(_size), _p(ctypes.c_uint64), _p(LoadStats)]),
}


class SparkdocError(Exception):
    """A failed sparkdoc call: `status` is the C status code, the message names file and tensor."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class CheckpointError(SparkdocError, ValueError):
    """The safetensors header or index is invalid."""


class CheckpointNotFoundError(SparkdocError, FileNotFoundError):
    """A file, folder or tensor does not exist."""


class CheckpointReadError(SparkdocError, OSError):
    """A read failed or a file ended early."""


class CheckpointPermissionError(SparkdocError, PermissionError):
    """The file or device may not be accessed."""


class CudaError(SparkdocError, RuntimeError):
    """A CUDA driver call failed."""


class NoCudaError(CudaError):
    """No usable libcuda, or no such GPU."""


class OutOfMemoryError(SparkdocError, MemoryError):
    """Host or device memory could not be allocated."""


_EXCEPTIONS = {
    INVALID_ARGUMENT: lambda s, m: SparkdocError(s, m),
    NOT_FOUND: CheckpointNotFoundError,
    IO_ERROR: CheckpointReadError,
    BAD_CHECKPOINT: CheckpointError,
    NO_CUDA: NoCudaError,
    CUDA_ERROR: CudaError,
    OUT_OF_MEMORY: OutOfMemoryError,
    PERMISSION: CheckpointPermissionError,
}

_lock = threading.Lock()
_lib = None
_path = None


def _candidates(here: Path | None = None, environ=None):
    """Where the library is looked for, in order (see the module's docstring)."""
    here = here or Path(__file__).resolve().parent
    environ = os.environ if environ is None else environ
    yield str(here / "libsparkdoc.so")
    explicit = environ.get("SPARKDOC_LIBRARY")
    if explicit:
        yield explicit
    root = here.parent.parent
    for build in ("build-release", "build"):
        yield str(root / build / "src" / "load" / "libsparkdoc.so")
    yield "libsparkdoc.so"


def _refusal(candidate: str, lib) -> str | None:
    """Why a loaded library may not be used, or None."""
    abi = lib.sparkdoc_abi_version()
    version = (lib.sparkdoc_version() or b"").decode("utf-8", "replace")
    if abi != ABI_VERSION or version != __version__:
        return (f"{candidate} is sparkdoc {version} (ABI {abi}), this Python package is sparkdoc "
                f"{__version__} (ABI {ABI_VERSION}): install the wheel of one build "
                "(scripts/build-wheel.sh BUILD_DIR), or point SPARKDOC_LIBRARY at the "
                "libsparkdoc.so built from the same source")
    return None


def library():
    """The loaded library, loading it on first use. Raises OSError when none is found, or when
    the one found is of another version."""
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for candidate in _candidates():
            if os.sep in candidate and not os.path.exists(candidate):
                tried.append(f"{candidate}: no such file")
                continue
            try:
                lib = ctypes.CDLL(candidate)
            except OSError as e:
                tried.append(f"{candidate}: {e}")
                continue
            missing = [name for name in FUNCTIONS if not hasattr(lib, name)]
            if missing:
                raise OSError(f"{candidate} lacks {', '.join(missing)}: it is not a libsparkdoc.so "
                              f"of this version ({__version__}); install the wheel of one build")
            for name, (restype, argtypes) in FUNCTIONS.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
            refusal = _refusal(candidate, lib)
            if refusal:
                raise OSError(refusal)
            _lib = lib
            _path = candidate
            return lib
        raise OSError("libsparkdoc.so not found (install the sparkdoc wheel, or set "
                      "SPARKDOC_LIBRARY to its path): " + "; ".join(tried))


def library_path() -> str:
    """The path (or the name the dynamic linker resolved) of the library in use, loading it."""
    library()
    return _path


def check(status: int) -> None:
    """Raises the exception for a non-zero status, with the library's message."""
    if status == OK:
        return
    lib = library()
    message = (lib.sparkdoc_last_error() or b"").decode("utf-8", "replace")
    name = (lib.sparkdoc_status_name(status) or b"").decode()
    make = _EXCEPTIONS.get(status, lambda s, m: SparkdocError(s, m))
    raise make(status, message or name)
