#!/usr/bin/env python3
"""Writes a safetensors file of N one-element F32 tensors (default 1,000,000) for timing
`sparkdoc load --verify` on many tiny tensors: bench/verify_many_tensors.py OUT [N]."""
import json
import struct
import sys

path = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
header = {f"t{i}": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
          for i in range(count)}
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(path, "wb") as out:
    out.write(struct.pack("<Q", len(text)))
    out.write(text)
    out.write(struct.pack(f"<{count}f", *range(count)))
