"""transformers 5.x: from_pretrained reads safetensors shards through sparkdoc.

transformers 5.x opens every shard with `safe_open(file, framework="pt", device="cpu",
backend=...)` (the module global transformers.modeling_utils.safe_open), takes a lazy slice per
tensor (`get_slice`), and later materialises each slice on its target device in
core_model_loading._materialize_copy(tensor, device, dtype), as `tensor[...]` then
`.to(device, dtype)`. The safetensors slice behind it is a view of a private file mapping, so
on a unified-memory GPU the page cache and copy-on-write copies pile up beside the tensors
(seed 001: out of memory at 66 % of a 67 GB load).

The patch replaces exactly those two names:
- safe_open -> SafeOpen: headers parsed by sparkdoc, nothing mapped, slices that know their
  file, offset and size;
- _materialize_copy -> a function that sends sparkdoc slices bound for a CUDA device through
  the loader (torch.empty on the device, filled by pread + pinned staging + async copy, the
  page cache dropped behind), then casts on the GPU if a dtype was asked for; slices bound for
  the CPU are read with pread into a CPU tensor; anything else goes to the original function.
With `device`, from_pretrained calls that name no device_map get device_map={"": device}, so
the model lands on that GPU as the seeds' workaround did, and stays on one device.

When a from_pretrained call puts the whole model on one GPU (device_map {"": gpu}), the first
tensor of a shard bound for it brings the whole shard in one load (every tensor into its own
torch.empty on that GPU, reads in file order across all reader threads), and the shard's other
tensors are handed out from there: one streaming read per shard instead of one small read per
tensor. Tensors the model does not take are freed when transformers closes the shard.
"""

from __future__ import annotations

import functools
import json
import os
import struct
import threading
import time

from .guard import on_tmpfs
from .loader import Checkpoint, cuda_index, empty_like_tensor, fill, torch_dtype, torch_shape


class Slice:
    """A tensor of a shard, not read yet: what transformers keeps until it materialises it."""

    def __init__(self, owner: "SafeOpen", tensor):
        self._owner = owner
        self._tensor = tensor

    def get_shape(self):
        return list(self._tensor.shape)

    def get_dtype(self):
        return self._tensor.dtype

    def __getitem__(self, index):
        value = self.materialize("cpu")
        return value if index is Ellipsis else value[index]

    def materialize(self, device=None, dtype=None):
        """The tensor on `device` (None or "cpu": host memory; an int or "cuda:N": that GPU),
        cast to `dtype` when given."""
        import torch

        target = _target(device)
        if target.type == "meta":
            value = torch.empty(torch_shape(self._tensor), dtype=torch_dtype(self._tensor.dtype),
                                device="meta")
        elif target.type == "cuda":
            value = self._owner._read_cuda(self._tensor, target)
        else:
            value = self._owner._read_cpu(self._tensor)
            if target.type != "cpu":
                value = value.to(target)
        if dtype is not None and value.dtype != dtype:
            value = value.to(dtype)
        return value


def _target(device):
    import torch

    if device is None or device == "disk":
        return torch.device("cpu")
    if isinstance(device, int):
        return torch.device("cuda", device)
    return torch.device(device)


class SafeOpen:
    """safetensors.safe_open's interface as transformers 5.x uses it, over sparkdoc."""

    def __init__(self, filename, framework="pt", device="cpu", *, backend=None, **kwargs):
        if framework not in ("pt", "torch"):
            raise ValueError(f"sparkdoc's safe_open serves framework='pt', not {framework!r}")
        self._checkpoint = Checkpoint(filename)
        if len(self._checkpoint.files) != 1:
            raise ValueError(f"{filename}: safe_open takes one .safetensors file")
        self._path = self._checkpoint.files[0]
        self._device = device
        self._fd = None
        self._lock = threading.Lock()
        self._metadata = None
        self._shard = None  # name -> tensor on the prefetch GPU, while the shard is handed out
        self._drop = not on_tmpfs(self._path)
        _state.opened(self)

    def keys(self):
        return sorted(self._checkpoint.by_name)

    def offset_keys(self):
        return [t.name for t in self._checkpoint.tensors]

    def metadata(self):
        if self._metadata is None:
            fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                (n,) = struct.unpack("<Q", os.pread(fd, 8, 0))
                header = json.loads(os.pread(fd, n, 8))
            finally:
                os.close(fd)
            self._metadata = header.get("__metadata__") or {}
        return dict(self._metadata)

    def get_slice(self, name):
        return Slice(self, self._tensor(name))

    def get_tensor(self, name):
        return Slice(self, self._tensor(name)).materialize(self._device)

    def _tensor(self, name):
        try:
            return self._checkpoint.by_name[name]
        except KeyError:
            raise KeyError(f"{self._path}: no tensor named {name!r}") from None

    def _read_cuda(self, tensor, target):
        import torch

        index = cuda_index(target)
        if _state.prefetch_index == index:
            with self._lock:
                if self._shard is None:
                    self._shard = self._load_shard(index)
                value = self._shard.pop(tensor.name, None)
            if value is not None:
                return value
        value = torch.empty(torch_shape(tensor), dtype=torch_dtype(tensor.dtype),
                            device=torch.device("cuda", index))
        start = time.perf_counter()
        fill(self._checkpoint, [tensor], [value], index)
        _state.count(tensor.nbytes, time.perf_counter() - start, "cuda")
        return value

    def _load_shard(self, index):
        """Every tensor of the shard on GPU `index`, in one load; the caller holds the lock."""
        start = time.perf_counter()
        ck = self._checkpoint
        values = [empty_like_tensor(t, f"cuda:{index}") for t in ck.tensors]
        fill(ck, ck.tensors, values, index)
        _state.count(ck.nbytes, time.perf_counter() - start, "cuda", len(ck.tensors))
        return {t.name: v for t, v in zip(ck.tensors, values)}

    def _read_cpu(self, tensor):
        import torch

        value = torch.empty(torch_shape(tensor), dtype=torch_dtype(tensor.dtype))
        if tensor.nbytes == 0:
            return value
        start = time.perf_counter()
        view = memoryview(value.reshape(-1).view(torch.uint8).numpy()).cast("B")
        fd = self._file()
        got = 0
        while got < tensor.nbytes:
            n = os.preadv(fd, [view[got:]], tensor.file_offset + got)
            if n <= 0:
                raise OSError(f"{self._path}: tensor '{tensor.name}': the file ends early")
            got += n
        if self._drop:
            os.posix_fadvise(fd, tensor.file_offset, tensor.nbytes, os.POSIX_FADV_DONTNEED)
        _state.count(tensor.nbytes, time.perf_counter() - start, "cpu")
        return value

    def _file(self):
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
            return self._fd

    def close(self):
        with self._lock:
            self._shard = None
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _State:
    """What the active patch has done: shards opened, tensors and bytes read."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        self.prefetch_index = None  # GPU that from_pretrained puts the whole model on
        self.files = []
        self.tensors = {"cuda": 0, "cpu": 0}
        self.bytes = {"cuda": 0, "cpu": 0}
        self.seconds = {"cuda": 0.0, "cpu": 0.0}

    def opened(self, handle):
        with self._lock:
            self.files.append(handle._path)

    def count(self, nbytes, seconds, where, tensors=1):
        with self._lock:
            self.tensors[where] += tensors
            self.bytes[where] += nbytes
            self.seconds[where] += seconds

    def snapshot(self):
        with self._lock:
            return {"files": list(self.files), "tensors": dict(self.tensors),
                    "bytes": dict(self.bytes), "seconds": dict(self.seconds)}


_state = _State()


class Patch:
    """An applied patch: undo() (or leaving a `with` block) puts transformers back."""

    def __init__(self, device=None):
        import transformers
        import transformers.modeling_utils as modeling_utils

        major = int(transformers.__version__.split(".")[0])
        if major < 5:
            raise RuntimeError(f"patch_transformers needs transformers 5.x, found {transformers.__version__}")
        if not hasattr(modeling_utils, "safe_open"):
            raise RuntimeError("transformers.modeling_utils has no safe_open: this version loads "
                               "checkpoints another way; sparkdoc cannot patch it")
        self._undo = []
        self.device = device
        _state.reset()

        original_open = modeling_utils.safe_open
        modeling_utils.safe_open = SafeOpen
        self._undo.append(lambda: setattr(modeling_utils, "safe_open", original_open))

        try:
            import transformers.core_model_loading as core_model_loading
        except ImportError:
            core_model_loading = None
        original_copy = getattr(core_model_loading, "_materialize_copy", None)
        if original_copy is not None:
            @functools.wraps(original_copy)
            def materialize_copy(tensor, device=None, dtype=None):
                if isinstance(tensor, Slice):
                    return tensor.materialize(device, dtype)
                return original_copy(tensor, device, dtype)

            core_model_loading._materialize_copy = materialize_copy
            self._undo.append(lambda: setattr(core_model_loading, "_materialize_copy", original_copy))

        pretrained = modeling_utils.PreTrainedModel
        original_from_pretrained = pretrained.__dict__["from_pretrained"]
        function = original_from_pretrained.__func__

        @functools.wraps(function)
        def from_pretrained(cls, *args, **kwargs):
            if kwargs.get("device_map") is None and device is not None:
                kwargs["device_map"] = {"": device}
            _state.prefetch_index = _single_gpu(kwargs.get("device_map"))
            try:
                return function(cls, *args, **kwargs)
            finally:
                _state.prefetch_index = None

        pretrained.from_pretrained = classmethod(from_pretrained)
        self._undo.append(lambda: setattr(pretrained, "from_pretrained", original_from_pretrained))

    @property
    def stats(self):
        """Shards opened, and tensors, bytes and seconds read to CUDA and to the CPU."""
        return _state.snapshot()

    def undo(self):
        while self._undo:
            self._undo.pop()()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.undo()
        return False


def _single_gpu(device_map):
    """The GPU index when `device_map` puts everything on one CUDA device, else None."""
    if not isinstance(device_map, dict) or set(device_map) != {""}:
        return None
    try:
        target = _target(device_map[""])
        return cuda_index(target) if target.type == "cuda" else None
    except (RuntimeError, ValueError, TypeError):
        return None


def patch_transformers(device=None) -> Patch:
    """Routes transformers 5.x's safetensors loading through sparkdoc (see the module text).
    `device` ("cuda:0", 0, ...) is where from_pretrained places models when the call names no
    device_map. Returns a Patch; use it as a context manager or call undo()."""
    return Patch(device)
