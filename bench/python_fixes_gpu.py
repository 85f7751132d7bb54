#!/usr/bin/env python3
"""sparkdoc.fixes and sparkdoc.patch_transformers on one GPU, with random tiny models.

Parts, each measured and reported on its own (one failing says why and the others still run):
  environment             torch, transformers, peft, accelerate versions; the GPU
  checkpointing_nemotron_h  a tiny random NemotronH (Mamba, attention, MLP/MoE layers):
  checkpointing_llama       and a Mamba-free Llama. For each: the training step without
                          checkpointing (loss, gradients, peak memory); the class flag as
                          transformers 5.5.3 has it (False): gradient_checkpointing_enable()
                          must raise, sparkdoc.fixes.enable_gradient_checkpointing must apply,
                          and the step must run with a lower peak and gradients equal within
                          bf16 tolerance; with the installed transformers' own flag the function
                          must report "not needed" (or apply, when that flag is False).
  mamba_fast_path         what sparkdoc.fixes.mamba_fast_path finds for both models
  scrub_distributed_env   a child process with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_*, NCCL_*,
                          OMPI_* set: scrub, then import accelerate: one process, rank 0; the
                          same child without the scrub, for contrast (a bounded wait)
  patch_transformers      a tiny Qwen3-MoE (experts fused at load by transformers 5) saved in
                          several shards on disk: plain from_pretrained and inside
                          sparkdoc.patch_transformers, each cold and in a process of its own:
                          identical state_dict, seconds, page-cache growth (/proc/meminfo)
Prints one JSON document and exits 0 when every part met its acceptance, else 1.

Usage, from the repository root (libsparkdoc.so of a release build in build-release/, or
SPARKDOC_LIBRARY; root lets the cold loads drop the page cache, else each shard's pages are
evicted with posix_fadvise):
  PYTHONPATH=python python3 bench/python_fixes_gpu.py [--out FILE] [--work DIR] [--part NAME]...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(ROOT / "python"))

PARTS = ("environment", "checkpointing_nemotron_h", "checkpointing_llama", "mamba_fast_path",
         "scrub_distributed_env", "patch_transformers")
# Relative gradient difference accepted between the checkpointed and the plain step: bf16 keeps
# 8 bits of mantissa (2^-8 = 0.4 %); recomputed activations may round differently per layer.
GRAD_TOLERANCE = 2e-2


# ---- models -----------------------------------------------------------------------------------

def nemotron_h_config():
    """A tiny NemotronH: each kind of layer its installed config knows (Mamba, attention, MLP, MoE)."""
    from transformers import NemotronHConfig

    # Both spellings of the Mamba settings: older configs name them n_groups, chunk_size,
    # conv_kernel; newer ones mamba_n_groups, mamba_chunk_size, mamba_d_conv (and keep the rest).
    wanted = dict(vocab_size=512, hidden_size=512, num_attention_heads=8, num_key_value_heads=2,
                  head_dim=64, intermediate_size=1024, mamba_num_heads=16, mamba_head_dim=32,
                  ssm_state_size=32, n_groups=2, mamba_n_groups=2, conv_kernel=4, mamba_d_conv=4,
                  chunk_size=128, mamba_chunk_size=128, n_routed_experts=4, n_shared_experts=1,
                  num_experts_per_tok=2, moe_intermediate_size=256,
                  moe_shared_expert_intermediate_size=256, n_group=1, topk_group=1,
                  max_position_embeddings=4096, use_cache=False, tie_word_embeddings=False)
    blocks = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
    attempts = [("layers_block_type", "M*EM-E"), ("hybrid_override_pattern", "M*EM-E"),
                ("hybrid_override_pattern", "M*-M*-")]
    errors = []
    for key, pattern in attempts:
        try:
            if key == "layers_block_type":
                config = NemotronHConfig(layers_block_type=[blocks[c] for c in pattern], **wanted)
            else:
                config = NemotronHConfig(num_hidden_layers=len(pattern),
                                         hybrid_override_pattern=pattern, **wanted)
            if getattr(config, "num_hidden_layers", len(pattern)) != len(pattern):
                raise ValueError(f"num_hidden_layers {config.num_hidden_layers}")
            return config, f"{key}={pattern}"
        except Exception as e:  # a config of another version refuses a key or a pattern letter
            errors.append(f"{key}={pattern}: {type(e).__name__}: {e}")
    raise RuntimeError("no tiny NemotronHConfig: " + "; ".join(errors))


def llama_config():
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=512, hidden_size=512, intermediate_size=1408, num_hidden_layers=8,
                       num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=4096,
                       use_cache=False, tie_word_embeddings=False), "llama"


def build(kind):
    import torch
    from transformers import AutoModelForCausalLM

    config, layout = nemotron_h_config() if kind == "nemotron_h" else llama_config()
    torch.manual_seed(0)
    # Initialised in float32 and cast, as from_pretrained(dtype=torch.bfloat16) would hold it.
    model = AutoModelForCausalLM.from_config(config).to(device="cuda:0", dtype=torch.bfloat16)
    model.train()
    return model, layout


def with_lora(model):
    """The recipe's setting: LoRA over frozen weights (peft), else full fine-tuning."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as e:
        return model, f"full fine-tuning (peft: {e})"
    targets, named = "all-linear", "lora r8 all-linear"
    if getattr(model.config, "model_type", "") == "nemotron_h":
        # peft 0.21 refuses LoRA on a Mamba mixer's out_proj and conv1d; 000's other targets.
        targets = ["q_proj", "k_proj", "v_proj", "o_proj", "in_proj", "up_proj", "down_proj"]
        named = "lora r8 " + ",".join(targets)
    return get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                                            target_modules=targets)), named


# ---- gradient checkpointing -------------------------------------------------------------------

def train_step(model, batch):
    """Loss, gradients (float32, on the CPU) and peak allocated bytes above the step's start."""
    import torch

    model.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    loss = model(input_ids=batch, labels=batch).loss
    loss.backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - start
    grads = {n: p.grad.detach().float().cpu() for n, p in model.named_parameters()
             if p.grad is not None}
    return float(loss), grads, peak


def compare(reference, other):
    import torch

    if set(reference) != set(other):
        return {"same_parameters": False}
    worst, worst_name = 0.0, None
    for name, g in reference.items():
        norm = float(g.norm())
        diff = float((g - other[name]).norm()) / (norm if norm > 0 else 1.0)
        if diff > worst:
            worst, worst_name = diff, name
    return {"same_parameters": True, "parameters": len(reference), "max_relative_diff": worst,
            "worst_parameter": worst_name, "within_tolerance": worst <= GRAD_TOLERANCE,
            "tolerance": GRAD_TOLERANCE,
            "all_finite": all(bool(torch.isfinite(g).all()) for g in other.values())}


def checkpointing(kind, batch_size=2, seq=2048):
    import torch
    from sparkdoc import fixes

    model, layout = build(kind)
    base = model
    model, training = with_lora(model)
    out = {"model": type(base).__name__, "layout": layout, "training": training,
           "batch": [batch_size, seq]}
    cls = type(base)
    own_flag = cls.supports_gradient_checkpointing
    out["installed_flag"] = own_flag
    torch.manual_seed(1)
    batch = torch.randint(0, base.config.vocab_size, (batch_size, seq), device="cuda:0")

    loss, grads, peak = train_step(model, batch)
    out["plain"] = {"loss": loss, "peak_bytes": peak}

    # The installed transformers' own flag first: with True there the function changes nothing.
    own = fixes.enable_gradient_checkpointing(model)
    out["with_installed_flag"] = {"status": own.status, "reason": own.reason}
    if own.applied:  # a transformers whose own flag is False: undo, to measure from scratch
        base._set_gradient_checkpointing(enable=False)

    cls.supports_gradient_checkpointing = False  # as transformers 5.5.3 has it for NemotronH
    try:
        try:
            base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            out["enable_raised"] = None
        except ValueError as e:
            out["enable_raised"] = str(e)
        result = fixes.enable_gradient_checkpointing(model)
        out["fix"] = {"status": result.status, "reason": result.reason, "details": result.details,
                      "warnings": result.warnings}
        ck_loss, ck_grads, ck_peak = train_step(model, batch)
        out["checkpointed"] = {"loss": ck_loss, "peak_bytes": ck_peak}
    finally:
        cls.supports_gradient_checkpointing = own_flag
    out["peak_ratio"] = ck_peak / peak if peak else None
    out["gradients"] = compare(grads, ck_grads)
    out["ok"] = bool(out["enable_raised"] and result.applied and ck_peak < peak and
                     out["gradients"].get("within_tolerance") and out["gradients"].get("all_finite")
                     and (own.status == fixes.NOT_NEEDED if own_flag else own.applied))
    del model, base
    torch.cuda.empty_cache()
    return out


# ---- the Mamba path -----------------------------------------------------------------------------

def mamba_part():
    import torch
    from sparkdoc import fixes

    out = {}
    for kind in ("nemotron_h", "llama"):
        model, _ = build(kind)
        r = fixes.mamba_fast_path(model)
        out[kind] = {"status": r.status, "reason": r.reason, "details": r.details}
        module = sys.modules.get(type(model).__module__)
        out[kind]["module_has_is_fast_path_available"] = hasattr(module, "is_fast_path_available")
        del model
        torch.cuda.empty_cache()
    kernels = [n for n in ("mamba_ssm", "causal_conv1d") if _imports(n)]
    out["kernels_importable"] = kernels
    nemotron = out["nemotron_h"]
    if len(kernels) < 2:  # it must say what is missing instead of setting anything
        found_right = nemotron["status"] == fixes.NOT_APPLICABLE and "do not import" in nemotron["reason"]
    else:
        found_right = nemotron["status"] in (fixes.APPLIED, fixes.NOT_NEEDED)
    out["ok"] = found_right and out["llama"]["status"] == fixes.NOT_APPLICABLE
    return out


def _imports(name):
    try:
        __import__(name)
        return True
    except Exception:
        return False


# ---- the environment --------------------------------------------------------------------------

CHILD = r"""
import json, os, sys
sys.path.insert(0, {python!r})
scrub = {scrub!r}
result = None
if scrub:
    import sparkdoc.fixes as fixes
    r = fixes.scrub_distributed_env()
    result = {{"status": r.status, "reason": r.reason, "removed": r.details.get("removed")}}
import accelerate
state = accelerate.PartialState()
print(json.dumps({{"scrub": result, "num_processes": state.num_processes,
                   "process_index": state.process_index,
                   "distributed_type": str(state.distributed_type),
                   "left": sorted(k for k in os.environ if k in ("RANK", "WORLD_SIZE", "LOCAL_RANK",
                                                                  "MASTER_ADDR", "MASTER_PORT"))}}))
"""

LAUNCH_ENV = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
              "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517", "NCCL_DEBUG": "INFO",
              "NCCL_SOCKET_IFNAME": "lo", "OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}


def child(scrub, timeout):
    env = {**os.environ, **LAUNCH_ENV}
    code = CHILD.format(python=str(ROOT / "python"), scrub=scrub)
    start = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timed_out_after_s": timeout}
    out = {"exit": p.returncode, "seconds": round(time.perf_counter() - start, 2)}
    lines = p.stdout.strip().splitlines()
    try:
        out.update(json.loads(lines[-1]))
    except (IndexError, ValueError):
        out["stderr_tail"] = p.stderr[-2000:]
    return out


def scrub_part():
    scrubbed = child(True, 120)
    contrast = child(False, 20)
    ok = (scrubbed.get("exit") == 0 and scrubbed.get("num_processes") == 1 and
          scrubbed.get("process_index") == 0 and scrubbed.get("left") == [] and
          (scrubbed.get("scrub") or {}).get("status") == "applied")
    return {"set": sorted(LAUNCH_ENV), "scrubbed": scrubbed, "without_scrub": contrast, "ok": ok}


# ---- patch_transformers on a converted MoE ----------------------------------------------------

def make_moe(folder: Path):
    """A random Qwen3-MoE of about 0.6 GB in bf16, saved in 100 MB shards."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen3MoeConfig

    config = Qwen3MoeConfig(vocab_size=8192, hidden_size=1024, intermediate_size=2048,
                            moe_intermediate_size=512, num_hidden_layers=6, num_attention_heads=8,
                            num_key_value_heads=2, head_dim=128, num_experts=16,
                            num_experts_per_tok=2, decoder_sparse_step=1, mlp_only_layers=[],
                            tie_word_embeddings=False)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
    model.save_pretrained(str(folder), max_shard_size="100MB")
    del model
    files = sorted(folder.glob("*.safetensors"))
    names = []
    from safetensors import safe_open

    for f in files:
        with safe_open(str(f), framework="pt") as st:
            names += list(st.keys())
    return {"shards": len(files), "bytes": sum(f.stat().st_size for f in files),
            "tensors_on_disk": len(names),
            "per_expert_tensors_on_disk": sum(".experts.0." in n for n in names)}


def evict(folder: Path):
    """Cold files: drop_caches as root, else each shard's clean pages with posix_fadvise."""
    from load_vs_safetensors import drop_caches

    if os.geteuid() == 0:
        drop_caches()
        return "drop_caches"
    for f in folder.glob("*.safetensors"):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return "posix_fadvise"


def load_worker(kind, folder):
    """One cold from_pretrained in this process: seconds, page cache, state_dict digest."""
    import torch
    from load_vs_safetensors import Watch, meminfo
    from transformers import AutoModelForCausalLM

    torch.zeros(1, device="cuda:0")
    folder = Path(folder)
    how = evict(folder)
    cached_before = meminfo()["Cached"]
    watch = Watch()
    start = time.perf_counter()
    stats = None
    if kind == "patched":
        import sparkdoc

        with sparkdoc.patch_transformers(device="cuda:0") as patch:
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.bfloat16)
            torch.cuda.synchronize()
            stats = patch.stats
    else:
        model = AutoModelForCausalLM.from_pretrained(str(folder), device_map={"": 0},
                                                     dtype=torch.bfloat16)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    run = {"loader": kind, "seconds": seconds, "evicted_with": how,
           "cached_before_bytes": cached_before, "cached_after_bytes": meminfo()["Cached"]}
    run.update(watch.stop())
    if stats:
        stats.pop("files", None)
        run["patch"] = stats
    digest = hashlib.sha256()
    state = model.state_dict()
    for name, t in sorted(state.items()):
        digest.update(name.encode())
        digest.update(str(t.dtype).encode())
        digest.update(str(tuple(t.shape)).encode())
        digest.update(t.detach().contiguous().reshape(-1).view(torch.uint8).cpu().numpy().tobytes())
    run.update({"sha256": digest.hexdigest(), "tensors_in_model": len(state),
                "fused_expert_tensors": sum(t.dim() == 3 for t in state.values())})
    print(json.dumps(run))


def patch_part(work: Path | None):
    """The comparison in a folder on disk: --work, else a temporary one under out/, removed after."""
    if work is not None:
        return patch_compare(work / "qwen3-moe-tiny")
    (ROOT / "out").mkdir(exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix="python_fixes_gpu.", dir=ROOT / "out"))
    try:
        return patch_compare(temporary / "qwen3-moe-tiny")
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def patch_compare(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    out = {"checkpoint": make_moe(folder)}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "python"), os.environ.get("PYTHONPATH", "")])}
    runs = {}
    for kind in ("plain", "patched", "plain", "patched"):  # twice each, alternating
        p = subprocess.run([sys.executable, str(HERE), "--worker", kind, str(folder)], env=env,
                           capture_output=True, text=True, timeout=240)
        try:
            runs.setdefault(kind, []).append(json.loads(p.stdout.strip().splitlines()[-1]))
        except (IndexError, ValueError):
            runs.setdefault(kind, []).append({"exit": p.returncode, "stderr_tail": p.stderr[-3000:]})
    out["runs"] = runs
    digests = {r.get("sha256") for rs in runs.values() for r in rs}
    out["identical_state_dict"] = len(digests) == 1 and None not in digests
    for kind, rs in runs.items():
        ok = [r for r in rs if "seconds" in r]
        if ok:
            out[kind] = {"best_seconds": min(r["seconds"] for r in ok),
                         "page_cache_growth_bytes": max(r["page_cache_growth_bytes"] for r in ok),
                         "cached_growth_bytes": max(r["cached_after_bytes"] - r["cached_before_bytes"]
                                                    for r in ok)}
    out["ok"] = out["identical_state_dict"]
    return out


# ---- the driver ----------------------------------------------------------------------------------

def environment():
    import torch

    out = {"python": sys.version.split()[0], "torch": torch.__version__,
           "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0)}
    for name in ("transformers", "peft", "accelerate", "mamba_ssm", "causal_conv1d", "unsloth"):
        try:
            out[name] = __import__(name).__version__
        except Exception as e:
            out[name] = f"not importable: {type(e).__name__}"
    import sparkdoc

    out["sparkdoc"] = sparkdoc.__version__
    out["libsparkdoc"] = sparkdoc.library_path()
    out["ok"] = True
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--part", action="append", choices=PARTS, help="only this part (repeatable)")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--work", type=Path, help="folder for the checkpoint (on disk, not tmpfs); "
                        "default a temporary folder under out/ in the repository")
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        load_worker(*args.worker)
        return 0
    parts = {
        "environment": environment,
        "checkpointing_nemotron_h": lambda: checkpointing("nemotron_h"),
        "checkpointing_llama": lambda: checkpointing("llama"),
        "mamba_fast_path": mamba_part,
        "scrub_distributed_env": scrub_part,
        "patch_transformers": lambda: patch_part(args.work),
    }
    results = {}
    for name in args.part or PARTS:
        start = time.perf_counter()
        try:
            results[name] = parts[name]()
        except Exception as e:
            results[name] = {"ok": False, "error": f"{type(e).__name__}: {e}",
                             "traceback": traceback.format_exc()[-4000:]}
        results[name]["part_seconds"] = round(time.perf_counter() - start, 2)
    report = {"ok": all(r.get("ok") for r in results.values()), "parts": results}
    text = json.dumps(report, indent=1, sort_keys=True, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
