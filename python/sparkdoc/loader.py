"""Checkpoints and loaders over the C ABI, and torch-facing loading functions.

torch allocates every destination (torch.empty on the target device, so its caching allocator
owns and accounts the memory) and sparkdoc fills it through data_ptr(): the file is read with
pread into a fixed ring of pinned buffers and copied asynchronously; it is never mapped, and
buffered reads are dropped from the page cache behind the reader.
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass

from . import _abi

# safetensors dtype -> torch dtype attribute name. F4 packs two values per byte; torch's
# float4_e2m1fn_x2 is that pair, so the last dimension halves (as safetensors does).
_TORCH_DTYPES = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "I16": "int16",
    "U16": "uint16",
    "F16": "float16",
    "BF16": "bfloat16",
    "I32": "int32",
    "U32": "uint32",
    "F32": "float32",
    "C64": "complex64",
    "F64": "float64",
    "I64": "int64",
    "U64": "uint64",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
    "F8_E8M0": "float8_e8m0fnu",
    "F8_E4M3FNUZ": "float8_e4m3fnuz",
    "F8_E5M2FNUZ": "float8_e5m2fnuz",
    "F4": "float4_e2m1fn_x2",
}


@dataclass(frozen=True)
class Tensor:
    """One tensor of a checkpoint, as its header describes it."""

    index: int
    name: str
    dtype: str  # the safetensors name, "BF16"
    shape: tuple
    nbytes: int
    file_index: int
    file_offset: int


class Checkpoint:
    """A .safetensors file, an index, a model folder or a Hugging Face cache entry, headers
    read and validated. Holds no file open; close() (or `with`) frees the parsed headers."""

    def __init__(self, path):
        lib = _abi.library()
        handle = ctypes.c_void_p()
        _abi.check(lib.sparkdoc_checkpoint_open(os.fsencode(path), ctypes.byref(handle)))
        self._handle = handle
        self.path = os.fspath(path)
        count = ctypes.c_size_t()
        _abi.check(lib.sparkdoc_checkpoint_file_count(handle, ctypes.byref(count)))
        self.files = []
        for i in range(count.value):
            p = ctypes.c_char_p()
            _abi.check(lib.sparkdoc_checkpoint_file(handle, i, ctypes.byref(p)))
            self.files.append(os.fsdecode(p.value))
        _abi.check(lib.sparkdoc_checkpoint_tensor_count(handle, ctypes.byref(count)))
        self.tensors = []
        info = _abi.TensorInfo()
        for i in range(count.value):
            _abi.check(lib.sparkdoc_checkpoint_tensor(handle, i, ctypes.byref(info)))
            self.tensors.append(
                Tensor(
                    index=i,
                    name=info.name.decode("utf-8"),
                    dtype=info.dtype.decode(),
                    shape=tuple(info.shape[d] for d in range(info.rank)),
                    nbytes=info.nbytes,
                    file_index=info.file_index,
                    file_offset=info.file_offset,
                )
            )
        self.by_name = {t.name: t for t in self.tensors}

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("checkpoint is closed")
        return self._handle

    def close(self):
        if self._handle is not None:
            _abi.library().sparkdoc_checkpoint_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def nbytes(self):
        return sum(t.nbytes for t in self.tensors)


def _options(reader_threads=0, chunk_bytes=0, slots_per_reader=0, direct_io="auto",
             keep_page_cache=False):
    o = _abi.LoaderOptions()
    o.struct_size = ctypes.sizeof(o)
    o.reader_threads = reader_threads
    o.chunk_bytes = chunk_bytes
    o.slots_per_reader = slots_per_reader
    o.direct_io = {"auto": 0, "off": 1, "on": 2}[direct_io]
    o.keep_page_cache = 1 if keep_page_cache else 0
    return o


class Loader:
    """One GPU's loader: its primary context (PyTorch's) and a pinned staging ring allocated
    once. Thread-safe: concurrent load() calls take turns."""

    def __init__(self, device: int = 0, **options):
        lib = _abi.library()
        handle = ctypes.c_void_p()
        o = _options(**options)
        _abi.check(lib.sparkdoc_loader_create(int(device), ctypes.byref(o), ctypes.byref(handle)))
        self._handle = handle
        self.device = int(device)

    def load(self, checkpoint: Checkpoint, pointers, indices=None, stats=False):
        """Copies tensors into device memory: checkpoint.tensors[indices[i]] (every tensor when
        indices is None) to pointers[i]. Returns when all bytes have arrived; with stats=True,
        returns what the load measured as a dict."""
        if self._handle is None:
            raise ValueError("loader is destroyed")
        lib = _abi.library()
        n = len(pointers)
        ptrs = (ctypes.c_uint64 * n)(*pointers)
        idx = None
        if indices is not None:
            if len(indices) != n:
                raise ValueError("indices and pointers differ in length")
            idx = (ctypes.c_size_t * n)(*indices)
        s = None
        if stats:
            s = _abi.LoadStats()
            s.struct_size = ctypes.sizeof(s)
        # ctypes releases the GIL for the call: other Python threads run while it loads.
        _abi.check(
            lib.sparkdoc_load(self._handle, checkpoint.handle, n, idx, ptrs,
                              ctypes.byref(s) if s is not None else None)
        )
        if s is None:
            return None
        return {name: getattr(s, name) for name, _ in _abi.LoadStats._fields_ if name != "struct_size"}

    def close(self):
        if self._handle is not None:
            _abi.library().sparkdoc_loader_destroy(self._handle)
            self._handle = None


_loaders = {}
_loaders_lock = threading.Lock()
_loader_options = {}


def loader_for(device: int) -> Loader:
    """The process's loader for GPU `device`, created on first use (its staging ring then stays
    allocated until release())."""
    with _loaders_lock:
        loader = _loaders.get(device)
        if loader is None:
            loader = Loader(device, **_loader_options)
            _loaders[device] = loader
        return loader


def configure(reader_threads=0, chunk_bytes=0, slots_per_reader=0, direct_io="auto",
              keep_page_cache=False):
    """Options for the loaders load_file and the transformers patch use (0: the default).
    Loaders already made are released so that the next load makes one with these options."""
    global _loader_options
    _options(reader_threads, chunk_bytes, slots_per_reader, direct_io, keep_page_cache)  # checks
    release()
    with _loaders_lock:
        _loader_options = dict(reader_threads=reader_threads, chunk_bytes=chunk_bytes,
                               slots_per_reader=slots_per_reader, direct_io=direct_io,
                               keep_page_cache=keep_page_cache)


def release():
    """Frees every loader's staging memory and releases its context reference."""
    with _loaders_lock:
        for loader in _loaders.values():
            loader.close()
        _loaders.clear()


def torch_dtype(dtype: str):
    import torch

    name = _TORCH_DTYPES.get(dtype)
    value = getattr(torch, name, None) if name else None
    if value is None:
        raise TypeError(f"safetensors dtype {dtype} has no torch dtype in torch {torch.__version__}")
    return value


def torch_shape(tensor: Tensor):
    shape = list(tensor.shape)
    if tensor.dtype == "F4" and shape:
        shape[-1] //= 2
    return shape


def cuda_index(device) -> int:
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        raise ValueError(f"sparkdoc loads to CUDA devices, not {device}")
    return device.index if device.index is not None else torch.cuda.current_device()


def empty_like_tensor(tensor: Tensor, device):
    import torch

    return torch.empty(torch_shape(tensor), dtype=torch_dtype(tensor.dtype), device=device)


def fill(checkpoint: Checkpoint, tensors, destinations, device_index: int, stats=False):
    """Loads checkpoint tensors into torch CUDA tensors allocated by the caller."""
    import torch

    # The caching allocator may hand out blocks that kernels queued on the current stream still
    # use; the loader copies on streams of its own, so that work must finish first.
    torch.cuda.current_stream(device_index).synchronize()
    pointers = [d.data_ptr() if t.nbytes else 0 for t, d in zip(tensors, destinations)]
    return loader_for(device_index).load(checkpoint, pointers, [t.index for t in tensors], stats)


def load_file(path, device="cuda", *, stats=False):
    """Every tensor of a checkpoint (a .safetensors file, an index, or a model folder) as a
    dict name -> torch tensor on `device`. With stats=True, returns (tensors, stats)."""
    import torch

    index = cuda_index(device)
    target = torch.device("cuda", index)
    with Checkpoint(path) as checkpoint:
        tensors = [empty_like_tensor(t, target) for t in checkpoint.tensors]
        measured = fill(checkpoint, checkpoint.tensors, tensors, index, stats)
        out = {t.name: d for t, d in zip(checkpoint.tensors, tensors)}
    return (out, measured) if stats else out


def load_model_dir(path, device="cuda", *, stats=False):
    """load_file for a model folder (model.safetensors.index.json or *.safetensors) or a
    Hugging Face cache entry."""
    if not os.path.isdir(path):
        raise NotADirectoryError(path)
    return load_file(path, device, stats=stats)
