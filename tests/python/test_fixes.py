"""sparkdoc.fixes against stand-in objects: no torch, transformers, unsloth or GPU. The modules a
fix looks for (torch.utils.checkpoint, modeling_nemotron_h, mamba_ssm, causal_conv1d, unsloth) are
fakes put in sys.modules for one test and taken out after it.

Run with PYTHONPATH=python (ctest and scripts/test-python.sh do); SPARKDOC_SOURCE, when set, is
the source tree whose src/facts/environment.h the environment rules are held to."""

import io
import os
import re
import sys
import types
import unittest
from pathlib import Path
from unittest import mock

from sparkdoc import fixes

SOURCE = Path(os.environ.get("SPARKDOC_SOURCE", Path(__file__).resolve().parents[2]))


def module(name, **attributes):
    m = types.ModuleType(name)
    for key, value in attributes.items():
        setattr(m, key, value)
    return m


def fake_torch():
    calls = []

    def checkpoint(function, *args, use_reentrant=None, **kwargs):
        calls.append(use_reentrant)
        return function(*args, **kwargs)

    utils = module("torch.utils")
    cp = module("torch.utils.checkpoint", checkpoint=checkpoint)
    utils.checkpoint = cp
    torch = module("torch", utils=utils)
    return {"torch": torch, "torch.utils": utils, "torch.utils.checkpoint": cp}, calls


class GradientCheckpointingLayer:
    """transformers.modeling_layers' class, as far as the fix reads it."""

    gradient_checkpointing = False


class Block(GradientCheckpointingLayer):
    pass


class NemotronHMamba2Mixer:
    pass


class PreTrainedModel:
    supports_gradient_checkpointing = True

    def __init__(self, children):
        self.children = children
        self.training = True
        self.input_require_grads = False
        self.set_calls = []

    def modules(self):
        return [self, *self.children]

    def _set_gradient_checkpointing(self, enable=True, gradient_checkpointing_func=None):
        self.set_calls.append(gradient_checkpointing_func)
        for m in self.modules():
            if hasattr(m, "gradient_checkpointing"):
                m.gradient_checkpointing = enable
                m._gradient_checkpointing_func = gradient_checkpointing_func

    def enable_input_require_grads(self):
        self.input_require_grads = True


def nemotron_class(flag, module_name="transformers.models.nemotron_h.modeling_nemotron_h"):
    return type("NemotronHForCausalLM", (PreTrainedModel,),
                {"supports_gradient_checkpointing": flag, "__module__": module_name})


class PeftModel:
    """PEFT's wrapper: get_base_model() gives the transformers model."""

    def __init__(self, model):
        self.base_model = types.SimpleNamespace(model=model)
        self._model = model

    def get_base_model(self):
        return self._model


class GradientCheckpointing(unittest.TestCase):
    def test_flag_false_with_checkpointing_layers_is_bypassed_as_in_000_s8(self):
        torch_modules, calls = fake_torch()
        model = nemotron_class(False)([Block(), Block(), NemotronHMamba2Mixer()])
        with mock.patch.dict(sys.modules, torch_modules):
            result = fixes.enable_gradient_checkpointing(PeftModel(model))
            self.assertEqual(result.status, fixes.APPLIED, result)
            self.assertEqual(result.seed, "000 §8")
            self.assertEqual(result.details["checkpointing_layers"], 2)
            self.assertTrue(all(b.gradient_checkpointing for b in model.children[:2]))
            self.assertTrue(model.input_require_grads)
            model.set_calls[0](lambda x: x + 1, 1)
            self.assertEqual(calls, [False], "torch.utils.checkpoint, use_reentrant=False")
            self.assertIn("gradient_checkpointing=False", result.reason)

    def test_trainer_config_that_enables_it_again_is_warned_of(self):
        torch_modules, _ = fake_torch()
        model = nemotron_class(False)([Block()])
        with mock.patch.dict(sys.modules, torch_modules):
            result = fixes.enable_gradient_checkpointing(
                model, args=types.SimpleNamespace(gradient_checkpointing=True))
        self.assertEqual(result.status, fixes.APPLIED)
        self.assertTrue(any("raise ValueError" in w for w in result.warnings), result.warnings)

    def test_flag_true_as_transformers_5_17_has_it_is_not_needed_and_changes_nothing(self):
        model = nemotron_class(True)([Block()])
        result = fixes.enable_gradient_checkpointing(model)
        self.assertEqual(result.status, fixes.NOT_NEEDED, result)
        self.assertEqual(model.set_calls, [])
        self.assertFalse(model.children[0].gradient_checkpointing)
        self.assertIn("gradient_checkpointing_enable", result.reason)

    def test_flag_false_without_checkpointing_layers_is_refused(self):
        class PlainLayer:
            gradient_checkpointing = False

        model = nemotron_class(False)([PlainLayer()])
        result = fixes.enable_gradient_checkpointing(model)
        self.assertEqual(result.status, fixes.REFUSED)
        self.assertIn("GradientCheckpointingLayer", result.reason)
        self.assertEqual(model.set_calls, [])

    def test_not_a_transformers_model_is_refused(self):
        result = fixes.enable_gradient_checkpointing(object())
        self.assertEqual(result.status, fixes.REFUSED)

    def test_without_torch_it_is_refused_not_raised(self):
        model = nemotron_class(False)([Block()])
        with mock.patch.dict(sys.modules, dict.fromkeys(["torch", "torch.utils", "torch.utils.checkpoint"])):
            result = fixes.enable_gradient_checkpointing(model)
        self.assertEqual(result.status, fixes.REFUSED)
        self.assertIn("torch.utils.checkpoint", result.reason)

    def test_eval_mode_is_warned_of(self):
        torch_modules, _ = fake_torch()
        model = nemotron_class(False)([Block()])
        model.training = False
        with mock.patch.dict(sys.modules, torch_modules):
            result = fixes.enable_gradient_checkpointing(model)
        self.assertTrue(any("eval mode" in w for w in result.warnings))


def kernels(**overrides):
    modules = {
        "mamba_ssm": module("mamba_ssm"),
        "mamba_ssm.ops": module("mamba_ssm.ops"),
        "mamba_ssm.ops.triton": module("mamba_ssm.ops.triton"),
        "mamba_ssm.ops.triton.selective_state_update": module(
            "mamba_ssm.ops.triton.selective_state_update", selective_state_update=lambda: "ssu"),
        "mamba_ssm.ops.triton.ssd_combined": module(
            "mamba_ssm.ops.triton.ssd_combined", mamba_chunk_scan_combined=lambda: "scan",
            mamba_split_conv1d_scan_combined=lambda: "split"),
        "causal_conv1d": module("causal_conv1d", causal_conv1d_fn=lambda: "conv",
                                causal_conv1d_update=lambda: "update"),
    }
    modules.update(overrides)
    return modules


NEMOTRON = "transformers.models.nemotron_h.modeling_nemotron_h"


class MambaFastPath(unittest.TestCase):
    def test_kernels_missing_says_which_and_sets_nothing(self):
        nemotron = module(NEMOTRON, is_fast_path_available=False, causal_conv1d_fn=None)
        model = nemotron_class(False)([NemotronHMamba2Mixer()])
        with mock.patch.dict(sys.modules, {NEMOTRON: nemotron, "mamba_ssm": None, "causal_conv1d": None}):
            result = fixes.mamba_fast_path(model)
        self.assertEqual(result.status, fixes.NOT_APPLICABLE, result)
        self.assertIn("mamba-ssm", result.reason)
        self.assertIn("causal-conv1d", result.reason)
        self.assertFalse(nemotron.is_fast_path_available)

    def test_flag_of_transformers_5_5_3_is_set_and_kernels_bound_when_they_import(self):
        nemotron = module(NEMOTRON, is_fast_path_available=False, causal_conv1d_fn=None,
                          causal_conv1d_update=None, selective_state_update=lambda: "own")
        model = nemotron_class(False)([NemotronHMamba2Mixer()])
        with mock.patch.dict(sys.modules, {NEMOTRON: nemotron, **kernels()}):
            result = fixes.mamba_fast_path(model)
        self.assertEqual(result.status, fixes.APPLIED, result)
        self.assertTrue(nemotron.is_fast_path_available)
        self.assertEqual(nemotron.causal_conv1d_fn(), "conv")
        self.assertEqual(nemotron.selective_state_update(), "own", "a bound kernel is left alone")
        self.assertEqual(len(result.details["bound"]), 2)

    def test_transformers_without_the_flag_is_detected_not_assumed(self):
        nemotron = module(NEMOTRON)
        with mock.patch.dict(sys.modules, {NEMOTRON: nemotron, **kernels()}):
            result = fixes.mamba_fast_path()
        self.assertEqual(result.status, fixes.NOT_NEEDED, result)
        self.assertIn("no is_fast_path_available", result.reason)
        self.assertFalse(hasattr(nemotron, "is_fast_path_available"))

    def test_a_model_without_mamba_layers_is_not_applicable(self):
        model = nemotron_class(True, "transformers.models.llama.modeling_llama")([Block()])
        result = fixes.mamba_fast_path(model)
        self.assertEqual(result.status, fixes.NOT_APPLICABLE)
        self.assertIn("no Mamba layers", result.reason)

    def test_nothing_loaded_is_not_applicable(self):
        loaded = [n for n in sys.modules if "modeling_nemotron_h" in n]
        with mock.patch.dict(sys.modules, {n: None for n in loaded}):
            result = fixes.mamba_fast_path()
        self.assertEqual(result.status, fixes.NOT_APPLICABLE)


class ScrubEnvironment(unittest.TestCase):
    def test_removes_what_sparkdoc_run_removes_and_keeps_the_rest(self):
        env = {"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "1", "MASTER_ADDR": "10.0.0.1",
               "MASTER_PORT": "29500", "NCCL_SOCKET_IFNAME": "eth0", "NCCL_VERSION": "2.27",
               "OMPI_COMM_WORLD_RANK": "0", "PMI_RANK": "0", "SLURM_PROCID": "0",
               "HOME": "/root", "ACCELERATE_USE_FSDP": "true"}
        result = fixes.scrub_distributed_env(env)
        self.assertEqual(result.status, fixes.APPLIED)
        self.assertEqual(env, {"NCCL_VERSION": "2.27", "HOME": "/root", "ACCELERATE_USE_FSDP": "0",
                               "ACCELERATE_USE_DEEPSPEED": "0"})
        self.assertIn("RANK", result.details["removed"])
        self.assertIn("SLURM_PROCID", result.reason)

    def test_clean_environment_is_not_needed(self):
        env = {"HOME": "/root", "ACCELERATE_USE_FSDP": "0", "ACCELERATE_USE_DEEPSPEED": "0"}
        result = fixes.scrub_distributed_env(env)
        self.assertEqual(result.status, fixes.NOT_NEEDED)
        self.assertEqual(len(env), 3)

    def test_under_torchrun_it_refuses_unless_forced(self):
        env = {"TORCHELASTIC_RUN_ID": "x", "RANK": "1", "WORLD_SIZE": "2"}
        self.assertEqual(fixes.scrub_distributed_env(env).status, fixes.REFUSED)
        self.assertIn("RANK", env)
        self.assertEqual(fixes.scrub_distributed_env(env, force=True).status, fixes.APPLIED)
        self.assertNotIn("RANK", env)

    def test_accelerate_imported_first_is_warned_of(self):
        with mock.patch.dict(sys.modules, {"accelerate": module("accelerate")}):
            result = fixes.scrub_distributed_env({"RANK": "0"})
        self.assertTrue(any("accelerate" in w for w in result.warnings))

    def test_rules_are_those_of_sparkdoc_run(self):
        header = SOURCE / "src" / "facts" / "environment.h"
        if not header.exists():
            self.skipTest(f"no {header}")
        text = header.read_text()

        def strings(array):
            body = re.search(r"std::array<std::string_view, \d+> %s\{(.*?)\};" % array, text, re.S)
            self.assertIsNotNone(body, array)
            return tuple(re.findall(r'"(\w+)"', body.group(1)))

        self.assertEqual(strings("kNames"), fixes.LAUNCH_STATE)
        self.assertEqual(strings("kLauncherNames"), fixes.LAUNCHER_STATE)
        self.assertEqual(strings("kPrefixes"), fixes.TUNING_PREFIXES)
        self.assertEqual(strings("kAccelerateOverrides"), fixes.ACCELERATE_OVERRIDES)
        self.assertEqual(re.findall(r'name\.starts_with\("(OMPI_COMM_WORLD_)"\)', text),
                         [fixes.LAUNCHER_PREFIX])
        self.assertEqual(tuple(re.findall(r'if \(name == "(\w+)"\) return false;', text)),
                         fixes.NOT_TUNING)


def fake_unsloth(**attributes):
    """unsloth and one submodule that imported the same names (`from ._utils import *`)."""
    top = module("unsloth", **attributes)
    sub = module("unsloth.models._utils", **attributes)
    return {"unsloth": top, "unsloth.models._utils": sub}


class Row(list):
    """A stand-in tensor: rows of floats with the few operations _untrained_rows uses."""

    @property
    def shape(self):
        return (len(self), len(self[0]) if self else 0)

    def __getitem__(self, index):
        value = list.__getitem__(self, index)
        return Row(value) if isinstance(index, slice) else value

    def detach(self):
        return self

    def amax(self, dim):
        return Row([max(r) for r in self])

    def __le__(self, eps):
        return Row([1 if v <= eps else 0 for v in self])

    def sum(self):
        total = sum(list.__iter__(self))
        return types.SimpleNamespace(item=lambda: total)


def embedding_model(rows):
    model = nemotron_class(True)([])
    model.get_input_embeddings = lambda: types.SimpleNamespace(weight=Row(rows))
    return model


class Unsloth(unittest.TestCase):
    def without_unsloth(self):
        loaded = {n: None for n in sys.modules if n.startswith(("unsloth", "unsloth_zoo"))}
        return mock.patch.dict(sys.modules, loaded), mock.patch(
            "importlib.util.find_spec", return_value=None)

    def test_every_patch_says_not_applicable_without_unsloth(self):
        modules, spec = self.without_unsloth()
        with modules, spec:
            results = [fixes.unsloth_prefer_sdpa(), fixes.unsloth_skip_statistics(offline=True),
                       fixes.unsloth_fix_untrained_tokens(embedding_model([[1.0]]))]
        for r in results:
            self.assertEqual(r.status, fixes.NOT_APPLICABLE, r)
            self.assertEqual(r.reason, "unsloth not installed")

    def test_installed_but_not_imported_says_import_it_first(self):
        modules, _ = self.without_unsloth()
        with modules, mock.patch("importlib.util.find_spec", return_value=object()):
            result = fixes.unsloth_prefer_sdpa()
        self.assertEqual(result.status, fixes.NOT_APPLICABLE)
        self.assertIn("import unsloth first", result.reason)

    def test_fully_trained_vocabulary_makes_fix_untrained_tokens_a_no_op_everywhere(self):
        calls = []

        def original(*args, **kwargs):
            calls.append(args)

        fake = fake_unsloth(fix_untrained_tokens=original)
        with mock.patch.dict(sys.modules, fake):
            result = fixes.unsloth_fix_untrained_tokens(embedding_model([[0.5, -1.0], [0.0, 2.0]]))
            self.assertEqual(result.status, fixes.APPLIED, result)
            for m in fake.values():
                m.fix_untrained_tokens("model", "tokenizer")
        self.assertEqual(calls, [])
        self.assertEqual(len(result.details["patched"]), 2)

    def test_untrained_rows_keep_fix_untrained_tokens(self):
        def original(*args, **kwargs):
            return None

        fake = fake_unsloth(fix_untrained_tokens=original)
        with mock.patch.dict(sys.modules, fake):
            result = fixes.unsloth_fix_untrained_tokens(embedding_model([[0.5], [0.0], [-1.0]]))
        self.assertEqual(result.status, fixes.NOT_NEEDED, result)
        self.assertEqual(result.details["untrained_rows"], 2)
        self.assertIs(fake["unsloth"].fix_untrained_tokens, original)

    def test_without_the_model_it_is_refused(self):
        with mock.patch.dict(sys.modules, fake_unsloth(fix_untrained_tokens=lambda *a: None)):
            self.assertEqual(fixes.unsloth_fix_untrained_tokens().status, fixes.REFUSED)

    def test_statistics_call_is_a_no_op_offline_in_every_module_that_bound_it(self):
        calls = []
        fake = fake_unsloth(_get_statistics=lambda *a, **k: calls.append(a))
        with mock.patch.dict(sys.modules, fake):
            online = fixes.unsloth_skip_statistics(offline=False)
            self.assertEqual(online.status, fixes.NOT_NEEDED)
            with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
                offline = fixes.unsloth_skip_statistics()
            self.assertEqual(offline.status, fixes.APPLIED, offline)
            fake["unsloth.models._utils"]._get_statistics("unslothai/x")
        self.assertEqual(calls, [])

    def test_flash_attn_preference_is_turned_off_as_g2_says(self):
        fake = fake_unsloth(HAS_FLASH_ATTENTION=True)
        with mock.patch.dict(sys.modules, fake):
            result = fixes.unsloth_prefer_sdpa()
            self.assertEqual(result.status, fixes.APPLIED)
            self.assertFalse(fake["unsloth.models._utils"].HAS_FLASH_ATTENTION)
            self.assertEqual(fixes.unsloth_prefer_sdpa().status, fixes.NOT_NEEDED)


class Tokenizer:
    def encode(self, text):
        return [ord(c) for c in text]


class Processor:
    def __init__(self):
        self.tokenizer = Tokenizer()


class UnwrapTokenizer(unittest.TestCase):
    def test_processor_is_unwrapped(self):
        processor = Processor()
        result = fixes.unwrap_tokenizer(processor)
        self.assertEqual(result.status, fixes.APPLIED)
        self.assertIs(result.value, processor.tokenizer)

    def test_tokenizer_is_left_as_it_is(self):
        tokenizer = Tokenizer()
        result = fixes.unwrap_tokenizer(tokenizer)
        self.assertEqual(result.status, fixes.NOT_NEEDED)
        self.assertIs(result.value, tokenizer)


class Prepare(unittest.TestCase):
    def test_one_line_per_action(self):
        torch_modules, _ = fake_torch()
        model = nemotron_class(False)([Block()])
        out = io.StringIO()
        with mock.patch.dict(sys.modules, torch_modules), mock.patch.dict(os.environ, {"RANK": "3"}):
            results = fixes.prepare(model, Processor(), out=out)
            self.assertNotIn("RANK", os.environ)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), len(results))
        self.assertTrue(all(line.startswith("sparkdoc: ") for line in lines))
        self.assertEqual([r.fix for r in results],
                         ["scrub_distributed_env", "enable_gradient_checkpointing",
                          "mamba_fast_path", "unsloth_fix_untrained_tokens", "unwrap_tokenizer"])
        self.assertIsInstance(results[-1].value, Tokenizer)


if __name__ == "__main__":
    unittest.main()
