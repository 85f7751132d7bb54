#!/usr/bin/env python3
"""Peak GPU memory of short real LoRA runs against `sparkdoc plan`'s prediction.

Two small dense models (configs written out in code, random weights made on the GPU, nothing
downloaded), LoRA r=16 on the attention and MLP projections through PEFT, torch AdamW, bf16
autocast as HF Trainer runs it, random tokens, a few optimizer steps, with and without gradient
checkpointing. For each run: torch.cuda.max_memory_reserved / max_memory_allocated, and what
`sparkdoc plan --json` predicts for the same model (header-only checkpoint written from the
model's tensors), seq, batch and checkpointing.

    python3 bench/plan_memory.py --sparkdoc build-release/src/cli/sparkdoc --work /tmp/pm --out .
"""
import argparse
import gc
import json
import os
import struct
import subprocess
import sys
import time

import torch
import transformers
from peft import LoraConfig, get_peft_model

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def models():
    return [
        ("qwen2.5-0.5b", lambda: transformers.Qwen2Config(
            hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
            num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768,
            rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True),
         "Qwen2ForCausalLM"),
        ("llama-3.2-1b", lambda: transformers.LlamaConfig(
            hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
            num_key_value_heads=8, head_dim=64, vocab_size=128256, max_position_embeddings=131072,
            rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=True),
         "LlamaForCausalLM"),
    ]


def write_header_only(directory, model, config):
    os.makedirs(directory, exist_ok=True)
    config.to_json_file(os.path.join(directory, "config.json"))
    names = {"BF16": 2, "F32": 4}
    header = {}
    at = 0
    for name, p in model.named_parameters():
        dt = "BF16" if p.dtype == torch.bfloat16 else "F32"
        nbytes = p.numel() * names[dt]
        header[name] = {"dtype": dt, "shape": list(p.shape), "data_offsets": [at, at + nbytes]}
        at += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(os.path.join(directory, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        f.truncate(8 + len(raw) + at)


def predict(binary, directory, seq, batch, ckpt):
    argv = [binary, "plan", directory, "--lora", "16", "--seq", str(seq), "--batch", str(batch),
            "--optim", "adamw", "--no-memory", "--json"]
    if ckpt:
        argv.append("--grad-ckpt")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr[:300]}
    return json.loads(proc.stdout)["memory"]


def run_one(arch, config, seq, batch, ckpt, steps):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    with torch.device("cuda"):
        model = getattr(transformers, arch)._from_config(config, dtype=torch.bfloat16)
    after_load = torch.cuda.memory_allocated() - base
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model.config.use_cache = False
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=16, lora_dropout=0.0,
                                             target_modules=TARGETS, bias="none"))
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    vocab = config.vocab_size
    timings = []
    for _ in range(steps):
        ids = torch.randint(0, vocab, (batch, seq), device="cuda")
        t0 = time.monotonic()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del out
        torch.cuda.synchronize()
        timings.append(time.monotonic() - t0)
    result = {"reserved": torch.cuda.max_memory_reserved(),
              "allocated": torch.cuda.max_memory_allocated() - base,
              "after_load": after_load, "step_s": timings[-1]}
    del model, opt
    release_gpu()
    return result


def release_gpu():
    """Frees what the last run left on the GPU so the next run's peak is its own."""
    gc.collect()
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparkdoc", required=True)
    ap.add_argument("--work", default="/tmp/plan_memory")
    ap.add_argument("--out", default=".")
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()
    binary = os.path.abspath(args.sparkdoc)
    shapes = [(1024, 2), (2048, 4), (4096, 2)]
    rows = []
    for name, make, arch in models():
        config = make()
        with torch.device("meta"):
            meta = getattr(transformers, arch)._from_config(config, dtype=torch.bfloat16)
        d = os.path.join(args.work, name)
        write_header_only(d, meta, config)
        del meta
        for seq, batch in shapes:
            for ckpt in (False, True):
                try:
                    m = run_one(arch, config, seq, batch, ckpt, args.steps)
                except torch.cuda.OutOfMemoryError as e:
                    m = {"error": f"OOM: {str(e)[:120]}"}
                    release_gpu()
                p = predict(binary, d, seq, batch, ckpt)
                row = {"model": name, "seq": seq, "batch": batch, "grad_ckpt": ckpt,
                       "measured": m, "predicted": p}
                if "error" not in m and "error" not in p:
                    row["ratio_reserved"] = p["peak_reserved"] / m["reserved"]
                    row["ratio_allocated"] = p["peak_allocated"] / m["allocated"]
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print(f"{'model':<14} {'seq':>5} {'batch':>5} {'ckpt':>5} {'measured GB':>12} "
          f"{'predicted GB':>13} {'ratio':>7} {'alloc meas':>11} {'alloc pred':>11}")
    for r in rows:
        m, p = r["measured"], r["predicted"]
        if "error" in m or "error" in p:
            print(f"{r['model']:<14} {r['seq']:>5} {r['batch']:>5} {str(r['grad_ckpt']):>5}  "
                  f"{m.get('error', '')} {p.get('error', '')}")
            continue
        print(f"{r['model']:<14} {r['seq']:>5} {r['batch']:>5} {str(r['grad_ckpt']):>5} "
              f"{m['reserved'] / 1e9:>12.2f} {p['peak_reserved'] / 1e9:>13.2f} "
              f"{r['ratio_reserved']:>7.3f} {m['allocated'] / 1e9:>11.2f} "
              f"{p['peak_allocated'] / 1e9:>11.2f}")
    with open(os.path.join(args.out, "plan_memory.json"), "w") as f:
        json.dump({"rows": rows, "torch": torch.__version__,
                   "transformers": transformers.__version__,
                   "device": torch.cuda.get_device_name(0)}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
