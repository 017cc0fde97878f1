#!/usr/bin/env python3
"""make_corpus_safetensors.py — (re)writes the seeds of fuzz_safetensors.c in
tests/fuzz/corpus_safetensors/: small safetensors files, valid ones of each
dtype mhaviz reads and ones it refuses. Deterministic: the same bytes every run.
Usage: python3 tests/fuzz/make_corpus_safetensors.py"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_safetensors")


def safetensors(tensors, pad=True):
    """tensors: [(name, dtype, shape, raw bytes)] -> the file's bytes."""
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def main():
    os.makedirs(OUT, exist_ok=True)
    f32 = struct.pack("<6f", 1, -2, 0.5, 3, 0, -0.25)
    f16 = struct.pack("<6e", 1, -2, 0.5, 3, 0, -0.25)
    bf16 = b"".join(struct.pack("<f", v)[2:] for v in (1, -2, 0.5, 3, 0, -0.25))
    seeds = {
        "f32": safetensors([("a.weight", "F32", [2, 3], f32), ("a.bias", "F32", [3], f32[:12])]),
        "f16": safetensors([("w", "F16", [3, 2], f16)]),
        "bf16": safetensors([("w", "BF16", [6], bf16)]),
        "i8": safetensors([("q", "I8", [4], b"\x01\x02\x03\x04")]),
        "nan": safetensors([("w", "F32", [1], struct.pack("<f", float("nan")))]),
        "empty": safetensors([("z", "F32", [0], b"")]),
        "unpadded": safetensors([("w", "F32", [2], f32[:8])], pad=False),
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
