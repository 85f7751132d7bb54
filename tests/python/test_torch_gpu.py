"""sparkdoc against safetensors and transformers on a real GPU (label gpu): bitwise-identical
tensors for a multi-shard checkpoint of mixed dtypes, from_pretrained with the patch gives the
same state_dict as without, failing loads leak nothing. Skips (prints SPARKDOC_SKIP:) without
torch, a CUDA GPU or safetensors."""

import json
import os
import sys
import tempfile
import time
import unittest
from pathlib import Path

try:
    import torch
    import safetensors.torch as st

    READY = torch.cuda.is_available()
    WHY = "torch sees no CUDA GPU"
except ImportError as e:
    READY = False
    WHY = f"{e.name} is not installed"

try:
    import transformers  # noqa: F401

    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False

if not READY:
    print(f"SPARKDOC_SKIP: {WHY}")

import sparkdoc  # noqa: E402


def as_bytes(t):
    return t.detach().reshape(-1).view(torch.uint8)


def mixed_checkpoint(folder: Path):
    """Three shards: bf16, f32, f16, f8, i64, u8, bool; odd shapes, empty and 0-dim tensors,
    one tensor of 48 MiB that spans many reads."""
    g = torch.Generator().manual_seed(6)
    shards = [
        {"embed.weight": torch.randn(37, 129, generator=g).bfloat16(),
         "empty": torch.empty(0, 4),
         "norm.weight": torch.randn(1000, generator=g),
         "step": torch.tensor(123456789012, dtype=torch.int64)},
        {"big.weight": torch.randn(8192, 3072, generator=g).bfloat16(),
         "fp8.weight": torch.randn(333, 77, generator=g).to(torch.float8_e4m3fn),
         "ids": torch.randint(-2**62, 2**62, (5, 7), generator=g, dtype=torch.int64)},
        {"mask": torch.rand(17, generator=g) > 0.5,
         "bytes": torch.randint(0, 255, (1,), generator=g, dtype=torch.uint8),
         "half": torch.randn(3, 5, 7, generator=g).half(),
         "f32.odd": torch.randn(1, 1, 4097, generator=g)},
    ]
    weight_map = {}
    for i, tensors in enumerate(shards):
        name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        st.save_file(tensors, str(folder / name), metadata={"format": "pt"})
        weight_map.update({k: name for k in tensors})
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}))
    return [folder / f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors" for i in range(len(shards))]


@unittest.skipUnless(READY, WHY)
class AgainstSafetensors(unittest.TestCase):
    def test_a_mixed_multi_shard_checkpoint_is_bitwise_identical(self):
        with tempfile.TemporaryDirectory() as d:
            files = mixed_checkpoint(Path(d))
            want = {}
            for f in files:
                want.update(st.load_file(str(f), device="cuda:0"))
            got, stats = sparkdoc.load_model_dir(d, "cuda:0", stats=True)
            self.assertEqual(sorted(got), sorted(want))
            for name, w in want.items():
                g = got[name]
                self.assertEqual(g.dtype, w.dtype, name)
                self.assertEqual(g.shape, w.shape, name)
                self.assertEqual(g.device, torch.device("cuda", 0), name)
                self.assertTrue(torch.equal(as_bytes(g), as_bytes(w)), name)
            self.assertEqual(stats["bytes"], sum(t.numel() * t.element_size() for t in want.values()))

    def test_a_hundred_failing_loads_leak_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            files = mixed_checkpoint(Path(d))
            small = files[2]
            original = small.read_bytes()
            # CUDA opens its device files once per process, on the first load: not a leak.
            sparkdoc.load_model_dir(d, "cuda:0")
            fds = len(os.listdir("/proc/self/fd"))
            torch.cuda.synchronize()
            allocated = torch.cuda.memory_allocated()
            for _ in range(100):
                with sparkdoc.Checkpoint(d) as ck:
                    os.truncate(small, len(original) - 3)  # shorter than its header says, after the open
                    with self.assertRaises(sparkdoc.CheckpointReadError) as e:
                        sparkdoc.loader.fill(ck, ck.tensors,
                                             [sparkdoc.loader.empty_like_tensor(t, "cuda:0")
                                              for t in ck.tensors], 0)
                    self.assertIn(str(small), str(e.exception))
                small.write_bytes(original)
            torch.cuda.synchronize()
            self.assertEqual(torch.cuda.memory_allocated(), allocated)
            self.assertEqual(len(os.listdir("/proc/self/fd")), fds)

    def test_the_guard_runs_while_the_block_runs(self):
        with sparkdoc.memory_guard(interval=0.05, paths=[tempfile.gettempdir()]) as guard:
            torch.empty(1 << 20, device="cuda:0")
            time.sleep(0.3)
        self.assertGreaterEqual(guard.rounds, 2)
        self.assertEqual(guard.errors, [])


@unittest.skipUnless(READY and HAVE_TRANSFORMERS, WHY if not READY else "transformers is not installed")
class FromPretrained(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from transformers import LlamaConfig, LlamaForCausalLM

        cls.dir = tempfile.TemporaryDirectory()
        config = LlamaConfig(vocab_size=1000, hidden_size=256, intermediate_size=688,
                             num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                             tie_word_embeddings=False)
        torch.manual_seed(0)
        LlamaForCausalLM(config).save_pretrained(cls.dir.name, max_shard_size="1MB")
        cls.shards = sorted(Path(cls.dir.name).glob("*.safetensors"))
        cls.model_class = LlamaForCausalLM

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def assert_same_state(self, a, b):
        sa, sb = a.state_dict(), b.state_dict()
        self.assertEqual(sorted(sa), sorted(sb))
        for k in sa:
            self.assertEqual(sa[k].dtype, sb[k].dtype, k)
            self.assertEqual(sa[k].device, sb[k].device, k)
            self.assertTrue(torch.equal(as_bytes(sa[k]), as_bytes(sb[k])), k)

    def test_the_patched_load_gives_the_same_state_dict(self):
        import safetensors
        import transformers.modeling_utils as mu

        self.assertGreater(len(self.shards), 1)
        plain = self.model_class.from_pretrained(self.dir.name, device_map={"": 0})
        with sparkdoc.patch_transformers(device="cuda:0") as patch:
            patched = self.model_class.from_pretrained(self.dir.name)
        self.assert_same_state(plain, patched)
        self.assertGreater(patch.stats["tensors"]["cuda"], 0)
        self.assertEqual(patch.stats["tensors"]["cpu"], 0)
        self.assertIs(mu.safe_open, safetensors.safe_open)

    def test_a_dtype_cast_happens_on_the_gpu_and_matches(self):
        plain = self.model_class.from_pretrained(self.dir.name, device_map={"": 0},
                                                 dtype=torch.bfloat16)
        with sparkdoc.patch_transformers():
            patched = self.model_class.from_pretrained(self.dir.name, device_map={"": 0},
                                                       dtype=torch.bfloat16)
        self.assert_same_state(plain, patched)

    def test_a_cpu_load_reads_without_mapping(self):
        plain = self.model_class.from_pretrained(self.dir.name)
        with sparkdoc.patch_transformers() as patch:
            patched = self.model_class.from_pretrained(self.dir.name)
        self.assert_same_state(plain, patched)
        self.assertGreater(patch.stats["tensors"]["cpu"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
