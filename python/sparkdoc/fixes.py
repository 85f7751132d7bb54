"""The recipes' in-process fixes, each detected before it is applied.

One function per step of the recipes (000: Nemotron-3-Nano on a Spark; 001: Qwen3.5-35B-A3B
bf16 LoRA; 002: the ten gotchas G1-G10). Every function looks at what is installed and loaded first, changes
something only when the step is needed and can work there, and returns a `Result` that says what
it did and why, with the recipe section it comes from:

    applied         the fix was applied (`details` says what changed)
    not needed      what the fix does is already so (a newer library, nothing to remove)
    not applicable  what the fix works on is not here (unsloth not installed, no Mamba layers)
    refused         the fix could not work here, or could do harm; `reason` says why and what to do

    import sparkdoc.fixes as fixes
    print(fixes.scrub_distributed_env())             # before torch, accelerate or transformers
    model = AutoModelForCausalLM.from_pretrained(...)
    for result in fixes.prepare(model, tokenizer):    # one line per fix, printed
        ...

Nothing here imports torch, transformers or unsloth by itself: a fix that needs a module looks
for it in sys.modules or imports only what the fix itself calls.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, MutableMapping

APPLIED = "applied"
NOT_NEEDED = "not needed"
NOT_APPLICABLE = "not applicable"
REFUSED = "refused"


@dataclass
class Result:
    """What one fix did: `status` (APPLIED, NOT_NEEDED, NOT_APPLICABLE, REFUSED), `reason`, the
    recipe section in `seed`, what changed in `details`, warnings to act on, and for a fix that
    returns an object (unwrap_tokenizer) that object in `value`."""

    fix: str
    status: str
    reason: str
    seed: str
    details: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    value: Any = None

    @property
    def applied(self) -> bool:
        return self.status == APPLIED

    def __str__(self) -> str:
        line = f"{self.fix}: {self.status}: {self.reason} ({self.seed})"
        for warning in self.warnings:
            line += f"\n  warning: {warning}"
        return line


# --- 000 §8: gradient checkpointing past the class flag ------------------------------------


def _transformers_model(model):
    """The transformers PreTrainedModel inside `model` (itself, or what a PEFT wrapper holds)."""
    seen = set()
    current = model
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        cls = type(current)
        # A PeftModel answers hasattr() for its model's methods, but its class has no flag.
        if hasattr(current, "_set_gradient_checkpointing") and \
                hasattr(cls, "supports_gradient_checkpointing"):
            return current
        get_base = getattr(current, "get_base_model", None)
        inner = get_base() if callable(get_base) else None
        if inner is None or inner is current:
            # PeftModel.base_model is the tuner (LoraModel); its .model is the transformers model.
            inner = getattr(current, "base_model", None)
            inner = getattr(inner, "model", inner) if inner is not current else None
        current = inner
    return None


def _modules(model):
    modules = getattr(model, "modules", None)
    return list(modules()) if callable(modules) else []


def _is_checkpointing_layer(module) -> bool:
    return any(c.__name__ == "GradientCheckpointingLayer" for c in type(module).__mro__)


def enable_gradient_checkpointing(model, args=None) -> Result:
    """000 §8: checkpoint the layers of a model whose class says it cannot, when its layers can.

    NemotronHForCausalLM (transformers 5.5.3) sets `supports_gradient_checkpointing = False`, so
    `gradient_checkpointing_enable()` and a trainer's `gradient_checkpointing=True` raise
    ValueError, although every NemotronHBlock is a GradientCheckpointingLayer. This sets the
    layers' checkpoint function directly (`_set_gradient_checkpointing` with non-reentrant
    torch.utils.checkpoint) and makes the embeddings' output require grad, as the recipe does.
    `model` may be a PEFT model; `args` the TrainingArguments / SFTConfig, to warn when it would
    enable checkpointing again."""
    fix, seed = "enable_gradient_checkpointing", "000 §8"
    target = _transformers_model(model)
    if target is None:
        return Result(fix, REFUSED, f"{type(model).__name__} is not a transformers model (no "
                      "_set_gradient_checkpointing, no supports_gradient_checkpointing) nor a PEFT "
                      "model around one", seed)
    name = type(target).__name__
    layers = [m for m in _modules(target) if _is_checkpointing_layer(m)]
    details = {"model": name, "checkpointing_layers": len(layers)}
    if getattr(type(target), "supports_gradient_checkpointing", False):
        again = ""
        if args is not None and not getattr(args, "gradient_checkpointing", False):
            again = "; set gradient_checkpointing=True in the trainer config"
        return Result(fix, NOT_NEEDED, f"{name}.supports_gradient_checkpointing is True in this "
                      "transformers: model.gradient_checkpointing_enable(gradient_checkpointing_kwargs="
                      "{'use_reentrant': False}) works" + again, seed, details)
    if not layers:
        return Result(fix, REFUSED, f"{name} says it does not support gradient checkpointing and "
                      "none of its layers is a GradientCheckpointingLayer, so nothing would "
                      "checkpoint them: train without it (shorter sequences, a smaller batch)",
                      seed, details)
    if all(getattr(m, "gradient_checkpointing", False) for m in layers):
        return Result(fix, NOT_NEEDED, f"the {len(layers)} checkpointing layers of {name} are "
                      "checkpointed already", seed, details)
    try:
        import torch.utils.checkpoint as torch_checkpoint
    except ImportError as e:
        return Result(fix, REFUSED, f"torch.utils.checkpoint does not import ({e})", seed, details)
    checkpoint = functools.partial(torch_checkpoint.checkpoint, use_reentrant=False)
    target._set_gradient_checkpointing(enable=True, gradient_checkpointing_func=checkpoint)
    warnings = []
    enable_grads = getattr(target, "enable_input_require_grads", None)
    if callable(enable_grads):
        enable_grads()
        details["input_require_grads"] = True
    else:
        warnings.append(f"{name} has no enable_input_require_grads: with frozen embeddings the "
                        "first checkpointed layer gets no gradient path")
    if args is not None and getattr(args, "gradient_checkpointing", False):
        warnings.append("the trainer config has gradient_checkpointing=True: the trainer will call "
                        "gradient_checkpointing_enable() and raise ValueError; set it to False "
                        "(the layers stay checkpointed)")
    if getattr(target, "training", True) is False:
        warnings.append("the model is in eval mode: layers checkpoint only in training mode "
                        "(model.train(); the trainer does it)")
    return Result(fix, APPLIED, f"{len(layers)} GradientCheckpointingLayers of {name} checkpoint "
                  "with non-reentrant torch.utils.checkpoint although the class flag is False; keep "
                  "gradient_checkpointing=False in the trainer config", seed, details, warnings)


# --- 000 §9: the Mamba kernels ---------------------------------------------------------------

# name in modeling_nemotron_h -> (module, attribute) it is imported from when the kernels exist.
_MAMBA_KERNELS = {
    "selective_state_update": ("mamba_ssm.ops.triton.selective_state_update", "selective_state_update"),
    "mamba_chunk_scan_combined": ("mamba_ssm.ops.triton.ssd_combined", "mamba_chunk_scan_combined"),
    "mamba_split_conv1d_scan_combined": ("mamba_ssm.ops.triton.ssd_combined",
                                         "mamba_split_conv1d_scan_combined"),
    "causal_conv1d_fn": ("causal_conv1d", "causal_conv1d_fn"),
    "causal_conv1d_update": ("causal_conv1d", "causal_conv1d_update"),
}
_KERNEL_PACKAGES = {"mamba_ssm": "mamba-ssm", "causal_conv1d": "causal-conv1d"}


def _import_kernels():
    """(kernels found: name -> function, problems: package -> why it is missing)."""
    found, missing = {}, {}
    for name, (module_name, attribute) in _MAMBA_KERNELS.items():
        package = _KERNEL_PACKAGES[module_name.split(".")[0]]
        if package in missing:
            continue
        try:
            value = getattr(importlib.import_module(module_name), attribute)
        except Exception as e:  # an extension that fails to load raises more than ImportError
            missing[package] = f"{type(e).__name__}: {e}"
            continue
        found[name] = value
    return found, missing


def _nemotron_h_modules(model):
    if model is not None:
        module = sys.modules.get(type(_transformers_model(model) or model).__module__)
        return [module] if module is not None and "modeling_nemotron_h" in module.__name__ else []
    return [m for n, m in sorted(sys.modules.items()) if m is not None and "modeling_nemotron_h" in n]


def mamba_fast_path(model=None) -> Result:
    """000 §9: NemotronH's Mamba layers on the mamba-ssm and causal-conv1d kernels.

    transformers 5.5.3's modeling_nemotron_h decides once, at import, with a module flag
    `is_fast_path_available`; the recipe sets it True after loading. This sets it only when
    both kernel packages import, binds the kernels the module left as None, and says what is
    missing otherwise. A transformers without the flag chooses its path itself: that is said,
    and nothing is set."""
    fix, seed = "mamba_fast_path", "000 §9"
    modules = _nemotron_h_modules(model)
    if model is not None:
        mixers = [type(m).__name__ for m in _modules(model) if "Mamba" in type(m).__name__]
        if not mixers:
            return Result(fix, NOT_APPLICABLE, f"{type(model).__name__} has no Mamba layers", seed)
    if not modules:
        where = f"{type(model).__name__} is not a NemotronH model" if model is not None else \
            "no modeling_nemotron_h module is loaded (load the model first)"
        return Result(fix, NOT_APPLICABLE, where, seed)
    kernels, missing = _import_kernels()
    details = {"modules": [m.__name__ for m in modules], "kernels": sorted(kernels),
               "missing": missing}
    if missing:
        why = "; ".join(f"{p} ({e})" for p, e in sorted(missing.items()))
        return Result(fix, NOT_APPLICABLE, f"the kernels do not import: {why}; the Mamba layers run "
                      "on the slower torch path. Build mamba-ssm and causal-conv1d for this GPU "
                      "(000 §2) to use it", seed, details)
    flagged = [m for m in modules if hasattr(m, "is_fast_path_available")]
    if not flagged:
        return Result(fix, NOT_NEEDED, "mamba-ssm and causal-conv1d import, and this transformers' "
                      "modeling_nemotron_h has no is_fast_path_available flag: it picks the kernels "
                      "itself", seed, details)
    if all(m.is_fast_path_available for m in flagged):
        return Result(fix, NOT_NEEDED, "is_fast_path_available is True already", seed, details)
    bound = []
    for module in flagged:
        for name, kernel in kernels.items():
            if hasattr(module, name) and getattr(module, name) is None:
                setattr(module, name, kernel)
                bound.append(f"{module.__name__}.{name}")
        module.is_fast_path_available = True
    details["bound"] = bound
    return Result(fix, APPLIED, "mamba-ssm and causal-conv1d import: is_fast_path_available set True"
                  + (f", {len(bound)} kernels bound" if bound else ""), seed, details)


# --- 001: the environment of a one-GPU run ---------------------------------------------------

# The rules of src/facts/environment.h, which `sparkdoc run` applies to the command it starts;
# tests/python/test_fixes.py reads that header and fails when the two differ.
LAUNCH_STATE = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                "MASTER_PORT")
LAUNCHER_STATE = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
                  "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "SLURM_PROCID")
LAUNCHER_PREFIX = "OMPI_COMM_WORLD_"
TUNING_PREFIXES = ("NCCL_", "OMPI_", "MPI_", "PMI_")
NOT_TUNING = ("NCCL_VERSION",)
ACCELERATE_OVERRIDES = ("ACCELERATE_USE_FSDP", "ACCELERATE_USE_DEEPSPEED")


def is_distributed_variable(name: str) -> bool:
    """What `sparkdoc run` removes from a one-node command's environment."""
    if name in LAUNCH_STATE or name in LAUNCHER_STATE or name.startswith(LAUNCHER_PREFIX):
        return True
    return name not in NOT_TUNING and name.startswith(TUNING_PREFIXES)


def scrub_distributed_env(environ: MutableMapping[str, str] | None = None, force=False) -> Result:
    """001 "Distributed Training Environment Cleanup", in the process: removes the launch-state
    and NCCL_/OMPI_/MPI_/PMI_ variables `sparkdoc run` removes, and sets ACCELERATE_USE_FSDP=0 and
    ACCELERATE_USE_DEEPSPEED=0 so a cached accelerate config cannot start FSDP or DeepSpeed.
    Call it first, before torch, accelerate or transformers read the environment. Under torchrun
    (TORCHELASTIC_RUN_ID set) the other ranks are real: it refuses unless force=True."""
    fix, seed = "scrub_distributed_env", "001 Distributed Training Environment Cleanup"
    env = os.environ if environ is None else environ
    if env.get("TORCHELASTIC_RUN_ID") and not force:
        return Result(fix, REFUSED, "this process was started by torchrun (TORCHELASTIC_RUN_ID is "
                      "set): its other ranks are running, and removing RANK and WORLD_SIZE would "
                      "make each of them rank 0; launch with plain python, or pass force=True",
                      seed)
    removed = sorted(n for n in list(env) if is_distributed_variable(n))
    for name in removed:
        del env[name]
    forced = [n for n in ACCELERATE_OVERRIDES if env.get(n) != "0"]
    for name in forced:
        env[name] = "0"
    warnings = []
    if removed or forced:
        loaded = [m for m in ("accelerate", "torch.distributed", "deepspeed") if m in sys.modules]
        if loaded:
            warnings.append(f"{', '.join(loaded)} imported before the scrub: what it read at "
                            "import stays; call scrub_distributed_env() first in the script")
    details = {"removed": removed, "set": {n: "0" for n in forced}}
    if not removed and not forced:
        return Result(fix, NOT_NEEDED, "no distributed variables set; ACCELERATE_USE_FSDP and "
                      "ACCELERATE_USE_DEEPSPEED are 0", seed, details)
    parts = []
    if removed:
        parts.append(f"removed {', '.join(removed)}")
    if forced:
        parts.append(f"set {'=0, '.join(forced)}=0")
    return Result(fix, APPLIED, "; ".join(parts) + ": one process, no FSDP or DeepSpeed", seed,
                  details, warnings)


# --- 001 and 002 G2: Unsloth ---------------------------------------------------------------------


def _unsloth_modules():
    """The loaded unsloth and unsloth_zoo modules, or a Result saying why there are none."""
    loaded = [(n, m) for n, m in sorted(sys.modules.items())
              if m is not None and (n == "unsloth" or n.startswith(("unsloth.", "unsloth_zoo")))]
    if loaded:
        return loaded, None
    try:
        installed = importlib.util.find_spec("unsloth") is not None
    except (ImportError, ValueError):
        installed = False
    if installed:
        return [], "unsloth is installed but not imported: import unsloth first (before " \
                   "transformers, as it asks), then apply this"
    return [], "unsloth not installed"


def _rebind(modules, name: str, replacement: Callable, keep: Callable[[Any], bool]):
    """Sets `name` to `replacement` in every module whose binding `keep` accepts; the names."""
    changed = []
    for module_name, module in modules:
        value = module.__dict__.get(name)
        if value is not None and value is not replacement and keep(value):
            setattr(module, name, replacement)
            changed.append(f"{module_name}.{name}")
    return changed


def _untrained_rows(weight, eps=1e-16, chunk=8192) -> int:
    """Rows of an embedding matrix whose largest entry is at most eps: what Unsloth's
    fix_untrained_tokens calls untrained. Read in chunks, so no copy of the whole matrix."""
    rows = int(weight.shape[0])
    count = 0
    for start in range(0, rows, chunk):
        block = weight[start:start + chunk]
        count += int((block.amax(dim=1) <= eps).sum().item())
    return count


def _noop(*args, **kwargs):
    return None


def unsloth_fix_untrained_tokens(model=None) -> Result:
    """001 "fix_untrained_tokens -> No-op": Unsloth resets embedding rows it finds untrained;
    on a fully trained vocabulary (Qwen3.5) there are none and the call only costs time. With
    the model, its input embeddings are read: no untrained row, and every binding of the
    function in Unsloth's modules becomes a no-op; untrained rows, and it stays."""
    fix, seed = "unsloth_fix_untrained_tokens", "001 Runtime Monkey-Patches"
    modules, why = _unsloth_modules()
    if why:
        return Result(fix, NOT_APPLICABLE, why, seed)
    originals = {m.__dict__["fix_untrained_tokens"] for _, m in modules
                 if callable(m.__dict__.get("fix_untrained_tokens")) and
                 m.__dict__["fix_untrained_tokens"] is not _noop}
    if not originals:
        return Result(fix, NOT_APPLICABLE, "no fix_untrained_tokens in the loaded unsloth modules",
                      seed)
    if model is None:
        return Result(fix, REFUSED, "give the model: whether its vocabulary is fully trained is "
                      "read from its input embeddings", seed)
    target = _transformers_model(model) or model
    get_embeddings = getattr(target, "get_input_embeddings", None)
    embeddings = get_embeddings() if callable(get_embeddings) else None
    weight = getattr(embeddings, "weight", None)
    if weight is None:
        return Result(fix, REFUSED, f"{type(target).__name__} has no input embeddings to read",
                      seed)
    untrained = _untrained_rows(weight.detach() if hasattr(weight, "detach") else weight)
    details = {"vocabulary": int(weight.shape[0]), "untrained_rows": untrained}
    if untrained:
        return Result(fix, NOT_NEEDED, f"{untrained} of {int(weight.shape[0])} embedding rows look "
                      "untrained: fix_untrained_tokens has work to do and stays", seed, details)
    details["patched"] = _rebind(modules, "fix_untrained_tokens", _noop, lambda v: v in originals)
    return Result(fix, APPLIED, f"all {int(weight.shape[0])} embedding rows are trained: "
                  "fix_untrained_tokens is a no-op", seed, details)


def _offline(environ) -> bool:
    return any(environ.get(n, "").lower() in ("1", "true", "yes", "on")
               for n in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def unsloth_skip_statistics(offline: bool | None = None) -> Result:
    """001 "Unsloth Telemetry Timeout": Unsloth's statistics call waits 120 s for the Hub on a
    restricted network. On an offline machine (offline=True, or HF_HUB_OFFLINE or
    TRANSFORMERS_OFFLINE set) every binding of it in Unsloth's loaded modules becomes a no-op:
    each module that did `from ._utils import ...` has its own, which is why patching one name
    was not enough in 001."""
    fix, seed = "unsloth_skip_statistics", "001 Unsloth Telemetry Timeout"
    modules, why = _unsloth_modules()
    if why:
        return Result(fix, NOT_APPLICABLE, why, seed)
    offline = _offline(os.environ) if offline is None else offline
    names = ("get_statistics", "_get_statistics")
    present = [f"{n}.{a}" for n, m in modules for a in names if callable(m.__dict__.get(a))
               and m.__dict__[a] is not _noop]
    if not present:
        return Result(fix, NOT_APPLICABLE, "no statistics call (get_statistics, _get_statistics) "
                      "in the loaded unsloth modules", seed)
    if not offline:
        return Result(fix, NOT_NEEDED, "the network is not marked offline; on a restricted network "
                      "set HF_HUB_OFFLINE=1 or pass offline=True", seed, {"found": present})
    changed = []
    for name in names:
        changed += _rebind(modules, name, _noop, callable)
    return Result(fix, APPLIED, f"offline: {len(changed)} bindings of Unsloth's statistics call are "
                  "no-ops", seed, {"patched": changed})


def unsloth_prefer_sdpa() -> Result:
    """002 G2: Unsloth prefers flash-attn when it imports and drops an explicit
    attn_implementation="sdpa". Setting its HAS_FLASH_ATTENTION flag False in every loaded
    Unsloth module, before the model is loaded, keeps SDPA."""
    fix, seed = "unsloth_prefer_sdpa", "002 G2"
    modules, why = _unsloth_modules()
    if why:
        return Result(fix, NOT_APPLICABLE, why, seed)
    flags = ("HAS_FLASH_ATTENTION", "HAS_FLASH_ATTENTION_SOFTCAPPING")
    changed = []
    for name in flags:
        changed += _rebind(modules, name, False, lambda v: v is True)
    if not changed:
        return Result(fix, NOT_NEEDED, "Unsloth does not use flash-attn here (no "
                      "HAS_FLASH_ATTENTION set True): SDPA is what it runs", seed)
    return Result(fix, APPLIED, "flash-attn is off for Unsloth, SDPA is used: load the model after "
                  "this", seed, {"patched": changed})


def unwrap_tokenizer(tokenizer) -> Result:
    """001 "Text-Only Tokenizer Access": a vision-language model's processor (Qwen3VLProcessor)
    holds the text tokenizer in `.tokenizer`; text-only training wants the tokenizer itself.
    The tokenizer to use is `result.value`."""
    fix, seed = "unwrap_tokenizer", "001 Text-Only Tokenizer Access"
    if tokenizer is None:
        return Result(fix, NOT_APPLICABLE, "no tokenizer given", seed)
    inner = getattr(tokenizer, "tokenizer", None)
    name = type(tokenizer).__name__
    if inner is None or inner is tokenizer:
        return Result(fix, NOT_NEEDED, f"{name} is a tokenizer, not a processor", seed,
                      value=tokenizer)
    if not callable(getattr(inner, "encode", None)):
        return Result(fix, REFUSED, f"{name}.tokenizer is a {type(inner).__name__}, which has no "
                      "encode(): not unwrapped", seed, value=tokenizer)
    return Result(fix, APPLIED, f"{name} unwrapped to its {type(inner).__name__} for text-only "
                  "training", seed, {"processor": name}, value=inner)


def prepare(model=None, tokenizer=None, args=None, *, out=sys.stdout) -> list:
    """Every fix that applies, one printed line each; returns the Results. Always the
    environment scrub; before loading (model=None) also Unsloth's attention choice and its
    statistics call, which act during from_pretrained; with the model: checkpointing, the Mamba
    path and the untrained-token pass; with a tokenizer: the processor unwrap (the unwrapped
    tokenizer is the last result's value)."""
    results = [scrub_distributed_env()]
    if model is None:
        results += [unsloth_prefer_sdpa(), unsloth_skip_statistics()]
    else:
        results += [enable_gradient_checkpointing(model, args), mamba_fast_path(model),
                    unsloth_fix_untrained_tokens(model)]
    if tokenizer is not None:
        results.append(unwrap_tokenizer(tokenizer))
    if out is not None:
        for result in results:
            print(f"sparkdoc: {result}", file=out, flush=True)
    return results
