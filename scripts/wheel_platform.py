#!/usr/bin/env python3
"""The platform tag of a sparkdoc wheel, from the ELF files it will carry.

    scripts/wheel_platform.py ARCH FILE...     prints e.g. manylinux_2_35_x86_64

Refuses (exit 1, with the reason) when a file is not a 64-bit ELF file of ARCH (read from
e_machine, so a cross build can be wheeled on any host and a wrong build folder is caught). The tag
is manylinux_2_<N>_<ARCH> when the files need only glibc's own libraries (libc, libm, libpthread,
libdl, librt, the dynamic loader, libgcc_s; the release build links libstdc++ statically) at
symbol versions up to GLIBC_2.<N>, N at least 35: Ubuntu 22.04's glibc, the oldest sparkdoc supports.
Otherwise, or without readelf to tell, it is linux_<ARCH>, and a note says why: pip installs
such a wheel on any Linux of ARCH, but whether the files run there is the builder's word (what
they link must be installed, libelf1 for the release build today), and package indexes refuse
it."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys

EM = {"x86_64": 62, "aarch64": 183}
# What manylinux's policy lets a wheel link without carrying it (PEP 600: the system's glibc).
GLIBC_LIBRARIES = re.compile(
    r"^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libgcc_s\.so\.1|"
    r"ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$")
MIN_GLIBC_MINOR = 35


def elf_machine(path: str) -> int:
    """e_machine of a 64-bit ELF file; ValueError when it is none."""
    with open(path, "rb") as f:
        ident = f.read(20)
    if len(ident) < 20 or ident[:4] != b"\x7fELF":
        raise ValueError(f"{path}: not an ELF file")
    if ident[4] != 2:
        raise ValueError(f"{path}: not a 64-bit ELF file")
    order = {1: "<", 2: ">"}.get(ident[5])
    if order is None:
        raise ValueError(f"{path}: unknown ELF byte order {ident[5]}")
    (machine,) = struct.unpack(order + "H", ident[18:20])
    return machine


def readelf(flag: str, path: str) -> str:
    return subprocess.run(["readelf", "--wide", flag, path], check=True, capture_output=True,
                          text=True, env={**os.environ, "LC_ALL": "C"}).stdout


def glibc_needs(path: str) -> tuple[list[str], int]:
    """The file's DT_NEEDED libraries and the highest GLIBC_2.N minor it asks for."""
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf("--dynamic", path))
    minors = [int(m) for m in re.findall(r"Name: GLIBC_2\.(\d+)", readelf("--version-info", path))]
    return needed, max(minors, default=0)


def platform_tag(arch: str, files: list[str]) -> tuple[str, list[str]]:
    """(tag, notes); ValueError when a file is not of `arch`."""
    if arch not in EM:
        raise ValueError(f"unknown architecture {arch!r}: x86_64 or aarch64")
    names = {v: k for k, v in EM.items()}
    for path in files:
        machine = elf_machine(path)
        if machine != EM[arch]:
            found = names.get(machine, f"e_machine {machine}")
            raise ValueError(f"{path} is built for {found}, not {arch}: give the build folder of "
                             f"an {arch} build, or ARCH {found}")
    if shutil.which("readelf") is None:
        return f"linux_{arch}", ["no readelf here (binutils) to read the glibc the files need"]
    minor = MIN_GLIBC_MINOR
    for path in files:
        needed, glibc = glibc_needs(path)
        foreign = [n for n in needed if not GLIBC_LIBRARIES.match(n)]
        if foreign:
            return f"linux_{arch}", [f"{path} links {', '.join(foreign)}, which manylinux "
                                     "wheels may not assume"]
        minor = max(minor, glibc)
    notes = []
    if minor > MIN_GLIBC_MINOR:
        notes.append(f"the files need GLIBC_2.{minor}: the wheel installs only where glibc is at "
                     f"least 2.{minor}")
    return f"manylinux_2_{minor}_{arch}", notes


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    try:
        tag, notes = platform_tag(argv[0], argv[1:])
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"wheel_platform: {e}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"wheel_platform: note: {note}", file=sys.stderr)
    print(tag)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
