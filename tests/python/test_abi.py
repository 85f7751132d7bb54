"""The Python package over libsparkdoc.so without torch and without a GPU: its declarations
match the C header, and loads through the fake libcuda (SPARKDOC_CUDA_LIBRARY) arrive intact.

Run by ctest with PYTHONPATH=python, SPARKDOC_LIBRARY, SPARKDOC_CUDA_LIBRARY and
SPARKDOC_HEADER set."""

import ctypes
import json
import os
import re
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sparkdoc  # noqa: E402
from sparkdoc import _abi  # noqa: E402
import st_files  # noqa: E402

HEADER = Path(os.environ.get("SPARKDOC_HEADER", Path(__file__).resolve().parents[2] / "include/sparkdoc/sparkdoc.h"))


class Declarations(unittest.TestCase):
    def setUp(self):
        self.text = HEADER.read_text()

    def test_every_header_function_is_declared_and_nothing_else(self):
        in_header = set(re.findall(r"SPARKDOC_API\s[^;]*?\b(sparkdoc_\w+)\s*\(", self.text))
        self.assertEqual(in_header, set(_abi.FUNCTIONS))

    def test_status_codes_match(self):
        codes = dict(re.findall(r"SPARKDOC_(\w+) = (\d+)", self.text))
        for name, value in codes.items():
            self.assertEqual(getattr(_abi, name), int(value), name)

    def test_struct_fields_match(self):
        for c_name, py in (("sparkdoc_tensor_info", _abi.TensorInfo),
                           ("sparkdoc_loader_options", _abi.LoaderOptions),
                           ("sparkdoc_load_stats", _abi.LoadStats)):
            body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (c_name, c_name), self.text, re.S)
            self.assertIsNotNone(body, c_name)
            fields = re.findall(r"\b(\w+);", re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S))
            self.assertEqual(fields, [f for f, _ in py._fields_], c_name)

    def test_version(self):
        self.assertEqual(sparkdoc.library().sparkdoc_abi_version(), _abi.ABI_VERSION)


class FakeDevice:
    """Device memory from the fake libcuda, with the primary context current on this thread."""

    def __init__(self):
        self.lib = ctypes.CDLL(os.environ["SPARKDOC_CUDA_LIBRARY"])
        self.lib.cuInit(0)
        self.context = ctypes.c_void_p()
        self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), 0)
        self.lib.cuCtxSetCurrent(self.context)
        self.lib.sparkdoc_fake_cuda_device_bytes.restype = ctypes.c_void_p
        self.lib.sparkdoc_fake_cuda_device_bytes.argtypes = [ctypes.c_ulonglong, ctypes.c_size_t]
        self.lib.sparkdoc_fake_cuda_live.argtypes = [ctypes.c_char_p]
        self.lib.sparkdoc_fake_cuda_live.restype = ctypes.c_long
        self.lib.cuMemFree_v2.argtypes = [ctypes.c_ulonglong]

    def alloc(self, n):
        p = ctypes.c_ulonglong()
        self.assert_ok(self.lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)))
        return p.value

    def free(self, p):
        self.lib.cuMemFree_v2(p)

    def read(self, p, n):
        at = self.lib.sparkdoc_fake_cuda_device_bytes(p, n)
        return ctypes.string_at(at, n) if at else None

    def live(self, kind):
        return self.lib.sparkdoc_fake_cuda_live(kind.encode())

    def close(self):
        self.lib.cuDevicePrimaryCtxRelease_v2(0)

    @staticmethod
    def assert_ok(status):
        if status != 0:
            raise AssertionError(f"fake cuda returned {status}")


class LoadsThroughTheFake(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        root = Path(self.dir.name)
        fixture = root / "fixture.json"
        fixture.write_text(json.dumps({"cuda": {"driver_version": 13000, "devices": [
            {"name": "NVIDIA H200", "total_memory_bytes": 1 << 26, "free_memory_bytes": 1 << 26}]}}))
        os.environ["SPARKDOC_FAKE_GPU_FIXTURE"] = str(fixture)
        self.tensors = [st_files.tensor("w", "BF16", (33, 17), 1), st_files.tensor("e", "F32", (0,), 2),
                        st_files.tensor("s", "I64", (), 3), st_files.tensor("f8", "F8_E4M3", (1001,), 4)]
        self.path = root / "model.safetensors"
        st_files.write(self.path, self.tensors)
        self.device = FakeDevice()

    def tearDown(self):
        sparkdoc.release()
        self.device.close()
        self.dir.cleanup()

    def test_enumerates_and_loads_bytes_intact(self):
        with sparkdoc.Checkpoint(self.path) as ck:
            self.assertEqual([t.name for t in ck.tensors], ["w", "e", "s", "f8"])
            self.assertEqual(ck.tensors[0].shape, (33, 17))
            self.assertEqual(ck.tensors[2].shape, ())
            self.assertEqual(ck.tensors[3].dtype, "F8_E4M3")
            self.assertEqual(ck.files, [str(self.path)])
            base = self.device.alloc(1 << 16)
            pointers = [0 if t.nbytes == 0 else base + 4096 * i for i, t in enumerate(ck.tensors)]
            loader = sparkdoc.Loader(0, reader_threads=2, chunk_bytes=4096)
            stats = loader.load(ck, pointers, stats=True)
            loader.close()
            for (name, _, _, data), p in zip(self.tensors, pointers):
                if data:
                    self.assertEqual(self.device.read(p, len(data)), data, name)
            self.assertEqual(stats["bytes"], sum(len(t[3]) for t in self.tensors))
            self.assertEqual(stats["files_direct"] + stats["files_buffered"], 1)
            self.device.free(base)
        for kind in ("device", "host", "registered", "streams", "events"):
            self.assertEqual(self.device.live(kind), 0, kind)

    def test_failures_raise_the_matching_exception(self):
        with self.assertRaises(FileNotFoundError) as e:
            sparkdoc.Checkpoint(Path(self.dir.name) / "absent.safetensors")
        self.assertIn("absent.safetensors", str(e.exception))
        os.truncate(self.path, os.path.getsize(self.path) - 1)
        with self.assertRaises(sparkdoc.CheckpointError) as e:
            sparkdoc.Checkpoint(self.path)
        self.assertIsInstance(e.exception, ValueError)
        self.assertEqual(e.exception.status, _abi.BAD_CHECKPOINT)

    def test_a_hundred_failing_loads_leak_nothing(self):
        fds = len(os.listdir("/proc/self/fd"))
        base = self.device.alloc(100)  # too small for "w" (1122 bytes)
        for _ in range(100):
            with sparkdoc.Checkpoint(self.path) as ck:
                loader = sparkdoc.Loader(0)
                with self.assertRaises(sparkdoc.CudaError) as e:
                    loader.load(ck, [base, 0, base, base])
                self.assertIn("tensor 'w'", str(e.exception))
                loader.close()
        self.device.free(base)
        for kind in ("device", "host", "registered", "streams", "events"):
            self.assertEqual(self.device.live(kind), 0, kind)
        self.assertEqual(len(os.listdir("/proc/self/fd")), fds)


if __name__ == "__main__":
    unittest.main()
