#!/usr/bin/env python3
"""Qwen3.5-MoE's layers at seed 001's sizes on the GPU, against `sparkdoc plan`.

Seed 001 trained Qwen3.5-35B-A3B at seq 2048 x batch 2 and saw seq 8192 run out of memory in
the backward pass. Its stack (PyTorch, transformers, PEFT, Unsloth, bitsandbytes, xformers) has
no flash-linear-attention and no causal-conv1d, so transformers runs the Gated DeltaNet layers
through its own torch fallback. This measures what one layer of each kind holds per token on
that path, full size (hidden 2048, 256 experts, top-8), four layers of one kind at a time, random
weights made on the GPU, LoRA r=16 through PEFT on the attention and shared-expert projections:

  - with gradient checkpointing, a cheap loss on the last hidden state (no logits): the peak
    is the checkpointed inputs plus one layer recomputed and its backward;
  - without checkpointing, the same: all four layers' saved tensors;
  - with checkpointing and the model's own loss (labels): the loss head added.

Beside each, what `sparkdoc plan --json` predicts for the same header-only checkpoint.

    python3 bench/plan_qwen35_layers.py --sparkdoc build-release/src/cli/sparkdoc --out .
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

import torch
import transformers
from peft import LoraConfig, get_peft_model

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_memory import release_gpu, write_header_only  # noqa: E402

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def text_config(kind, layers):
    cls = getattr(transformers, "Qwen3_5MoeTextConfig")
    cfg = cls()
    values = dict(hidden_size=2048, num_hidden_layers=layers, num_attention_heads=16,
                  num_key_value_heads=2, head_dim=256, num_experts=256, num_experts_per_tok=8,
                  moe_intermediate_size=512, shared_expert_intermediate_size=512,
                  vocab_size=248320, linear_num_key_heads=16, linear_num_value_heads=32,
                  linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4,
                  tie_word_embeddings=False, use_cache=False)
    for k, v in values.items():
        setattr(cfg, k, v)
    cfg.layer_types = [kind] * layers
    cfg.architectures = ["Qwen3_5MoeForCausalLM"]
    return cfg


def fast_path():
    out = {m: importlib.util.find_spec(m) is not None for m in ("fla", "causal_conv1d")}
    try:
        mod = importlib.import_module("transformers.models.qwen3_5_moe.modeling_qwen3_5_moe")
        out["is_fast_path_available"] = bool(getattr(mod, "is_fast_path_available", False))
    except Exception as e:  # a transformers without the module
        out["error"] = str(e)[:200]
    return out


def predict(binary, directory, seq, batch, ckpt, attention):
    argv = [binary, "plan", directory, "--lora", "16", "--targets", ",".join(TARGETS),
            "--seq", str(seq), "--batch", str(batch), "--optim", "adamw", "--no-memory",
            "--attention", attention, "--json"]
    if ckpt:
        argv.append("--grad-ckpt")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr[:300]}
    return json.loads(proc.stdout)["memory"]


def run_one(config, seq, batch, ckpt, labels, attention):
    release_gpu()
    with torch.device("cuda"):
        model = transformers.Qwen3_5MoeForCausalLM._from_config(
            config, dtype=torch.bfloat16, attn_implementation=attention)
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=16, lora_dropout=0.0,
                                             target_modules=TARGETS, bias="none"))
    model.train()
    inner = model.get_base_model()
    ids = torch.randint(0, config.vocab_size, (batch, seq), device="cuda")
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.monotonic()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        if labels:
            loss = inner(input_ids=ids, labels=ids).loss
        else:
            hidden = inner.model(input_ids=ids).last_hidden_state
            loss = hidden.float().square().mean()
    loss.backward()
    torch.cuda.synchronize()
    step_s = time.monotonic() - t0
    result = {"allocated": torch.cuda.max_memory_allocated() - base,
              "reserved": torch.cuda.max_memory_reserved(), "step_s": step_s}
    del model, inner, loss, ids
    release_gpu()
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparkdoc", required=True)
    ap.add_argument("--work", default="/tmp/plan_qwen35_layers")
    ap.add_argument("--out", default=".")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--attention", default="sdpa", choices=("sdpa", "eager"),
                    help="eager: only the full-attention layers, seq 2048-8192 checkpointed, "
                         "2048-4096 not")
    args = ap.parse_args()
    binary = os.path.abspath(args.sparkdoc)
    batch = 2
    rows = []
    info = {"torch": torch.__version__, "transformers": transformers.__version__,
            "device": torch.cuda.get_device_name(0), "fast_path": fast_path(),
            "attention": args.attention}
    print(json.dumps(info), flush=True)
    cases = [("linear_attention", s, c, False) for s in (2048, 4096, 8192) for c in (True, False)]
    cases += [("full_attention", s, c, False) for s in (2048, 8192) for c in (True, False)]
    cases += [("linear_attention", s, True, True) for s in (2048, 8192)]
    if args.attention == "eager":
        cases = [("full_attention", s, True, False) for s in (2048, 4096, 8192)]
        cases += [("full_attention", s, False, False) for s in (2048, 4096)]
    for kind, seq, ckpt, labels in cases:
        config = text_config(kind, args.layers)
        d = os.path.join(args.work, kind)
        if not os.path.exists(os.path.join(d, "config.json")):
            with torch.device("meta"):
                meta = transformers.Qwen3_5MoeForCausalLM._from_config(config,
                                                                       dtype=torch.bfloat16)
            write_header_only(d, meta, config)
            del meta
        try:
            m = run_one(config, seq, batch, ckpt, labels, args.attention)
        except torch.cuda.OutOfMemoryError as e:
            m = {"error": f"OOM: {str(e)[:160]}"}
        except Exception as e:  # recorded, the sweep goes on
            m = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        p = predict(binary, d, seq, batch, ckpt, args.attention)
        row = {"layers": kind, "attention": args.attention, "seq": seq, "batch": batch,
               "grad_ckpt": ckpt, "labels": labels,
               "tokens": seq * batch, "measured": m, "predicted": p}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print()
    print(f"{'layers':<17} {'seq':>5} {'ckpt':>5} {'labels':>6} {'measured GB':>12} "
          f"{'KB/token':>9} {'plan act GB':>12} {'plan loss GB':>13}")
    for r in rows:
        m, p = r["measured"], r["predicted"]
        if "error" in m or "error" in p:
            print(f"{r['layers']:<17} {r['seq']:>5} {str(r['grad_ckpt']):>5} "
                  f"{str(r['labels']):>6}  {m.get('error', '')[:80]} {p.get('error', '')[:80]}")
            continue
        print(f"{r['layers']:<17} {r['seq']:>5} {str(r['grad_ckpt']):>5} {str(r['labels']):>6} "
              f"{m['allocated'] / 1e9:>12.2f} {m['allocated'] / r['tokens'] / 1e3:>9.1f} "
              f"{p['activations'] / 1e9:>12.2f} {p['loss_head'] / 1e9:>13.2f}")
    name = "plan_qwen35_layers.json" if args.attention == "sdpa" else "plan_qwen35_eager.json"
    with open(os.path.join(args.out, name), "w") as f:
        json.dump({"info": info, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
