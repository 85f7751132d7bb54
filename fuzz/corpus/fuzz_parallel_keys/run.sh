#!/bin/bash
set -euo pipefail
vllm serve nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 \
  --tensor-parallel-size 2 \
  --max-model-len 32768
