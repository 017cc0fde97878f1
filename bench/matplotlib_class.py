#!/usr/bin/env python3
"""matplotlib_class.py — what a teacher would write without mhaviz, for bench.py.

  matplotlib_class.py INPUT.json OUT_DIR

Reads an mhaviz input with its numbers inline (tokens, x, W_q ... b_o,
n_heads, n_kv_heads, causal), runs the forward pass in numpy (the heads, and
the single wide head from their q, k and v, as mhaviz does) and draws, with
matplotlib, the pictures mhaviz draws for it: one heatmap a head and one for
the wide head (labelled axes, colour bar, masked cells shown apart), the
overview of all of them, a sharpness chart (each map's normalised entropy per
query) and the pull picture of one query (each head's and the wide head's
weights on its keys). mhaviz's architecture diagram, its report and its
JSON are not made: this script draws fewer pictures than mhaviz writes.
bench.py times it end to end (Python's start and imports included, as a
teacher would wait for them) against mhaviz on the same input.
"""
import json
import os
import sys

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def attention(q, k, v, n_heads, n_kv_heads, causal):
    T, d = q.shape
    hd = d // n_heads
    q = q.reshape(T, n_heads, hd).transpose(1, 0, 2)
    k = np.repeat(k.reshape(T, n_kv_heads, hd).transpose(1, 0, 2), n_heads // n_kv_heads, axis=0)
    v = np.repeat(v.reshape(T, n_kv_heads, hd).transpose(1, 0, 2), n_heads // n_kv_heads, axis=0)
    s = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
    mask = np.tri(T, dtype=bool) if causal else np.ones((T, T), dtype=bool)
    s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    att = e / e.sum(axis=-1, keepdims=True)
    return att, mask


def heatmap(ax, a, mask, tokens, title):
    shown = np.ma.masked_where(~mask, a)
    ax.set_facecolor("#dddddd")  # masked cells: grey, apart from weight 0
    im = ax.imshow(shown, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(tokens)), tokens, rotation=90)
    ax.set_yticks(range(len(tokens)), tokens)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    ax.set_title(title)
    return im


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with open(src) as f:
        d = json.load(f)
    a = {k: np.array(d[k], dtype=np.float32) for k in ("x", "W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")}
    tokens, H, KV, causal = d["tokens"], d["n_heads"], d.get("n_kv_heads", d["n_heads"]), d.get("causal", False)
    x = a["x"]
    q, k, v = x @ a["W_q"] + a["b_q"], x @ a["W_k"] + a["b_k"], x @ a["W_v"] + a["b_v"]
    att, mask = attention(q, k, v, H, KV, causal)
    T, dm = q.shape
    rep = H // KV
    k_wide = np.repeat(k.reshape(T, KV, -1), rep, axis=1).reshape(T, dm)
    v_wide = np.repeat(v.reshape(T, KV, -1), rep, axis=1).reshape(T, dm)
    wide, _ = attention(q, k_wide, v_wide, 1, 1, causal)
    maps = [(att[h], f"head {h}") for h in range(H)] + [(wide[0], "single wide head")]

    for n, (m, title) in enumerate(maps):
        fig, ax = plt.subplots(figsize=(6, 5.5))
        fig.colorbar(heatmap(ax, m, mask, tokens, title), ax=ax, label="attention weight")
        fig.savefig(os.path.join(out, f"head_{n:02d}.png" if n < H else "single_head.png"), dpi=150)
        plt.close(fig)

    cols = 3
    rows = (len(maps) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 4 * rows))
    for ax, (m, title) in zip(axes.flat, maps):
        heatmap(ax, m, mask, tokens, title)
    for ax in list(axes.flat)[len(maps):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "overview.png"), dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 5))
    n_vis = mask.sum(axis=1)
    for m, title in maps:
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -np.where(m > 0, m * np.log2(np.where(m > 0, m, 1)), 0).sum(axis=1) / np.log2(n_vis)
        ax.plot(range(1, T), h[1:], marker="o", label=title)
    ax.set_xticks(range(1, T), tokens[1:], rotation=90)
    ax.set_ylabel("normalised entropy")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sharpness.png"), dpi=150)
    plt.close(fig)

    i = T - 1
    fig, ax = plt.subplots(figsize=(12, 6))
    width = 0.8 / len(maps)
    for n, (m, title) in enumerate(maps):
        ax.bar(np.arange(i + 1) + n * width, m[i, :i + 1], width, label=title)
    ax.set_xticks(np.arange(i + 1) + 0.4, tokens[:i + 1], rotation=90)
    ax.set_title(f"query {i} ({tokens[i]}): each head's weights on its keys")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"query_{i:02d}.png"), dpi=150)
    plt.close(fig)


if __name__ == "__main__":
    main()
