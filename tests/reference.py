#!/usr/bin/env python3
"""reference.py — golden cases for the forward pass, computed in float64.

Usage: reference.py OUT_DIR

An independent implementation of issue 2's computation, written straight from
the formulas with numpy in float64 (it shares no code with src/). For each case
it writes OUT_DIR/<case>/:

  config.txt          "T d_model n_heads n_kv_heads causal" on one line
  x.bin               (T, d_model)            input hidden states
  W_q.bin, W_o.bin    (d_model, d_model)      "x@W" layout
  W_k.bin, W_v.bin    (d_model, kv_dim)
  b_q.bin ... b_o.bin (d_model) or (kv_dim)   zeros when the case has no bias
  scores.bin          (n_heads, T, T)         q.k/sqrt(head_dim); masked cells 0
  att.bin             (n_heads, T, T)         softmax weights; masked cells 0
  out.bin             (T, d_model)            concat W_o + b_o
  single_scores.bin   (T, T)                  the single wide head (issue 2)
  single_att.bin      (T, T)
  single_out.bin      (T, d_model)

Every .bin is raw little-endian float64, row-major. The inputs are drawn from
the script's own xorshift64* generator and rounded to float32, so the C side
reads exactly the numbers the reference used.
"""
import os
import sys

import numpy as np

# name: (T, d_model, n_heads, n_kv_heads, causal, biases, seed)
CASES = {
    "mha":       (7, 16, 4, 4, True, False, 1),
    "gqa":       (6, 24, 6, 2, True, True, 2),
    "mqa":       (5, 16, 4, 1, True, False, 3),
    "noncausal": (6, 12, 3, 3, False, True, 4),
    "t1":        (1, 8, 2, 2, True, True, 5),
    "one_head":  (5, 8, 1, 1, True, True, 6),
    # Sizes that are not multiples of any vector or block width, so that the
    # vectorised loops' tails and matmul's narrower last column block run.
    "ragged":    (37, 60, 5, 5, True, True, 7),
    "wide":      (70, 96, 6, 3, True, True, 8),
    # Big enough (over 2^22 multiply-adds per loop) that src/core/mha.c's loops
    # use their threads: the thread-count test needs it.
    "threads":   (130, 192, 12, 4, True, True, 9),
}

MASK64 = (1 << 64) - 1


class XorShift64Star:
    """Marsaglia's xorshift64* (Vigna's multiplier): a seeded PRNG of our own."""

    def __init__(self, seed):
        self.s = (seed * 0x9E3779B97F4A7C15 + 1) & MASK64 or 1

    def next_u64(self):
        s = self.s
        s ^= s >> 12
        s ^= (s << 25) & MASK64
        s ^= s >> 27
        self.s = s
        return (s * 0x2545F4914F6CDD1D) & MASK64

    def uniform(self, shape, scale):
        """Numbers in [-scale, scale), rounded to float32, returned as float64."""
        n = int(np.prod(shape))
        u = [(self.next_u64() >> 11) / float(1 << 53) for _ in range(n)]
        a = (np.array(u, dtype=np.float64) * 2.0 - 1.0) * scale
        return a.astype(np.float32).astype(np.float64).reshape(shape)


def attend(q, k, v, n_heads, n_kv_heads, causal):
    """Per-head scores, softmax weights and concatenated outputs, float64."""
    T, d_model = q.shape
    hd = d_model // n_heads
    kv_mul = n_heads // n_kv_heads
    scores = np.zeros((n_heads, T, T))
    att = np.zeros((n_heads, T, T))
    concat = np.zeros((T, d_model))
    allowed = np.tril(np.ones((T, T), dtype=bool)) if causal else np.ones((T, T), dtype=bool)
    for h in range(n_heads):
        g = h // kv_mul
        q_h = q[:, h * hd:(h + 1) * hd]
        k_g = k[:, g * hd:(g + 1) * hd]
        v_g = v[:, g * hd:(g + 1) * hd]
        s = q_h @ k_g.T / np.sqrt(hd)
        s = np.where(allowed, s, 0.0)
        e = np.where(allowed, np.exp(s - np.where(allowed, s, -np.inf).max(axis=1, keepdims=True)), 0.0)
        a = e / e.sum(axis=1, keepdims=True)
        scores[h], att[h] = s, a
        concat[:, h * hd:(h + 1) * hd] = a @ v_g
    return scores, att, concat


def wide_kv(W, n_heads, n_kv_heads, hd):
    """K/V columns laid out per query head: head h's block is K/V head g's block."""
    kv_mul = n_heads // n_kv_heads
    return np.concatenate([W[..., (h // kv_mul) * hd:(h // kv_mul + 1) * hd]
                           for h in range(n_heads)], axis=-1)


def make_case(T, d_model, n_heads, n_kv_heads, causal, biases, seed):
    rng = XorShift64Star(seed)
    hd = d_model // n_heads
    kv_dim = n_kv_heads * hd
    w = 3.0 / np.sqrt(d_model)  # q, k, v of order 1, scores of a few units
    a = {"x": rng.uniform((T, d_model), 1.0),
         "W_q": rng.uniform((d_model, d_model), w),
         "W_k": rng.uniform((d_model, kv_dim), w),
         "W_v": rng.uniform((d_model, kv_dim), w),
         "W_o": rng.uniform((d_model, d_model), w)}
    for name, n in (("b_q", d_model), ("b_k", kv_dim), ("b_v", kv_dim), ("b_o", d_model)):
        a[name] = rng.uniform((n,), 0.5) if biases else np.zeros(n)

    x = a["x"]
    q = x @ a["W_q"] + a["b_q"]
    k = x @ a["W_k"] + a["b_k"]
    v = x @ a["W_v"] + a["b_v"]
    a["scores"], a["att"], concat = attend(q, k, v, n_heads, n_kv_heads, causal)
    a["out"] = concat @ a["W_o"] + a["b_o"]

    # The single wide head: the same projections as ONE head of width d_model.
    kw = wide_kv(k, n_heads, n_kv_heads, hd)
    vw = wide_kv(v, n_heads, n_kv_heads, hd)
    s, at, cw = attend(q, kw, vw, 1, 1, causal)
    a["single_scores"], a["single_att"] = s[0], at[0]
    a["single_out"] = cw @ a["W_o"] + a["b_o"]
    return a


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: reference.py OUT_DIR")
    root = sys.argv[1]
    for name, (T, d, nh, nkv, causal, biases, seed) in CASES.items():
        folder = os.path.join(root, name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.txt"), "w") as f:
            f.write(f"{T} {d} {nh} {nkv} {int(causal)}\n")
        for key, arr in make_case(T, d, nh, nkv, causal, biases, seed).items():
            np.ascontiguousarray(arr, dtype="<f8").tofile(os.path.join(folder, key + ".bin"))
    print(f"reference: {len(CASES)} golden cases in {root}")


if __name__ == "__main__":
    main()
