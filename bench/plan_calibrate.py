#!/usr/bin/env python3
"""Fits the planner's two activation constants to measured peaks (bench/plan_memory.py).

The planner predicts, for a LoRA run without checkpointing,
    peak_allocated = weights + adapter + optimizer + gradients
                     + layer_scale * (per-layer activations) + (loss_bytes_per_logit / c0) * loss_head
where the JSON it writes gives every term at the constants c0 it was built with. Least squares
over the runs without checkpointing gives layer_scale and loss_bytes_per_logit; the runs with
checkpointing then check the fit. Reserved/allocated gives the allocator slack.

    python3 bench/plan_calibrate.py plan_memory.json --loss-constant 14 --layer-scale 1
"""
import argparse
import json
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("measurements")
    ap.add_argument("--loss-constant", type=float, default=14.0, help="c0 the JSON was made with")
    ap.add_argument("--layer-scale", type=float, default=1.0, help="scale the JSON was made with")
    args = ap.parse_args()
    rows = [r for r in json.load(open(args.measurements))["rows"]
            if "error" not in r["measured"] and "error" not in r["predicted"]]
    xs, ys = [], []
    for r in rows:
        if r["grad_ckpt"]:
            continue
        p, m = r["predicted"], r["measured"]
        static = p["weights"] + p["adapter"] + p["optimizer"] + p["gradients"]
        loss = p["loss_head"]
        layers = (p["activations_without_ckpt"] - loss) / args.layer_scale
        xs.append((layers, loss / args.loss_constant))
        ys.append(m["allocated"] - static)
    # 2x2 normal equations for y = a*layers + b*loss_unit.
    s11 = sum(x[0] * x[0] for x in xs)
    s12 = sum(x[0] * x[1] for x in xs)
    s22 = sum(x[1] * x[1] for x in xs)
    t1 = sum(x[0] * y for x, y in zip(xs, ys))
    t2 = sum(x[1] * y for x, y in zip(xs, ys))
    det = s11 * s22 - s12 * s12
    a = (t1 * s22 - t2 * s12) / det
    b = (s11 * t2 - s12 * t1) / det
    print(f"layer_scale = {a:.3f}, loss_bytes_per_logit = {b:.2f} (from {len(xs)} runs)")
    slack = [r["measured"]["reserved"] / r["measured"]["allocated"] - 1 for r in rows]
    print(f"allocator slack: median {statistics.median(slack):.3f}, "
          f"min {min(slack):.3f}, max {max(slack):.3f}")
    for r in rows:
        p, m = r["predicted"], r["measured"]
        print(f"{r['model']:<14} seq {r['seq']:>5} batch {r['batch']} ckpt {str(r['grad_ckpt']):<5} "
              f"alloc {m['allocated'] / 1e9:6.2f} GB reserved {m['reserved'] / 1e9:6.2f} GB "
              f"predicted reserved {p['peak_reserved'] / 1e9:6.2f} GB "
              f"ratio {p['peak_reserved'] / m['reserved']:.3f}")


if __name__ == "__main__":
    main()
