#!/bin/bash
# 001 "Inference: llama.cpp": the GB10 build and the server.
cd llama.cpp && mkdir -p build && cd build
cmake .. \
  -DGGML_CUDA=ON \
  -DGGML_CUDA_F16=ON \
  -DGGML_CUDA_FA_ALL_QUANTS=ON \
  -DCMAKE_CUDA_ARCHITECTURES=121 \
  -DGGML_NATIVE=ON
cmake --build . --config Release -j 8
./bin/llama-server \
  -m /models/qwen3.5-35b-a3b-q4_k_m.gguf \
  --no-mmap \
  --chat-template chatml \
  --ctx-size 16384 \
  -ngl 999 \
  -fa 1
