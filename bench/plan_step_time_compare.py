#!/usr/bin/env python3
"""`sparkdoc plan`'s step-time estimate against the steps bench/plan_step_time.py measured.

For every measured run it plans the same shape (the header-only checkpoint the script wrote)
with the same LoRA, sequence, batch and checkpointing, at the measured GEMM rate and bandwidth,
and prints predicted against measured seconds per step, and the predicted peak allocated
memory against torch.cuda.max_memory_allocated of the same steps.

    python3 bench/plan_step_time_compare.py --sparkdoc build-release/src/cli/sparkdoc \
        --steps /tmp/steps
"""
import argparse
import json
import os
import subprocess
import sys

TARGETS = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparkdoc", required=True)
    ap.add_argument("--steps", required=True)
    args = ap.parse_args()
    data = json.load(open(os.path.join(args.steps, "step_time.json")))
    hw = data["hardware"]
    print(f"{hw['gpu']}: {hw['matmul_bf16_tflops']} TFLOP/s bf16 GEMM, {hw['copy_gb_s']} GB/s copy; "
          f"torch {data['versions']['torch']}, transformers {data['versions']['transformers']}, "
          f"peft {data['versions']['peft']}")
    print(f"{'model':<15} {'seq':>5} {'batch':>5} {'ckpt':>5} {'measured s':>11} {'predicted s':>12}"
          f" {'ratio':>6} {'alloc GB':>9} {'predicted':>9} {'ratio':>6}")
    worst = 0.0
    for r in data["runs"]:
        if "step_s" not in r:
            print(f"{r['model']:<15} {r.get('seq', ''):>5} {r.get('batch', ''):>5} "
                  f"{str(r.get('grad_ckpt', '')):>5} {'error':>11}  {r.get('error', '')[:60]}")
            continue
        argv = [args.sparkdoc, "plan", os.path.join(args.steps, r["model"]), "--lora", "16",
                "--targets", TARGETS, "--seq", str(r["seq"]), "--batch", str(r["batch"]),
                "--optim", "adamw", "--no-memory", "--json",
                "--tflops", str(hw["matmul_bf16_tflops"]), "--bandwidth", str(hw["copy_gb_s"])]
        if r["grad_ckpt"]:
            argv.append("--grad-ckpt")
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{r['model']}: sparkdoc failed: {p.stderr.strip()[:200]}")
            continue
        plan = json.loads(p.stdout)
        pred = plan["time"]["micro_batch_s"]
        alloc = r["peak_allocated"] / 1e9
        alloc_pred = plan["memory"]["peak_allocated"] / 1e9
        ratio = pred / r["step_s"]
        if not r["model"].startswith("qwen3-30b"):
            worst = max(worst, abs(ratio - 1))
        print(f"{r['model']:<15} {r['seq']:>5} {r['batch']:>5} {str(r['grad_ckpt']):>5} "
              f"{r['step_s']:>11.3f} {pred:>12.3f} {ratio:>6.2f} {alloc:>9.2f} {alloc_pred:>9.2f} "
              f"{alloc_pred / alloc:>6.2f}")
    print(f"worst dense error: {100 * worst:.0f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
