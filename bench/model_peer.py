#!/usr/bin/env python3
"""model_peer.py — what a Python user would run instead of mhaviz on a model, for bench.py.

  model_peer.py MODEL_DIR OUT_DIR --layer N|all --ids 1,2,3,...

Loads the model folder's safetensors into torch (mapped from the files, as
safetensors' own loader does, each tensor converted to float32 when the forward
pass uses it, an embedding's rows only), runs the forward pass up to layer N's attention in float32 (the
reference forward of tests/models/make_checkpoints.py, written from transformers'
modeling code, stopping at that layer: the same steps mhaviz runs) and draws each
head's attention map of that layer (--layer all: the forward through every layer,
each head of every layer, as mhaviz without --layer) with matplotlib, one PNG a head (labelled axes
with the tokenizer.json pieces of the ids, colour bar, masked cells apart:
bench/matplotlib_class.py's heatmap). bench.py times it end to end (Python's start
and imports included); it prints its phases and its peak memory to stderr:
  load: ... ms / forward: ... ms / draw: ... ms / peak memory: ... MB
"""
import argparse
import json
import os
import resource
import struct
import sys
import time

import numpy as np
import torch
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
sys.path.insert(0, HERE)
import make_checkpoints as mc  # noqa: E402
from matplotlib_class import heatmap  # noqa: E402

NUMPY_OF = {"F32": np.float32, "F16": np.float16, "BF16": np.int16}
EMBEDDINGS = ("wte.weight", "wpe.weight", "embed_tokens.weight")


class Checkpoint:
    """A model folder's tensors, mapped from its safetensors files (none read whole);
    names without the "transformer." / "model." prefix."""

    def __init__(self, folder):
        index = os.path.join(folder, "model.safetensors.index.json")
        if os.path.exists(index):
            with open(index) as f:
                files = sorted(set(json.load(f)["weight_map"].values()))
        else:
            files = ["model.safetensors"]
        self.entries = {}
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                (n,) = struct.unpack("<Q", f.read(8))
                header = json.loads(f.read(n))
            data = np.memmap(path, dtype=np.uint8, mode="c")   # copy-on-write: writable views
            for key, info in header.items():
                if key == "__metadata__":
                    continue
                for prefix in ("transformer.", "model."):
                    if key.startswith(prefix):
                        key = key[len(prefix):]
                b, e = info["data_offsets"]
                self.entries[key] = (data[8 + n + b:8 + n + e], info["dtype"], info["shape"])

    def __contains__(self, name):
        return name in self.entries

    def __getitem__(self, name):
        """The tensor in float32; an embedding (only a few of its rows are read) as stored."""
        raw, dtype, shape = self.entries[name]
        if dtype == "BF16" and not name.endswith(EMBEDDINGS):
            # bfloat16 is float32's top half: numpy's shift is 2-3x faster than
            # torch's conversion here.
            return torch.from_numpy((raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)).reshape(shape)
        t = torch.from_numpy(raw.view(NUMPY_OF[dtype])).reshape(shape)
        return t.view(torch.bfloat16) if dtype == "BF16" else t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--layer", required=True, help="a layer, or all")
    ap.add_argument("--ids", required=True, help="comma-separated token ids")
    args = ap.parse_args()
    ids = [int(i) for i in args.ids.split(",")]
    torch.set_num_threads(os.cpu_count())   # as many threads as mhaviz (libgomp chose 1 here)
    os.makedirs(args.out_dir, exist_ok=True)

    t0 = time.perf_counter()
    with open(os.path.join(args.model_dir, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(args.model_dir, "tokenizer.json")) as f:
        piece = {i: p for p, i in json.load(f)["model"]["vocab"].items()}
    W = Checkpoint(args.model_dir)
    t1 = time.perf_counter()

    forward = mc.gpt2_forward if cfg["model_type"] == "gpt2" else mc.llama_forward
    n_layers = cfg.get("n_layer", cfg.get("num_hidden_layers"))
    shown = range(n_layers) if args.layer == "all" else [int(args.layer)]
    with torch.no_grad():
        layers, _ = forward(W, cfg, ids, dtype=torch.float32, last_layer=shown[-1])
    t2 = time.perf_counter()

    tokens = [piece.get(i, str(i)) for i in ids]
    mask = np.tri(len(ids), dtype=bool)
    for layer in shown:
        attn = layers[layer]["attn"].numpy()                     # (n_heads, T, T)
        for h in range(attn.shape[0]):
            fig, ax = plt.subplots(figsize=(6, 5.5))
            fig.colorbar(heatmap(ax, attn[h], mask, tokens, f"layer {layer}, head {h}"),
                         ax=ax, label="attention weight")
            name = f"head_{h:02d}.png" if args.layer != "all" else f"layer_{layer:02d}_head_{h:02d}.png"
            fig.savefig(os.path.join(args.out_dir, name), dpi=150)
            plt.close(fig)
    t3 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"load: {(t1 - t0) * 1e3:.1f} ms\nforward: {(t2 - t1) * 1e3:.1f} ms\n"
          f"draw: {(t3 - t2) * 1e3:.1f} ms\npeak memory: {peak:.0f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
