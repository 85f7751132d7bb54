"""Writes safetensors files with plain Python (no torch), for the tests."""

import json
import struct

SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "BF16": 2, "F16": 2, "F32": 4, "I64": 8}


def write(path, tensors):
    """tensors: list of (name, dtype, shape, bytes). Offsets contiguous in the given order."""
    header = {"__metadata__": {"format": "pt"}}
    at = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + len(data)]}
        at += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for *_, data in tensors:
            f.write(data)


def tensor(name, dtype, shape, seed):
    n = SIZES[dtype]
    for d in shape:
        n *= d
    data = bytes((seed * 131 + i * 7 + (i >> 8)) & 0xFF for i in range(n))
    return (name, dtype, shape, data)
