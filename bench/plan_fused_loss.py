#!/usr/bin/env python3
"""The loss head's peak per logit at seed 001's sizes, by how the loss is computed.

Qwen3.5-35B-A3B has hidden 2048 and a 248,320-token vocabulary: at seq 8192 x batch 2 its
logits alone are 4.07e9 numbers. How many bytes each of them costs at the peak depends on the
loss path, and `sparkdoc plan` charges Unsloth runs 4 B per logit. This measures, on the GPU,
for T = batch x seq tokens and a bf16 lm_head with frozen weights:

  - transformers: logits = lm_head(hidden), then cross-entropy over logits.float(), backward
    (what a plain Trainer runs);
  - fused: the forward computes the loss and its gradient with respect to the hidden states in
    one go, chunk by chunk over the tokens (torch.func.grad_and_value of linear + float +
    cross-entropy), the scheme of Unsloth's fused cross-entropy, eager and under
    torch.compile(dynamic=True, fullgraph=True), with one chunk (what unsloth-zoo's 2026.3
    chunk rule gives on a GB10, see docs/BENCHMARKS.md) and with chunks of at most 4 GiB of
    fp32 logits.

Measured: torch.cuda.max_memory_allocated over what was allocated before the loss (hidden
states and lm_head weight), divided by T x V.

    python3 bench/plan_fused_loss.py --out .
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan_memory import release_gpu  # noqa: E402

HIDDEN = 2048
VOCAB = 248320


def ce_sum(hidden, weight, labels, divisor):
    logits = F.linear(hidden, weight)
    return F.cross_entropy(logits.float(), labels, reduction="sum") / divisor


def fused(hidden, weight, labels, chunks, step):
    """Loss and d(loss)/d(hidden) computed in forward, `chunks` pieces of the tokens."""
    divisor = (labels != -100).sum().float()
    grad = torch.empty_like(hidden)
    total = torch.zeros((), device=hidden.device)
    for h, g, y in zip(hidden.chunk(chunks), grad.chunk(chunks), labels.chunk(chunks)):
        total += step(h, g, weight, y, divisor)
    return total, grad


def make_step(compiled):
    def step(h, g, weight, y, divisor):
        dh, loss = torch.func.grad_and_value(ce_sum, argnums=0)(h, weight, y, divisor)
        g.copy_(dh)
        return loss.detach()
    if compiled:
        return torch.compile(step, dynamic=True, fullgraph=True)
    return step


def chunks_capped(tokens, cap_bytes):
    return max(1, math.ceil(tokens * VOCAB * 4 / cap_bytes))


def measure(kind, tokens, chunks=1, steps=None):
    release_gpu()
    weight = torch.randn(VOCAB, HIDDEN, device="cuda", dtype=torch.bfloat16) * 0.02
    hidden = torch.randn(tokens, HIDDEN, device="cuda", dtype=torch.bfloat16,
                         requires_grad=True)
    labels = torch.randint(0, VOCAB, (tokens,), device="cuda")
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.monotonic()
    if kind == "transformers":
        logits = F.linear(hidden, weight)
        loss = F.cross_entropy(logits.float(), labels, reduction="mean")
        loss.backward()
        del logits
    else:
        loss, grad = fused(hidden.detach(), weight, labels, chunks, steps)
        del grad
    torch.cuda.synchronize()
    seconds = time.monotonic() - t0
    peak = torch.cuda.max_memory_allocated() - base
    out = {"kind": kind, "tokens": tokens, "chunks": chunks, "peak_allocated": peak,
           "bytes_per_logit": round(peak / (tokens * VOCAB), 2), "seconds": round(seconds, 3),
           "loss": float(loss)}
    del weight, hidden, labels, loss
    release_gpu()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    info = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
            "hidden": HIDDEN, "vocab": VOCAB}
    print(json.dumps(info), flush=True)
    eager, compiled = make_step(False), make_step(True)
    rows = []
    for seq in (2048, 8192):
        tokens = 2 * seq
        cases = [("transformers", 1, None), ("fused_eager", 1, eager),
                 ("fused_compiled", 1, compiled),
                 ("fused_compiled", chunks_capped(tokens, 4 << 30), compiled)]
        if seq == 2048:
            cases.insert(0, ("fused_compiled", 1, compiled))  # warm-up: compiles once
        for kind, chunks, step in cases:
            try:
                row = measure(kind, tokens, chunks, step)
            except torch.cuda.OutOfMemoryError as e:
                row = {"kind": kind, "tokens": tokens, "chunks": chunks,
                       "error": f"OOM: {str(e)[:160]}"}
            except Exception as e:  # recorded, the sweep goes on
                row = {"kind": kind, "tokens": tokens, "chunks": chunks,
                       "error": f"{type(e).__name__}: {str(e)[:300]}"}
            row["seq"] = seq
            rows.append(row)
            print(json.dumps(row), flush=True)
    rows = [r for i, r in enumerate(rows) if i != 0]  # drop the warm-up
    print()
    print(f"{'loss':<16} {'seq':>5} {'chunks':>6} {'peak GB':>8} {'B/logit':>8} {'s':>7}")
    for r in rows:
        if "error" in r:
            print(f"{r['kind']:<16} {r['seq']:>5} {r['chunks']:>6}  {r['error'][:80]}")
            continue
        print(f"{r['kind']:<16} {r['seq']:>5} {r['chunks']:>6} {r['peak_allocated'] / 1e9:>8.2f} "
              f"{r['bytes_per_logit']:>8.2f} {r['seconds']:>7.2f}")
    with open(os.path.join(args.out, "plan_fused_loss.json"), "w") as f:
        json.dump({"info": info, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
