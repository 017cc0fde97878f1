#!/usr/bin/env python3
"""numpy_forward.py — the same forward pass in numpy, for bench.py.

  numpy_forward.py time  DIR T D_MODEL N_HEADS N_KV_HEADS CAUSAL RUNS [PASSES]
      times the float32 forward pass as a numpy user would write it (matrix
      products through numpy's BLAS, all heads at once, masked cells set to
      -inf before the softmax); prints the median in milliseconds. PASSES 2
      adds the single wide head as mhaviz runs it: the heads' q, and their k
      and v with each K/V head's columns repeated for its query heads.
  numpy_forward.py check DIR T D_MODEL N_HEADS N_KV_HEADS CAUSAL
      computes the forward pass in float64 and prints the largest absolute
      difference of mhaviz's attention weights and output (files written by
      bench_forward) from it, and the BLAS library numpy loaded.

DIR holds x.f32, W_q.f32 ... b_o.f32: raw little-endian float32, "x@W" layout.
"""
import sys
import time

import numpy as np


def load(folder, T, d, kv, dtype):
    shapes = {"x": (T, d), "W_q": (d, d), "W_k": (d, kv), "W_v": (d, kv), "W_o": (d, d),
              "b_q": (d,), "b_k": (kv,), "b_v": (kv,), "b_o": (d,)}
    return {k: np.fromfile(f"{folder}/{k}.f32", dtype="<f4").reshape(s).astype(dtype)
            for k, s in shapes.items()}


def attention(a, q, k, v, n_heads, n_kv_heads, causal):
    """Steps 2 to 8 of issue 2's forward pass from the projections, in their dtype."""
    T, d = q.shape
    hd = d // n_heads
    dt = q.dtype.type
    q = q.reshape(T, n_heads, hd).transpose(1, 0, 2)
    k = k.reshape(T, n_kv_heads, hd).transpose(1, 0, 2)
    v = v.reshape(T, n_kv_heads, hd).transpose(1, 0, 2)
    if n_kv_heads != n_heads:
        k = np.repeat(k, n_heads // n_kv_heads, axis=0)
        v = np.repeat(v, n_heads // n_kv_heads, axis=0)
    s = (q @ k.transpose(0, 2, 1)) * dt(1.0 / np.sqrt(hd))
    if causal:
        s = np.where(np.tri(T, dtype=bool), s, dt(-np.inf))
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    att = s / s.sum(axis=-1, keepdims=True)
    concat = (att @ v).transpose(1, 0, 2).reshape(T, d)
    return att, concat @ a["W_o"] + a["b_o"]


def forward(a, n_heads, n_kv_heads, causal, passes=1):
    """Multi-head attention as in issue 2; passes=2 adds the single wide head."""
    x = a["x"]
    T, d = x.shape
    q = x @ a["W_q"] + a["b_q"]
    k = x @ a["W_k"] + a["b_k"]
    v = x @ a["W_v"] + a["b_v"]
    att, out = attention(a, q, k, v, n_heads, n_kv_heads, causal)
    if passes == 2:
        rep = n_heads // n_kv_heads
        k_wide = np.repeat(k.reshape(T, n_kv_heads, -1), rep, axis=1).reshape(T, d)
        v_wide = np.repeat(v.reshape(T, n_kv_heads, -1), rep, axis=1).reshape(T, d)
        attention(a, q, k_wide, v_wide, 1, 1, causal)
    return att, out


def blas_library():
    """The BLAS numpy loaded, as folder/file (e.g. openblas-pthread/libblas.so.3)."""
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            name = path.rsplit("/", 1)[-1].lower()
            if name.startswith(("libblas", "libopenblas", "libmkl")):
                return "/".join(path.rsplit("/", 2)[-2:])
    return "unknown"


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    T, d, H, KV, causal = (int(v) for v in sys.argv[3:8])
    kv = KV * (d // H)
    if mode == "time":
        runs = int(sys.argv[8])
        passes = int(sys.argv[9]) if len(sys.argv) > 9 else 1
        a = load(folder, T, d, kv, np.float32)
        forward(a, H, KV, causal, passes)  # warm-up
        ms = []
        for _ in range(runs):
            t0 = time.perf_counter()
            att, out = forward(a, H, KV, causal, passes)
            ms.append((time.perf_counter() - t0) * 1e3)
            assert att.dtype == np.float32 and out.dtype == np.float32
        print(f"{float(np.median(ms)):.3f}")
    elif mode == "check":
        att, out = forward(load(folder, T, d, kv, np.float64), H, KV, causal)
        m_att = np.fromfile(f"{folder}/mhaviz_att.f32", dtype="<f4").reshape(att.shape)
        m_out = np.fromfile(f"{folder}/mhaviz_out.f32", dtype="<f4").reshape(out.shape)
        print(f"{np.abs(m_att - att).max():.3g} {np.abs(m_out - out).max():.3g} "
              f"{np.abs(out).max():.3g} {blas_library()}")
    else:
        sys.exit("usage: numpy_forward.py time|check DIR T D_MODEL N_HEADS N_KV_HEADS CAUSAL [RUNS [PASSES]]")


if __name__ == "__main__":
    main()
