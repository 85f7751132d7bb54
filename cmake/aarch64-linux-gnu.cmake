# Cross-building sparkdoc for aarch64 (every DGX Spark) on an x86_64 Debian or Ubuntu machine,
# with the distribution's cross toolchain (crossbuild-essential-arm64) and the arm64 -dev
# packages installed through multiarch (libelf-dev:arm64, zlib1g-dev:arm64, ...). Tests and
# the build-time tools that run a target binary go through qemu-aarch64-static, called
# explicitly with the cross sysroot: nothing relies on binfmt_misc being registered.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The target's libraries and -dev files are in the host's /usr, under the multiarch triplet;
# header-only packages (CLI11, nlohmann-json, tl-expected) are in /usr/share and /usr/include.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")

find_program(SPARKDOC_QEMU_AARCH64 qemu-aarch64-static)
if(SPARKDOC_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${SPARKDOC_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
