"""The wheel's platform tag, which pyproject.toml cannot state.

scripts/build-wheel.sh stages libsparkdoc.so and bin/sparkdoc beside the package and sets
SPARKDOC_WHEEL_PLATFORM to the tag it derived from those ELF files (manylinux_2_35_x86_64,
linux_aarch64, ...): the wheel is then py3-none-<tag>, one wheel for every Python 3, since the
library is loaded with ctypes and is no extension module. Without the staged files the wheel is
pure (py3-none-any) and finds the library through SPARKDOC_LIBRARY or the system's."""

import os
from pathlib import Path

from setuptools import setup
from setuptools.dist import Distribution
from wheel.bdist_wheel import bdist_wheel

here = Path(__file__).resolve().parent
bundled = (here / "sparkdoc" / "libsparkdoc.so").exists() or (here / "sparkdoc" / "bin" / "sparkdoc").exists()
platform = os.environ.get("SPARKDOC_WHEEL_PLATFORM", "")
if bundled and not platform:
    raise SystemExit("setup.py: native files are staged but SPARKDOC_WHEEL_PLATFORM is not set: "
                     "build the wheel with scripts/build-wheel.sh BUILD_DIR")


class NativeFiles(Distribution):
    """Native files make the wheel platlib (not purelib) and platform-tagged."""

    def has_ext_modules(self):
        return bundled


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        if not bundled:
            return super().get_tag()
        return "py3", "none", platform


setup(distclass=NativeFiles, cmdclass={"bdist_wheel": PlatformWheel})
