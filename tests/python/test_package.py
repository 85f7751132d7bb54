"""The package as it ships: where the library is looked for, the refusal of a library of another
version, `python -m sparkdoc`'s binary, the version held to CMake's, and the wheel's platform tag
read from the ELF files. No library, torch or GPU needed.

Run with PYTHONPATH=python; SPARKDOC_SOURCE, when set, is the source tree (CMakeLists.txt,
scripts/wheel_platform.py)."""

import importlib.util
import os
import re
import struct
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import sparkdoc
from sparkdoc import _abi
from sparkdoc import __main__ as main_module

SOURCE = Path(os.environ.get("SPARKDOC_SOURCE", Path(__file__).resolve().parents[2]))


class FakeFunction:
    def __init__(self, value):
        self.value = value

    def __call__(self, *args):
        return self.value


class FakeLibrary:
    """What ctypes.CDLL gives, with the two version calls answering what a test says."""

    def __init__(self, abi, version):
        for name in _abi.FUNCTIONS:
            setattr(self, name, FakeFunction(None))
        self.sparkdoc_abi_version = FakeFunction(abi)
        self.sparkdoc_version = FakeFunction(version.encode())


class LibraryLookup(unittest.TestCase):
    def test_bundled_library_comes_first_then_sparkdoc_library_then_the_system(self):
        here = Path("/site-packages/sparkdoc")
        order = list(_abi._candidates(here, {"SPARKDOC_LIBRARY": "/opt/lib/libsparkdoc.so"}))
        self.assertEqual(order[0], "/site-packages/sparkdoc/libsparkdoc.so")
        self.assertEqual(order[1], "/opt/lib/libsparkdoc.so")
        self.assertEqual(order[-1], "libsparkdoc.so")

    def test_without_sparkdoc_library_the_bundled_one_is_still_first(self):
        order = list(_abi._candidates(Path("/p/sparkdoc"), {}))
        self.assertEqual(order[0], "/p/sparkdoc/libsparkdoc.so")
        self.assertNotIn("", order)

    def load(self, fake):
        with mock.patch.object(_abi, "_lib", None), \
                mock.patch.object(_abi, "_candidates", lambda: iter(["libsparkdoc.so"])), \
                mock.patch("ctypes.CDLL", lambda path: fake):
            return _abi.library()

    def test_library_of_another_version_is_a_clear_error(self):
        with self.assertRaises(OSError) as caught:
            self.load(FakeLibrary(_abi.ABI_VERSION, "0.0.9"))
        message = str(caught.exception)
        self.assertIn("sparkdoc 0.0.9", message)
        self.assertIn(f"this Python package is sparkdoc {sparkdoc.__version__}", message)

    def test_library_of_another_abi_is_a_clear_error(self):
        with self.assertRaises(OSError) as caught:
            self.load(FakeLibrary(_abi.ABI_VERSION + 1, sparkdoc.__version__))
        self.assertIn(f"ABI {_abi.ABI_VERSION + 1}", str(caught.exception))

    def test_library_without_a_declared_function_is_refused_not_raised_as_attribute_error(self):
        fake = FakeLibrary(_abi.ABI_VERSION, sparkdoc.__version__)
        del fake.sparkdoc_load
        with self.assertRaises(OSError) as caught:
            self.load(fake)
        self.assertIn("lacks sparkdoc_load", str(caught.exception))

    def test_library_of_this_version_is_used(self):
        fake = FakeLibrary(_abi.ABI_VERSION, sparkdoc.__version__)
        self.assertIs(self.load(fake), fake)


class Version(unittest.TestCase):
    def test_package_version_is_the_cmake_project_version(self):
        cmake = SOURCE / "CMakeLists.txt"
        if not cmake.exists():
            self.skipTest(f"no {cmake}")
        project = re.search(r"project\(sparkdoc VERSION ([0-9.]+)", cmake.read_text())
        self.assertIsNotNone(project)
        self.assertEqual(project.group(1), sparkdoc.__version__)


class RunTheBinary(unittest.TestCase):
    def test_bundled_binary_is_found(self):
        with tempfile.TemporaryDirectory() as d:
            package = Path(d) / "sparkdoc"
            (package / "bin").mkdir(parents=True)
            exe = package / "bin" / "sparkdoc"
            exe.write_text("#!/bin/sh\n")
            exe.chmod(0o755)
            self.assertEqual(main_module.binary(package), exe)

    def test_no_binary_is_exit_2_with_what_to_do(self):
        with mock.patch.object(main_module, "binary", lambda: None), \
                mock.patch("sys.stderr") as err:
            self.assertEqual(main_module.main(["check"]), 2)
        written = "".join(c.args[0] for c in err.write.call_args_list)
        self.assertIn("scripts/build-wheel.sh", written)

    def test_argv_goes_to_the_binary_by_exec(self):
        with mock.patch.object(main_module, "binary", lambda: Path("/x/sparkdoc")), \
                mock.patch("os.execv") as execv:
            main_module.main(["check", "--json"])
        execv.assert_called_once_with("/x/sparkdoc", ["sparkdoc", "check", "--json"])


def elf(machine, byte_order="<"):
    ident = b"\x7fELF" + bytes([2, 1 if byte_order == "<" else 2, 1]) + bytes(9)
    return ident + struct.pack(byte_order + "HH", 3, machine) + bytes(44)


class WheelPlatform(unittest.TestCase):
    def setUp(self):
        path = SOURCE / "scripts" / "wheel_platform.py"
        if not path.exists():
            self.skipTest(f"no {path}")
        spec = importlib.util.spec_from_file_location("wheel_platform", path)
        self.tool = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.tool)
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, data):
        path = Path(self.dir.name) / name
        path.write_bytes(data)
        return str(path)

    def test_machine_is_read_from_e_machine(self):
        self.assertEqual(self.tool.elf_machine(self.write("a", elf(183))), 183)
        self.assertEqual(self.tool.elf_machine(self.write("b", elf(62, ">"))), 62)

    def test_file_of_another_architecture_is_refused(self):
        aarch64 = self.write("libsparkdoc.so", elf(183))
        with self.assertRaises(ValueError) as caught:
            self.tool.platform_tag("x86_64", [aarch64])
        self.assertIn("built for aarch64, not x86_64", str(caught.exception))

    def test_not_an_elf_file_is_refused(self):
        with self.assertRaises(ValueError):
            self.tool.platform_tag("x86_64", [self.write("t", b"#!/bin/sh\n" + bytes(30))])

    def test_manylinux_only_with_glibc_libraries_at_2_35_or_below(self):
        f = self.write("s", elf(62))
        with mock.patch.object(self.tool, "glibc_needs", lambda p: (["libc.so.6", "libm.so.6"], 34)), \
                mock.patch("shutil.which", return_value="/usr/bin/readelf"):
            self.assertEqual(self.tool.platform_tag("x86_64", [f])[0], "manylinux_2_35_x86_64")
        with mock.patch.object(self.tool, "glibc_needs", lambda p: (["libc.so.6"], 36)), \
                mock.patch("shutil.which", return_value="/usr/bin/readelf"):
            tag, notes = self.tool.platform_tag("x86_64", [f])
            self.assertEqual(tag, "manylinux_2_36_x86_64")
            self.assertTrue(notes)
        with mock.patch.object(self.tool, "glibc_needs", lambda p: (["libstdc++.so.6"], 30)), \
                mock.patch("shutil.which", return_value="/usr/bin/readelf"):
            self.assertEqual(self.tool.platform_tag("x86_64", [f])[0], "linux_x86_64")

    def test_unknown_architecture_is_refused(self):
        with self.assertRaises(ValueError):
            self.tool.platform_tag("riscv64", [])


if __name__ == "__main__":
    unittest.main()
