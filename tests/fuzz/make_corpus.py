#!/usr/bin/env python3
"""make_corpus.py — (re)writes the fuzz seed corpus in tests/fuzz/corpus/.

Small valid inputs covering every input feature (so the fuzzer starts inside
the loader's deep paths), and broken ones covering every kind of malformed
input the loader must refuse. Deterministic: same files every run.
Usage: /usr/bin/python3 tests/fuzz/make_corpus.py"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def mat(rows, cols, seed):
    """A small deterministic matrix with short decimals."""
    return [[round(((r * cols + c + seed) * 37 % 19 - 9) / 10, 1) for c in range(cols)]
            for r in range(rows)]


def base(T=3, d=4, h=2, kv=None):
    kv = kv or h
    hd = d // h
    doc = {"tokens": ["the", "cat", "sat", "on", "mat", "the"][:T],
           "d_model": d, "n_heads": h,
           "x": mat(T, d, 1),
           "W_q": mat(d, d, 2), "W_k": mat(d, kv * hd, 3),
           "W_v": mat(d, kv * hd, 4), "W_o": mat(d, d, 5)}
    if kv != h:
        doc["n_kv_heads"] = kv
    return doc


def dump(doc):
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


valid = {}
valid["mha"] = base()
valid["mha_noncausal"] = dict(base(), causal=False)
valid["one_token"] = base(T=1, d=2, h=1)
d = base(T=4, d=4, h=4, kv=2); valid["gqa"] = d
d = base(T=3, d=4, h=2, kv=1); valid["mqa"] = d
d = base(); del d["x"]
d["embeddings"] = {"the": [0.1, 0.2, 0.3, 0.4], "cat": [1, 0, -1, 0], "sat": [0, 0.5, 0, -0.5]}
valid["embeddings_sinusoidal"] = d
d = dict(d, positional="none"); valid["embeddings_none"] = d
d = base()
d.update(b_q=[0.1] * 4, b_k=[0.2] * 4, b_v=[-0.1] * 4, b_o=[0.3] * 4)
valid["biases"] = d
d = base()
for k in ("W_q", "W_k", "W_v", "W_o"):
    d[k] = [list(r) for r in zip(*d[k])]
d["weight_layout"] = "W@x"
valid["w_at_x"] = d
d = base()
d["single_head"] = {"W_q": mat(4, 4, 6), "W_k": mat(4, 4, 7), "W_v": mat(4, 4, 8), "W_o": mat(4, 4, 9),
                    "b_o": [0, 0, 0, 1]}
valid["single_head"] = d
d = base(); d["tokens"] = ["", "\u00e9t\u00e9", "\U0001F600"]; valid["unicode_tokens"] = d
d = base(); d["W_Q"] = 1; d["comment"] = "unknown keys warn"; valid["unknown_keys"] = d
# several layers over one token sequence: the tokens once, each layer its own x
layer = {k: v for k, v in base().items() if k != "tokens"}
valid["layers"] = {"tokens": base()["tokens"], "title": "two layers",
                   "layers": [layer, dict(layer, x=mat(3, 4, 6), W_q=mat(4, 4, 7))]}

broken = {}
good = dump(base())
broken["syntax_error"] = good.replace(b'"d_model":4,', b'"d_model":4,,')
broken["truncated"] = good[: len(good) // 2]
broken["empty"] = b""
broken["not_object"] = b"[1,2,3]"
broken["trailing_junk"] = good + b" junk"
d = base(); d["x"][1] = d["x"][1][:3]; broken["ragged_x"] = dump(d)
d = base(); d["W_k"][3] = d["W_k"][3] + [1]; broken["ragged_w_k"] = dump(d)
d = base(); d["x"][1][2] = 12345.5
broken["overflowing_number"] = dump(d).replace(b"12345.5", b"1e400")
broken["nan_literal"] = dump(d).replace(b"12345.5", b"NaN")
d = base(); d["x"][0][0] = "1"; broken["wrong_type"] = dump(d)
d = base(); del d["W_o"]; broken["missing_w_o"] = dump(d)
d = base(); del d["x"]; broken["neither_x_nor_embeddings"] = dump(d)
d = base(); d["embeddings"] = {"the": [0] * 4}; broken["both_x_and_embeddings"] = dump(d)
d = valid["embeddings_sinusoidal"].copy(); d["embeddings"] = {"the": [0] * 4}
broken["token_not_embedded"] = dump(d)
d = base(); d["single_head"] = {"W_q": mat(4, 2, 1), "W_k": mat(4, 4, 1), "W_v": mat(4, 4, 1), "W_o": mat(4, 4, 1)}
broken["single_head_shape"] = dump(d)
d = base(); d["n_heads"] = 3; broken["heads_not_dividing"] = dump(d)
d = base(); d["n_kv_heads"] = 3; broken["kv_not_dividing"] = dump(d)
d = base(); d["d_model"] = 10 ** 12; broken["huge_d_model"] = dump(d)
d = base(); d["d_model"] = 4.5; broken["fractional_d_model"] = dump(d)
d = base(); d["n_heads"] = -2; broken["negative_heads"] = dump(d)
d = base(); d["causal"] = 1; broken["causal_not_bool"] = dump(d)
d = base(); d["weight_layout"] = "W@X"; broken["bad_layout"] = dump(d)
d = base(); d["tokens"] = []; broken["no_tokens"] = dump(d)
d = json.loads(dump(valid["layers"])); d["layers"][1]["x"] = d["layers"][1]["x"][:2]; broken["layers_x_rows"] = dump(d)
d = json.loads(dump(valid["layers"])); d["layers"][1]["n_heads"] = 1; broken["layers_n_heads"] = dump(d)
broken["deep_nesting"] = b'{"tokens":' + b"[" * 5000 + b"]" * 5000 + b"}"
broken["invalid_utf8_token"] = good.replace(b'"cat"', b'"c\xffat"')
broken["nul_in_token"] = good.replace(b'"cat"', b'"c\\u0000at"')
broken["lone_surrogate"] = good.replace(b'"cat"', b'"\\ud800"')
broken["duplicate_key"] = good.replace(b'"d_model":4,', b'"d_model":4,"d_model":8,')
broken["bias_length"] = dump(dict(base(), b_q=[0, 0, 0]))

os.makedirs(OUT, exist_ok=True)
for name, doc in valid.items():
    with open(os.path.join(OUT, "valid_" + name + ".json"), "wb") as f:
        f.write(dump(doc))
for name, data in broken.items():
    with open(os.path.join(OUT, "bad_" + name + ".json"), "wb") as f:
        f.write(data)
print(f"{len(valid)} valid and {len(broken)} broken seeds in {OUT}")
