"""sparkdoc's Python face: stream safetensors checkpoints to the GPU with bounded host memory.

    import sparkdoc
    tensors = sparkdoc.load_file("model.safetensors", "cuda:0")      # dict name -> tensor
    tensors = sparkdoc.load_model_dir("/models/qwen", "cuda:0")       # every shard
    with sparkdoc.patch_transformers(device="cuda:0"), sparkdoc.memory_guard(paths=[model_dir]):
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16)
    sparkdoc.fixes.prepare(model, tokenizer)                          # the recipes' fixes

`python -m sparkdoc check` runs the sparkdoc binary the wheel carries. docs/PYTHON.md has a
training script for each recipe.

Pure Python over libsparkdoc.so (ctypes): the wheel's own copy first, then SPARKDOC_LIBRARY,
then the system's; a library of another version is refused.
torch is imported only by the functions that make tensors.
"""

from ._abi import (
    CheckpointError,
    CheckpointNotFoundError,
    CheckpointPermissionError,
    CheckpointReadError,
    CudaError,
    NoCudaError,
    OutOfMemoryError,
    SparkdocError,
    library,
    library_path,
)
from . import fixes
from ._version import __version__
from .guard import memory_guard
from .loader import Checkpoint, Loader, configure, load_file, load_model_dir, release
from .transformers_patch import Patch, patch_transformers

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointNotFoundError",
    "CheckpointPermissionError",
    "CheckpointReadError",
    "CudaError",
    "Loader",
    "NoCudaError",
    "OutOfMemoryError",
    "Patch",
    "SparkdocError",
    "__version__",
    "configure",
    "fixes",
    "library",
    "library_path",
    "load_file",
    "load_model_dir",
    "memory_guard",
    "patch_transformers",
    "release",
]
