#!/usr/bin/env python3
"""`sparkdoc plan` against transformers + PEFT at full size, on the meta device.

For each architecture (configs written out in code from the reference's tables; nothing is
downloaded) the script builds the model on the meta device, writes a header-only sparse
checkpoint with the model's tensor names and shapes (the hub layout that save_pretrained would
write, and for MoE models also transformers 5's fused layout), several shards and an index, then
for each method variant compares what PEFT's get_nb_trainable_parameters() reports with what
`sparkdoc plan --json` reports. It also times planning a 14-shard checkpoint.

    python3 bench/plan_vs_peft.py --sparkdoc build-release/src/cli/sparkdoc --work /tmp/pvp \
        --out results/
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import time
import traceback

import torch
import transformers


DTYPES = {
    torch.bfloat16: ("BF16", 2), torch.float16: ("F16", 2), torch.float32: ("F32", 4),
    torch.float64: ("F64", 8), torch.int64: ("I64", 8), torch.int32: ("I32", 4),
    torch.int8: ("I8", 1), torch.uint8: ("U8", 1), torch.bool: ("BOOL", 1),
}

DEFAULT_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def cfg(cls_name, **kw):
    return getattr(transformers, cls_name)(**kw)


def model_specs():
    """(name, architecture class, config factory, variants)."""
    specs = []
    specs.append(("llama-3.1-8b", "LlamaForCausalLM", lambda: cfg(
        "LlamaConfig", hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
        max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5,
        tie_word_embeddings=False)))
    specs.append(("qwen3-30b-a3b", "Qwen3MoeForCausalLM", lambda: cfg(
        "Qwen3MoeConfig", hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
        num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
        num_experts=128, num_experts_per_tok=8, vocab_size=151936, decoder_sparse_step=1,
        mlp_only_layers=[], norm_topk_prob=True, tie_word_embeddings=False)))
    specs.append(("nemotron-3-nano-30b-a3b", "NemotronHForCausalLM", lambda: cfg(
        "NemotronHConfig", hidden_size=2688, num_hidden_layers=52,
        hybrid_override_pattern="MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
        num_attention_heads=32, num_key_value_heads=2, head_dim=128, mamba_num_heads=64,
        mamba_head_dim=64, n_groups=8, ssm_state_size=128, conv_kernel=4, expand=2,
        chunk_size=128, use_conv_bias=True, mamba_proj_bias=False, mamba_hidden_act="silu",
        n_routed_experts=128, num_experts_per_tok=6, moe_intermediate_size=1856,
        n_shared_experts=1, moe_shared_expert_intermediate_size=3712, intermediate_size=1856,
        mlp_hidden_act="relu2", mlp_bias=False, attention_bias=False, norm_topk_prob=True,
        routed_scaling_factor=2.5, n_group=1, topk_group=1, vocab_size=131072,
        tie_word_embeddings=False, max_position_embeddings=262144)))

    def qwen35():
        layer_types = (["linear_attention"] * 3 + ["full_attention"]) * 10
        text = dict(
            model_type="qwen3_5_moe_text", hidden_size=2048, num_hidden_layers=40,
            layer_types=layer_types, full_attention_interval=4, num_attention_heads=16,
            num_key_value_heads=2, head_dim=256, attn_output_gate=True, attention_bias=False,
            linear_num_key_heads=16, linear_num_value_heads=32, linear_key_head_dim=128,
            linear_value_head_dim=128, linear_conv_kernel_dim=4, num_experts=256,
            num_experts_per_tok=8, moe_intermediate_size=512, shared_expert_intermediate_size=512,
            vocab_size=248320, max_position_embeddings=262144, partial_rotary_factor=0.25,
            rms_norm_eps=1e-6, tie_word_embeddings=False, mtp_num_hidden_layers=1,
            router_aux_loss_coef=0.001)
        vision = dict(
            depth=27, hidden_size=1152, intermediate_size=4304, num_heads=16, patch_size=16,
            temporal_patch_size=2, spatial_merge_size=2, in_channels=3,
            num_position_embeddings=2304, out_hidden_size=2048, deepstack_visual_indexes=[],
            hidden_act="gelu_pytorch_tanh")
        return cfg("Qwen3_5MoeConfig", text_config=text, vision_config=vision,
                   tie_word_embeddings=False, image_token_id=248056, video_token_id=248057,
                   vision_start_token_id=248053, vision_end_token_id=248054)
    specs.append(("qwen3.5-35b-a3b", "Qwen3_5MoeForConditionalGeneration", qwen35))

    def qwen25vl():
        text = dict(model_type="qwen2_5_vl_text", hidden_size=3584, intermediate_size=18944,
                    num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
                    vocab_size=152064, max_position_embeddings=128000, rms_norm_eps=1e-6,
                    rope_theta=1000000.0, tie_word_embeddings=False)
        vision = dict(depth=32, hidden_size=1280, intermediate_size=3420, num_heads=16,
                      out_hidden_size=3584, patch_size=14, spatial_merge_size=2,
                      temporal_patch_size=2, window_size=112, fullatt_block_indexes=[7, 15, 23, 31],
                      in_channels=3, in_chans=3, hidden_act="silu")
        return cfg("Qwen2_5_VLConfig", text_config=text, vision_config=vision,
                   tie_word_embeddings=False)
    specs.append(("qwen2.5-vl-7b", "Qwen2_5_VLForConditionalGeneration", qwen25vl))

    def gemma3():
        text = cfg("Gemma3TextConfig", hidden_size=2560, intermediate_size=10240,
                   num_hidden_layers=34, num_attention_heads=8, num_key_value_heads=4,
                   head_dim=256, vocab_size=262208, sliding_window=1024,
                   max_position_embeddings=131072)
        vision = cfg("SiglipVisionConfig", hidden_size=1152, intermediate_size=4304,
                     num_hidden_layers=27, num_attention_heads=16, image_size=896, patch_size=14,
                     vision_use_head=False)
        return cfg("Gemma3Config", text_config=text, vision_config=vision, mm_tokens_per_image=256)
    specs.append(("gemma-3-4b", "Gemma3ForConditionalGeneration", gemma3))
    return specs


def build(arch, config):
    cls = getattr(transformers, arch)
    with torch.device("meta"):
        model = cls._from_config(config, dtype=torch.bfloat16)
    model.eval()
    return model


def checkpoint_tensors(model):
    """What save_pretrained writes: parameters once (tied ones dropped), persistent buffers."""
    entries = dict(model.named_parameters())
    aliases = {n for n, _ in model.named_parameters(remove_duplicate=False)}
    for n, t in model.state_dict().items():
        if n not in aliases and n not in entries:
            entries[n] = t
    return entries


def hub_layout(model, entries):
    try:
        from transformers.core_model_loading import revert_weight_conversion
        reverted = revert_weight_conversion(model, dict(entries))
        if reverted is None or set(reverted) == set(entries):
            return None
        return reverted
    except Exception as e:  # noqa: BLE001
        print(f"  (no hub layout: {type(e).__name__}: {e})")
        return None


def write_checkpoint(directory, tensors, config, shards):
    os.makedirs(directory, exist_ok=True)
    config.to_json_file(os.path.join(directory, "config.json"))
    items = []
    for name in sorted(tensors):
        t = tensors[name]
        dt, size = DTYPES[t.dtype]
        numel = 1
        for d in t.shape:
            numel *= int(d)
        items.append((name, dt, [int(d) for d in t.shape], numel * size))
    total = sum(i[3] for i in items)
    per = max(1, total // shards + 1)
    groups, cur, cur_bytes = [], [], 0
    for it in items:
        if cur and cur_bytes + it[3] > per and len(groups) < shards - 1:
            groups.append(cur)
            cur, cur_bytes = [], 0
        cur.append(it)
        cur_bytes += it[3]
    groups.append(cur)
    weight_map = {}
    n = len(groups)
    for i, group in enumerate(groups):
        fname = f"model-{i + 1:05d}-of-{n:05d}.safetensors"
        header = {"__metadata__": {"format": "pt"}}
        at = 0
        for name, dt, shape, nbytes in group:
            header[name] = {"dtype": dt, "shape": shape, "data_offsets": [at, at + nbytes]}
            at += nbytes
            weight_map[name] = fname
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * ((8 - len(raw) % 8) % 8)
        with open(os.path.join(directory, fname), "wb") as f:
            f.write(struct.pack("<Q", len(raw)))
            f.write(raw)
            f.truncate(8 + len(raw) + at)  # sparse: the data region is a hole
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return n


def expert_parameters(model):
    out = set()
    for n, p in model.named_parameters():
        if p.dim() == 3 and ".experts." in n:
            out.add(".".join(n.split(".")[-3:]))
    return sorted(out)


def peft_count(model, variant):
    from plan_sweep import peft_count_named
    return peft_count_named(model, variant)[0]


def sparkdoc_count(binary, directory, variant):
    argv = [binary, "plan", directory, "--json", "--no-memory"]
    if variant["method"] == "full":
        argv.append("--full")
    else:
        argv += ["--lora", str(variant["r"])]
        argv += ["--targets", "all-linear" if variant["targets"] == "all-linear"
                 else ",".join(variant["targets"])]
        if variant.get("target_parameters"):
            argv.append("--experts")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[:300]}
    j = json.loads(proc.stdout)
    return {"trainable": j["parameters"]["trainable"], "all": j["parameters"]["all"],
            "total": j["parameters"]["total"],
            "modules": j.get("lora", {}).get("modules", 0), "warnings": j.get("warnings", [])}


def variants_for(name, model):
    experts = expert_parameters(model)
    targets = DEFAULT_TARGETS
    if name.startswith("nemotron"):
        # Current PEFT refuses Mamba out_proj; in_proj is the Mamba input projection.
        targets = ["q_proj", "k_proj", "v_proj", "o_proj", "in_proj", "up_proj", "down_proj"]
    vs = [{"label": "full", "method": "full"},
          {"label": "lora r16", "method": "lora", "r": 16, "targets": targets}]
    if experts:
        vs.append({"label": "lora r32 +experts", "method": "lora", "r": 32, "targets": targets,
                   "target_parameters": experts})
    vs.append({"label": "lora r8 all-linear", "method": "lora", "r": 8, "targets": "all-linear"})
    return vs


def time_plan(binary, directory, runs):
    walls, internal = [], []
    argv = [binary, "plan", directory, "--lora", "32", "--experts", "--no-memory", "--json",
            "--timing"]
    for i in range(runs + 2):
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True)
        wall = (time.monotonic() - start) * 1000
        if proc.returncode != 0:
            return {"error": proc.stderr[:300]}
        if i >= 2:
            walls.append(wall)
            internal.append(json.loads(proc.stdout)["timing_ms"])
    return {"runs": runs, "process_ms_median": statistics.median(walls),
            "process_ms_min": min(walls), "headers_and_plan_ms_median": statistics.median(internal),
            "headers_and_plan_ms_min": min(internal)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparkdoc", required=True)
    ap.add_argument("--work", default="/tmp/plan_vs_peft")
    ap.add_argument("--out", default=".")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    binary = os.path.abspath(args.sparkdoc)
    import peft
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"peft {peft.__version__}")
    rows, details = [], {}
    timing = None
    for name, arch, make_config in model_specs():
        if args.only and args.only not in name:
            continue
        t0 = time.monotonic()
        try:
            config = make_config()
            model = build(arch, config)
        except Exception as e:  # noqa: BLE001
            print(f"{name}: cannot build: {type(e).__name__}: {e}")
            traceback.print_exc()
            rows.append((name, "-", "build failed", "", "", "", "", str(e)[:80]))
            continue
        build_s = time.monotonic() - t0
        entries = checkpoint_tensors(model)
        buffers = sorted(set(entries) - {n for n, _ in model.named_parameters(remove_duplicate=False)})
        layouts = {}
        hub = hub_layout(model, entries)
        if hub is not None:
            layouts["hub"] = hub
        layouts["v5"] = entries
        shards = 14 if name.startswith("qwen3.5") else 4
        dirs = {}
        for layout, tensors in layouts.items():
            d = os.path.join(args.work, f"{name}-{layout}")
            n = write_checkpoint(d, tensors, config, shards)
            dirs[layout] = d
            print(f"{name} [{layout}]: {len(tensors)} tensors in {n} shards -> {d}")
        details[name] = {"arch": arch, "build_s": build_s, "buffers_in_checkpoint": buffers[:20],
                         "layouts": {k: len(v) for k, v in layouts.items()},
                         "params": sum(p.numel() for p in model.parameters()), "variants": []}
        for v in variants_for(name, model):
            t1 = time.monotonic()
            try:
                ref = peft_count(model, v)
            except Exception as e:  # noqa: BLE001
                ref = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
            peft_s = time.monotonic() - t1
            for layout, d in dirs.items():
                got = sparkdoc_count(binary, d, v)
                ok = ("error" not in ref and "error" not in got and
                      ref["trainable"] == got["trainable"] and ref["all"] == got["all"])
                if "error" in ref and "error" in got:
                    verdict = "both refuse"
                elif "error" in ref and any("refuses" in w for w in got.get("warnings", [])):
                    verdict = "PEFT refuses; sparkdoc warns"
                else:
                    verdict = "EQUAL" if ok else "DIFFER"
                    if ok and v["method"] != "full" and ref["modules"] != got["modules"]:
                        verdict = "EQUAL (modules differ)"
                rows.append((name, layout, v["label"], ref.get("trainable", ref.get("error")),
                             got.get("trainable", got.get("error")), ref.get("all", ""),
                             got.get("all", ""), f"{ref.get('modules', '')}/{got.get('modules', '')}",
                             verdict))
                details[name]["variants"].append({"variant": v, "layout": layout, "peft": ref,
                                                  "sparkdoc": got, "peft_s": peft_s,
                                                  "verdict": verdict})
                print(f"  {v['label']:<22} {layout:<3} peft {ref} sparkdoc {got} -> {verdict}")
        if name.startswith("qwen3.5"):
            timing = {"model": name, "shards": shards,
                      "sparkdoc": time_plan(binary, dirs.get("hub", dirs["v5"]), 20),
                      "transformers_meta_build_s": build_s}
            print(f"timing: {timing}")
        del model
    print()
    print(f"{'model':<25} {'layout':<6} {'variant':<20} {'peft trainable':>15} {'sparkdoc':>15} "
          f"{'peft all':>15} {'sparkdoc all':>15} {'modules':>11}  verdict")
    for r in rows:
        print(f"{r[0]:<25} {r[1]:<6} {r[2]:<20} {str(r[3]):>15} {str(r[4]):>15} {str(r[5]):>15} "
              f"{str(r[6]):>15} {str(r[7]):>11}  {r[8] if len(r) > 8 else ''}")
    if timing:
        print(f"\n14-shard plan ({timing['model']}): {timing['sparkdoc']}; transformers meta build "
              f"{timing['transformers_meta_build_s']:.2f} s")
    with open(os.path.join(args.out, "plan_vs_peft.json"), "w") as f:
        json.dump({"rows": rows, "details": details, "timing": timing,
                   "versions": {"torch": torch.__version__,
                                "transformers": transformers.__version__,
                                "peft": peft.__version__}}, f, indent=2, default=str)
    bad = [r for r in rows if len(r) > 8 and r[8] == "DIFFER"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
