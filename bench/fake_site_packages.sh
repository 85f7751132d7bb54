#!/bin/bash
# A site-packages folder the size of a full CUDA stack, for the audit's benchmarks without a
# GPU machine: the shared objects of /usr/lib/<multiarch> (up to LIMIT, default 840) in
# folders of 6 as packages, each with a dist-info whose RECORD lists them, and the CUDA
# toolkit's libraries (/usr/local/cuda/lib64, when there is one) as nvidia/cu13/lib, plus an
# empty torch/__init__.py so that the audit models torch's preload.
#   bench/fake_site_packages.sh DIR [LIMIT]
set -eu
dir=$1
limit=${2:-840}
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
rm -rf "$dir"
mkdir -p "$dir/torch" "$dir/nvidia/cu13/lib"
: >"$dir/torch/__init__.py"
n=0
find "/usr/lib/$multiarch" -maxdepth 2 -name '*.so*' -type f | sort | head -n "$limit" |
  while read -r so; do
    pkg=pkg$((n / 6))
    mkdir -p "$dir/$pkg" "$dir/$pkg-1.0.dist-info"
    name=$(basename "$so")
    case "$name" in *.so | *.so.[0-9]*) ;; *) name=$name.so ;; esac
    cp "$so" "$dir/$pkg/$name"
    echo "$pkg/$name,sha256=x,1" >>"$dir/$pkg-1.0.dist-info/RECORD"
    [ -f "$dir/$pkg-1.0.dist-info/METADATA" ] ||
      printf 'Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n' "$pkg" >"$dir/$pkg-1.0.dist-info/METADATA"
    n=$((n + 1))
  done
if [ -d /usr/local/cuda/lib64 ]; then
  mkdir -p "$dir/nvidia_cuda-13.0.dist-info"
  find -L /usr/local/cuda/lib64 -maxdepth 1 -name '*.so*' -type f | sort | while read -r so; do
    cp -L "$so" "$dir/nvidia/cu13/lib/"
    echo "nvidia/cu13/lib/$(basename "$so"),sha256=x,1" >>"$dir/nvidia_cuda-13.0.dist-info/RECORD"
  done
fi
find "$dir" -name '*.so*' -type f | wc -l
du -sh "$dir" | cut -f1
