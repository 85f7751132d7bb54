#!/usr/bin/env python3
"""Every architecture transformers registers, counted by PEFT: the data `sparkdoc plan` is
compared against (issue 14's sweep).

For each causal-LM and image-text-to-text architecture in transformers' auto mappings the
script builds the model at its default config on the meta device (no weights, no download),
writes a header-only checkpoint with config.json in two layouts (transformers 5's in-memory
layout, "v5", and the layout save_pretrained reverts it to, "hub", when they differ), and records
what PEFT's get_nb_trainable_parameters() says for four variants:

    full          every parameter
    default       LoRA r=16 on q,k,v,o,gate,up,down (sparkdoc plan's default targets)
    all-linear    LoRA r=8, target_modules="all-linear"
    experts       LoRA r=32 on the default targets plus target_parameters for every 3-D
                  routed-expert parameter (only where the model has them)

An architecture PEFT refuses keeps PEFT's error. sparkdoc is not run here: bench/plan_sweep_compare.py
runs `sparkdoc plan --json` over the written checkpoints on any machine and makes the table.

    python3 bench/plan_sweep.py --work /tmp/sweep --jobs 14
    tar -C /tmp/sweep -cJf sweep.tar.xz .
"""
import argparse
import json
import multiprocessing
import os
import signal
import struct
import sys
import time
import traceback

DEFAULT_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def architectures():
    from transformers.models.auto import modeling_auto as ma
    seen, out = set(), []
    for task, mapping in (("causal-lm", ma.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES),
                          ("image-text-to-text", ma.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)):
        for model_type, names in mapping.items():
            for cls_name in (names if isinstance(names, (list, tuple)) else [names]):
                if cls_name in seen:
                    continue
                seen.add(cls_name)
                out.append((task, model_type, cls_name))
    return out


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def dtype_entry(t):
    import torch
    table = {torch.bfloat16: ("BF16", 2), torch.float16: ("F16", 2), torch.float32: ("F32", 4),
             torch.float64: ("F64", 8), torch.int64: ("I64", 8), torch.int32: ("I32", 4),
             torch.int16: ("I16", 2), torch.int8: ("I8", 1), torch.uint8: ("U8", 1),
             torch.bool: ("BOOL", 1)}
    return table.get(t.dtype, ("F32", 4))


def write_header_only(directory, tensors, config):
    os.makedirs(directory, exist_ok=True)
    config.to_json_file(os.path.join(directory, "config.json"))
    header = {"__metadata__": {"format": "pt"}}
    at = 0
    for name in sorted(tensors):
        t = tensors[name]
        dt, size = dtype_entry(t)
        numel = 1
        for d in t.shape:
            numel *= int(d)
        header[name] = {"dtype": dt, "shape": [int(d) for d in t.shape],
                        "data_offsets": [at, at + numel * size]}
        at += numel * size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(os.path.join(directory, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
    return len(tensors), at


def _output_name(model):
    try:
        out = model.get_output_embeddings()
    except Exception:  # noqa: BLE001
        return None
    for n, m in model.named_modules():
        if m is out:
            return n
    return None


def peft_count_named(model, variant):
    """PEFT's counts and the names of the modules it wrapped (LoraLayer instances)."""
    import copy
    import torch
    from peft import LoraConfig, get_peft_model
    from peft.tuners.lora import LoraLayer
    if variant["method"] == "full":
        total = sum(p.numel() for p in model.parameters())
        return {"trainable": total, "all": total, "modules": 0}, []
    kwargs = dict(r=variant["r"], lora_alpha=variant["r"], lora_dropout=0.0, bias="none")
    kwargs["target_modules"] = variant["targets"]
    if variant.get("target_parameters"):
        kwargs["target_parameters"] = variant["target_parameters"]
    m = copy.deepcopy(model)
    with torch.device("meta"):
        pm = get_peft_model(m, LoraConfig(**kwargs))
    trainable, allp = pm.get_nb_trainable_parameters()
    wrapped = [n for n, mod in pm.named_modules() if isinstance(mod, LoraLayer)]
    return {"trainable": int(trainable), "all": int(allp), "modules": len(wrapped)}, wrapped


def one(args):
    task, model_type, cls_name, work = args
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(240)
    rec = {"task": task, "model_type": model_type, "class": cls_name}
    t0 = time.monotonic()
    try:
        import torch
        torch.set_num_threads(1)
        import transformers
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from plan_vs_peft import checkpoint_tensors, expert_parameters, hub_layout
        cls = getattr(transformers, cls_name, None)
        if cls is None:
            rec["build_error"] = f"transformers has no class {cls_name}"
            return rec
        config, model, tried = None, None, []
        for how in ("default", "text_config", "is_decoder"):
            try:
                config = transformers.AutoConfig.for_model(model_type)
                if how == "text_config":
                    if getattr(config, "text_config", None) is None:
                        continue
                    config = config.text_config
                if how == "is_decoder":
                    config.is_decoder = True
                with torch.device("meta"):
                    model = cls._from_config(config, dtype=torch.bfloat16)
                model.eval()
                rec["built_with"] = how
                break
            except Timeout:
                raise
            except Exception as e:  # noqa: BLE001
                tried.append(f"{how}: {type(e).__name__}: {str(e)[:200]}")
                model = None
        if model is None:
            rec["build_error"] = tried[0] if tried else "not built"
            rec["build_tries"] = tried
            return rec
        rec["build_s"] = round(time.monotonic() - t0, 2)
        entries = checkpoint_tensors(model)
        layouts = {"v5": entries}
        hub = hub_layout(model, entries)
        if hub is not None:
            layouts["hub"] = hub
        rec["layouts"] = {}
        for layout, tensors in layouts.items():
            d = os.path.join(work, cls_name, layout)
            n, nbytes = write_header_only(d, tensors, config)
            rec["layouts"][layout] = {"tensors": n, "bytes": nbytes}
        params = {n: list(p.shape) for n, p in model.named_parameters()}
        structure = {
            "parameters": params,
            "tied": sorted(n for n, _ in model.named_parameters(remove_duplicate=False)
                           if n not in params),
            "buffers": sorted(n for n in entries if n not in params),
            "modules": {n: type(m).__name__ for n, m in model.named_modules()
                        if any(True for _ in m.parameters(recurse=False))},
            "output_embeddings": _output_name(model),
            "peft_wrapped": {},
        }
        experts = expert_parameters(model)
        variants = [{"label": "full", "method": "full"},
                    {"label": "default", "method": "lora", "r": 16, "targets": DEFAULT_TARGETS},
                    {"label": "all-linear", "method": "lora", "r": 8, "targets": "all-linear"}]
        if experts:
            variants.append({"label": "experts", "method": "lora", "r": 32,
                             "targets": DEFAULT_TARGETS, "target_parameters": experts})
        rec["variants"] = []
        for v in variants:
            try:
                ref, wrapped = peft_count_named(model, v)
                structure["peft_wrapped"][v["label"]] = wrapped
            except Timeout:
                raise
            except Exception as e:  # noqa: BLE001
                ref = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
            rec["variants"].append({"variant": v, "peft": ref})
        with open(os.path.join(work, cls_name, "modules.json"), "w") as f:
            json.dump(structure, f, indent=0)
    except Timeout:
        rec["build_error"] = "timed out after 240 s"
    except Exception as e:  # noqa: BLE001
        rec["build_error"] = f"{type(e).__name__}: {str(e)[:300]}"
        rec["trace"] = traceback.format_exc()[-1500:]
    finally:
        signal.alarm(0)
    rec["seconds"] = round(time.monotonic() - t0, 2)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/sweep")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    import peft
    import torch
    import transformers
    os.makedirs(args.work, exist_ok=True)
    archs = [a for a in architectures() if args.only in a[2]]
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, peft "
          f"{peft.__version__}: {len(archs)} architectures, {args.jobs} workers", flush=True)
    started = time.monotonic()
    records = []
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(args.jobs, maxtasksperchild=8) as pool:
        for i, rec in enumerate(pool.imap_unordered(one, [a + (args.work,) for a in archs])):
            records.append(rec)
            if (i + 1) % 25 == 0:
                print(f"  {i + 1}/{len(archs)} after {time.monotonic() - started:.0f} s",
                      flush=True)
    records.sort(key=lambda r: r["class"])
    with open(os.path.join(args.work, "peft.json"), "w") as f:
        json.dump({"versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                                "peft": peft.__version__},
                   "seconds": round(time.monotonic() - started, 1), "records": records}, f, indent=1)
    built = sum(1 for r in records if "build_error" not in r)
    print(f"{built} of {len(records)} built in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
