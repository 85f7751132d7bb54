#!/usr/bin/env python3
"""`sparkdoc plan` against PEFT over the sweep bench/plan_sweep.py wrote (no GPU, no torch).

For every architecture, layout and variant it runs `sparkdoc plan --json --no-memory` on the
header-only checkpoint and compares trainable parameters, all parameters (PEFT's all_param) and
the number of LoRA modules with what PEFT reported. Verdicts:

    EQUAL               all three agree
    both refuse         PEFT raised and sparkdoc refused (exit 2)
    PEFT refuses; sparkdoc warns   PEFT raised, sparkdoc planned and said why in a warning
                        (one that a target matches nothing does not count)
    DIFFER              anything else: a bug to fix

    python3 bench/plan_sweep_compare.py --sparkdoc build-release/src/cli/sparkdoc \
        --sweep /tmp/sweep [--markdown docs/measurements/plan-sweep.md] [--only NAME]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys


def sparkdoc_argv(binary, directory, v):
    argv = [binary, "plan", directory, "--json", "--no-memory"]
    if v["method"] == "full":
        return argv + ["--full"]
    argv += ["--lora", str(v["r"])]
    argv += ["--targets", "all-linear" if v["targets"] == "all-linear" else ",".join(v["targets"])]
    if v.get("target_parameters"):
        argv.append("--experts")
    return argv


def run(binary, directory, v):
    proc = subprocess.run(sparkdoc_argv(binary, directory, v), capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[:400]}
    j = json.loads(proc.stdout)
    return {"trainable": j["parameters"]["trainable"], "all": j["parameters"]["all"],
            "total": j["parameters"]["total"], "modules": j.get("lora", {}).get("modules", 0),
            "warnings": j.get("warnings", [])}


def verdict(v, ref, got):
    if "error" in ref and "error" in got:
        return "both refuse"
    if "error" in ref:
        # A target that matches nothing is no reason PEFT refuses; any other warning says one.
        if any("matches no module" not in w for w in got.get("warnings", [])):
            return "PEFT refuses; sparkdoc warns"
        return "DIFFER"
    if "error" in got:
        return "DIFFER"
    if ref["trainable"] != got["trainable"] or ref["all"] != got["all"]:
        return "DIFFER"
    if v["method"] != "full" and ref["modules"] != got["modules"]:
        return "DIFFER"
    return "EQUAL"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparkdoc", required=True)
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--markdown", default="")
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    data = json.load(open(os.path.join(args.sweep, "peft.json")))
    jobs = []
    for rec in data["records"]:
        if args.only and args.only not in rec["class"]:
            continue
        if "build_error" in rec:
            continue
        for layout in sorted(rec["layouts"]):
            d = os.path.join(args.sweep, rec["class"], layout)
            for entry in rec["variants"]:
                jobs.append((rec, layout, d, entry["variant"], entry["peft"]))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        gots = list(pool.map(lambda j: run(args.sparkdoc, j[2], j[3]), jobs))
    per_arch = {}
    counts = {}
    for (rec, layout, d, v, ref), got in zip(jobs, gots):
        vd = verdict(v, ref, got)
        counts[vd] = counts.get(vd, 0) + 1
        per_arch.setdefault(rec["class"], []).append((layout, v["label"], vd, ref, got))
        if vd == "DIFFER" or (args.verbose and vd != "EQUAL"):
            print(f"{vd}: {rec['class']} [{layout}] {v['label']}: peft "
                  f"{ {k: ref.get(k) for k in ('trainable', 'all', 'modules', 'error')} } sparkdoc "
                  f"{ {k: got.get(k) for k in ('trainable', 'all', 'modules', 'error')} }")
    built = [r for r in data["records"] if "build_error" not in r]
    print(f"\n{len(built)} architectures built of {len(data['records'])}; {len(jobs)} comparisons: "
          + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    if args.markdown:
        write_markdown(args.markdown, data, per_arch, counts, len(jobs))
    return 1 if counts.get("DIFFER") else 0


def write_markdown(path, data, per_arch, counts, total):
    versions = data["versions"]
    lines = [
        "# `sparkdoc plan` against PEFT on every registered architecture",
        "",
        f"transformers {versions['transformers']}, peft {versions['peft']}, torch "
        f"{versions['torch']}; each causal-LM and image-text-to-text class at its default config "
        "on the meta device (bench/plan_sweep.py on the GPU machine), compared by "
        "bench/plan_sweep_compare.py. Variants: full; LoRA r=16 on sparkdoc's default targets "
        "(q,k,v,o,gate,up,down); LoRA r=8 all-linear; LoRA r=32 on the default targets plus every "
        "3-D routed-expert parameter (`--experts`, where the model has them). Layouts: v5 (the "
        "model's own parameters) and hub (what save_pretrained reverts them to, where different).",
        "",
        f"{total} comparisons: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) + ".",
        "",
        "| architecture | layouts | full | default | all-linear | experts |",
        "|---|---|---|---|---|---|",
    ]
    short = {"EQUAL": "equal", "both refuse": "both refuse",
             "PEFT refuses; sparkdoc warns": "PEFT refuses, warned", "DIFFER": "**DIFFER**"}
    for arch in sorted(per_arch):
        rows = per_arch[arch]
        layouts = sorted({r[0] for r in rows})
        cells = []
        for label in ("full", "default", "all-linear", "experts"):
            vds = [r[2] for r in rows if r[1] == label]
            if not vds:
                cells.append("—")
                continue
            uniq = sorted(set(vds))
            cells.append(" / ".join(short[u] for u in uniq))
        lines.append(f"| {arch} | {', '.join(layouts)} | " + " | ".join(cells) + " |")
    lines += ["", "Architectures transformers itself cannot build at their default config "
              "(not compared):", ""]
    for rec in data["records"]:
        if "build_error" in rec:
            err = rec["build_error"].splitlines()[0][:140].replace("|", "\\|")
            lines.append(f"- {rec['class']}: {err}")
    lines += ["", "Where PEFT refuses (the error PEFT raises, then sparkdoc's answer):", ""]
    for arch in sorted(per_arch):
        for layout, label, vd, ref, got in per_arch[arch]:
            if vd in ("both refuse", "PEFT refuses; sparkdoc warns") and layout == "v5":
                what = got.get("error") or "; ".join(got.get("warnings", []))
                peft_error = ref["error"].splitlines()[0][:160].replace("|", "\\|")
                lines.append(f"- {arch}, {label}: PEFT: {peft_error}. sparkdoc: "
                             f"{what.splitlines()[0][:200]}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
