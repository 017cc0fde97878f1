#!/usr/bin/env python3
"""make_bench_models.py — random-weight checkpoints in real models' shapes, for bench.py.

  make_bench_models.py OUT_DIR [NAME ...]

Writes two Hugging Face model folders (never committed: OUT_DIR is under build/),
or only those NAMEs lists:
  OUT_DIR/gpt2_small/   GPT-2 small's shape: 124M parameters, F32 (548 MB with the
                        twelve (1, 1, 1024, 1024) attn.bias buffers the hub's file
                        holds too): vocab 50257, n_positions 1024, 12 layers,
                        d_model 768, 12 heads; names without a prefix, as the hub's
  OUT_DIR/llama32_1b/   Llama-3.2-1B's shape: 1.24B parameters, BF16 (2.47 GB): 16
                        layers, d_model 2048, 32 heads over 8 K/V heads, head_dim 64,
                        intermediate 8192, vocab 128256, tied embeddings, rope_theta
                        500000, rope_scaling llama3 (factor 32, original 8192)
each with config.json as transformers writes it, the tensors named and laid out as
in tests/models/make_checkpoints.py (the same specs: see there), a tokenizer.json and
bench.json: {"text", "ids", "layer"} — the sentence both programs run on, the ids
that tokenizer.json gives for it and the layer to show (GPT-2: 40 tokens, layer 5;
the Llama shape: 64 tokens, its last layer, 15), as issue 29's speed targets say.

tokenizer.json is a byte-level BPE with no merges: one token per byte, id = the
byte, so an ASCII text of N characters is N tokens and both programs see the same
ids without the real vocabularies (the real tokenizers are tested elsewhere; here
only the checkpoint's size and the forward pass matter).

The weights: normal values (a norm's weight 1 + normal), at the scales of the tests'
specs, drawn for the small tensors and, for the large ones, read cyclically from one
block of 4194301 random values (a prime, so no two rows of a matrix are the same
run of it) from an offset of their own: 3 GB of independent normal draws would take
minutes on a shared core, and only the sizes matter to the bench. The files are
streamed tensor by tensor (a few hundred MB of memory). A folder already written by
this version of the script (its stamp file) is kept.
"""
import hashlib
import json
import os
import sys
import time
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
import make_checkpoints as mc  # noqa: E402

SENTENCE = ("When Mary and John went to the store, John gave a drink to Mary. "
            "Then they walked home together in the rain.")

MODELS = [
    (dict(name="gpt2_small", family="gpt2", dtype="F32", d=768, heads=12, layers=12,
          vocab=50257, n_positions=1024, prefix="", mask_buffers=True),
     40, 5),
    (dict(name="llama32_1b", family="llama", dtype="BF16", d=2048, heads=32, kv_heads=8,
          layers=16, inter=8192, vocab=128256, tied=True, rope_theta=500000.0,
          rope_scaling=mc.LLAMA32_ROPE, head_dim_in_config=True, max_positions=131072,
          bos=128000),
     64, 15),
]

BLOCK = 4194301          # values in the cyclic block (a prime)
SMALL = 1 << 20          # tensors up to this many values are drawn whole


def bytes_to_unicode():
    """GPT-2's byte-level alphabet (tokenizers' ByteLevel): byte -> printable character."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def tokenizer_json(special):
    """A byte-level BPE without merges, laid out as GPT-2's tokenizer.json."""
    vocab = {ch: b for b, ch in sorted(bytes_to_unicode().items())}
    sid, stext = special
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": sid, "content": stext, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "vocab": vocab, "merges": []},
    }


class Block:
    """The cyclic block, scaled and rounded once per (std, dtype): (2 * BLOCK) values."""

    def __init__(self, seed):
        gen = torch.Generator().manual_seed(seed)
        base = torch.randn(BLOCK, generator=gen)
        self.base = torch.cat([base, base])
        self.cache = {}

    def raw(self, std, dtype):
        key = (std, dtype)
        if key not in self.cache:
            self.cache[key] = memoryview(mc.tensor_bytes((self.base * std).to(mc.DTYPES[dtype])))
        return self.cache[key]


def write_tensor(f, name, shape, init, dtype, gen, block):
    n = 1
    for s in shape:
        n *= s
    if n <= SMALL or not isinstance(init, float):
        f.write(mc.tensor_bytes(mc.draw(gen, shape, init, dtype)))
        return
    raw, size = block.raw(init, dtype), mc.BYTES[dtype]
    pos = zlib.crc32(name.encode()) % BLOCK   # the tensor's own offset
    left = n
    while left:
        m = min(left, BLOCK)
        f.write(raw[pos * size:(pos + m) * size])
        pos = (pos + m) % BLOCK
        left -= m


def write_model(folder, c, n_tokens, layer, stamp):
    spec, config = mc.spec_and_config(c)
    os.makedirs(folder, exist_ok=True)
    stamp_path = os.path.join(folder, "written-by")
    if os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
        print(f"make_bench_models: {folder} already written", file=sys.stderr)
        return
    t0 = time.perf_counter()
    if os.path.exists(stamp_path):
        os.remove(stamp_path)
    gen = torch.Generator().manual_seed(29)
    block = Block(29)
    entries = [(name, c["dtype"], shape) for name, shape, init in spec]
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(mc.safetensors_header(entries))
        for name, shape, init in spec:
            write_tensor(f, name, shape, init, c["dtype"], gen, block)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    special = (50256, "<|endoftext|>") if c["family"] == "gpt2" else (128000, "<|begin_of_text|>")
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(special), f, ensure_ascii=False)
    text = SENTENCE[:n_tokens]
    with open(os.path.join(folder, "bench.json"), "w") as f:
        json.dump({"text": text, "ids": list(text.encode()), "layer": layer}, f)
        f.write("\n")
    with open(stamp_path, "w") as f:
        f.write(stamp)
    size = os.path.getsize(os.path.join(folder, "model.safetensors"))
    print(f"make_bench_models: {folder}: {size / 1e9:.2f} GB in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)


def main():
    names = [c["name"] for c, _, _ in MODELS]
    if len(sys.argv) < 2 or any(n not in names for n in sys.argv[2:]):
        sys.exit(f"usage: make_bench_models.py OUT_DIR [NAME ...] (names: {', '.join(names)})")
    torch.set_num_threads(1)
    h = hashlib.sha256()
    for path in (__file__, mc.__file__):
        with open(path, "rb") as f:
            h.update(f.read())
    for c, n_tokens, layer in MODELS:
        if len(sys.argv) > 2 and c["name"] not in sys.argv[2:]:
            continue
        write_model(os.path.join(sys.argv[1], c["name"]), c, n_tokens, layer, h.hexdigest())


if __name__ == "__main__":
    main()
