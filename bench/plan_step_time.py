#!/usr/bin/env python3
"""Measured training steps, for `sparkdoc plan`'s step-time estimate (issue 14, item 5).

On the GPU it measures what the estimate is built from, then the steps it predicts:
  - the bf16 matrix-multiply rate (8192^3 GEMMs) and the device-memory copy bandwidth;
  - LoRA steps (r=16 on q,k,v,o,gate,up,down, torch AdamW, SDPA, bf16 weights, random weights
    at the model's real shapes: nothing downloaded) for three dense sizes and one MoE, at
    seq 2048 with batch 1 and 4, gradient checkpointing off and on; the median of 8 timed steps
    after 3 warm-up steps, and the peak memory.
It writes each shape's config.json and a header-only checkpoint, so that `sparkdoc plan` can
predict the same steps on any machine (bench/plan_step_time_compare.py).

    python3 bench/plan_step_time.py --work /tmp/steps --out results/
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_sweep import write_header_only  # noqa: E402

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def shapes():
    c = transformers.Qwen2Config
    return [
        ("qwen2.5-0.5b", lambda: c(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                                   num_attention_heads=14, num_key_value_heads=2,
                                   vocab_size=151936, tie_word_embeddings=True,
                                   max_position_embeddings=32768)),
        ("qwen2.5-1.5b", lambda: c(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                                   num_attention_heads=12, num_key_value_heads=2,
                                   vocab_size=151936, tie_word_embeddings=True,
                                   max_position_embeddings=32768)),
        ("qwen2.5-7b", lambda: c(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                                 num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
                                 tie_word_embeddings=False, max_position_embeddings=32768)),
        # Held out of the fit: checks of the fitted constants on other shapes and lengths.
        ("qwen2.5-3b", lambda: c(hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
                                 num_attention_heads=16, num_key_value_heads=2, vocab_size=151936,
                                 tie_word_embeddings=True, max_position_embeddings=32768)),
        ("llama-3.2-1b", lambda: transformers.LlamaConfig(
            hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
            num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True, head_dim=64,
            max_position_embeddings=131072)),
        ("qwen2.5-14b", lambda: c(hidden_size=5120, intermediate_size=13824, num_hidden_layers=48,
                                  num_attention_heads=40, num_key_value_heads=8, vocab_size=152064,
                                  tie_word_embeddings=False, max_position_embeddings=32768)),
        ("qwen3-30b-a3b", lambda: transformers.Qwen3MoeConfig(
            hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
            num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
            num_experts=128, num_experts_per_tok=8, vocab_size=151936, decoder_sparse_step=1,
            mlp_only_layers=[], norm_topk_prob=True, tie_word_embeddings=False)),
    ]


def timed(fn, warmup=3, runs=8):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def hardware():
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    med, best = timed(lambda: a @ b, warmup=5, runs=20)
    tflops = 2 * n ** 3 / med / 1e12
    del a, b
    x = torch.empty(1 << 31, device="cuda", dtype=torch.uint8)  # 2 GiB
    y = torch.empty_like(x)
    cmed, _ = timed(lambda: y.copy_(x), warmup=3, runs=10)
    bw = 2 * x.numel() / cmed / 1e9  # read + write
    del x, y
    torch.cuda.empty_cache()
    return {"gpu": torch.cuda.get_device_name(0), "matmul_bf16_tflops": round(tflops, 1),
            "copy_gb_s": round(bw, 1)}


def step_runs(name, make_config, work, seqs=(2048,), batches=(1, 4)):
    from peft import LoraConfig, get_peft_model
    config = make_config()
    with torch.device("meta"):
        meta = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from plan_vs_peft import checkpoint_tensors
    write_header_only(os.path.join(work, name), checkpoint_tensors(meta), config)
    del meta
    out = []
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16,
                                                              attn_implementation="sdpa")
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=16, lora_dropout=0.0,
                                             target_modules=TARGETS))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, foreach=True)
    vocab = config.vocab_size
    for ckpt in (False, True):
        if ckpt:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.enable_input_require_grads()
        for seq, batch in [(q, b) for q in seqs for b in batches]:
            ids = torch.randint(0, vocab, (batch, seq), device="cuda")

            def step():
                loss = model(input_ids=ids, labels=ids).loss
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
            torch.cuda.reset_peak_memory_stats()
            try:
                med, best = timed(step)
                rec = {"model": name, "seq": seq, "batch": batch, "grad_ckpt": ckpt,
                       "step_s": round(med, 4), "step_s_min": round(best, 4),
                       "tokens_per_s": round(batch * seq / med, 1),
                       "peak_allocated": torch.cuda.max_memory_allocated()}
            except torch.OutOfMemoryError as e:
                rec = {"model": name, "seq": seq, "batch": batch, "grad_ckpt": ckpt,
                       "error": f"OOM: {str(e)[:120]}"}
            print(json.dumps(rec), flush=True)
            out.append(rec)
            del ids
            torch.cuda.empty_cache()
    del model, opt, params
    torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/steps")
    ap.add_argument("--out", default=".")
    ap.add_argument("--only", default="")
    ap.add_argument("--seqs", default="2048")
    ap.add_argument("--batches", default="1,4")
    args = ap.parse_args()
    import peft
    os.makedirs(args.work, exist_ok=True)
    hw = hardware()
    print(json.dumps(hw), flush=True)
    runs = []
    only = [o for o in args.only.split(",") if o]
    for name, make in shapes():
        if only and name not in only:
            continue
        try:
            runs += step_runs(name, make, args.work,
                              [int(x) for x in args.seqs.split(",")],
                              [int(x) for x in args.batches.split(",")])
        except Exception as e:  # noqa: BLE001
            print(f"{name}: {type(e).__name__}: {e}", flush=True)
            runs.append({"model": name, "error": f"{type(e).__name__}: {str(e)[:200]}"})
    result = {"hardware": hw, "runs": runs,
              "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                           "peft": peft.__version__}}
    for path in (os.path.join(args.out, "step_time.json"), os.path.join(args.work, "step_time.json")):
        with open(path, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
