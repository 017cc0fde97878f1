"""train_rival.py: the fair experiment. Train the same small model twice on
the same data for the same steps, once with 4 heads and once with one head
of the same width, at several seeds, and export one seed's pair as an mhaviz
input whose "single_head" is the one head trained on its own (run by
`make samples`).

    python3 samples/train_rival.py OUT_DIR

The task: a sequence of 12 words drawn from 64, and at every position two
readouts that must each name a word: the word just before (previous token)
and the first word of the sequence (first token). The
model: fixed random token and position embeddings (drawn from the seed,
frozen, the same for both models: x = token + position embedding), one causal
attention layer (torch.nn.MultiheadAttention, d_model 32) and two linear
readouts of the layer's output. There is no residual path, so every word a
readout names has come through attention. The two models of a seed start from
the same weights (nn.MultiheadAttention's weights have the same shapes for 4
heads of 8 as for one head of 32), see the same batches and take the same
steps: they differ only in whether the layer's 32 columns are 4 heads or one.

Why one head cannot serve both: docs/trained.md.

Lessons 2 and 3 by training: the same model is also trained with its 4
query heads sharing 2 K/V heads (GQA-2) and 1 (MQA), from the same start
(the multi-head model's initial weights, each shared K/V head starting as
the first head of its group: the shapes allow no more), on the same
batches for the same steps, at the same seeds (Ainslie et al. 2023 train or
uptrain GQA with shared K/V; Shazeer 2019 trains MQA so). Their layers are
written as rival_gqa2.json and rival_mqa.json.

Written to OUT_DIR: rival.json (the mhaviz input: the 4-head layer, the one
head trained on its own as "single_head", both reading the same x, and under
"training" the held-out losses of both models at every seed),
npy/rival_*.npy (its x and weights, PyTorch's W@x layout) and
npy/rival_att.npy, npy/rival_single_att.npy: the maps PyTorch computed on the
sample's words, (n_heads * T, T) and (T, T), row = query, for the tests;
rival_gqa2.json and rival_mqa.json (their weights npy/rival_gqa2_*.npy,
npy/rival_mqa_*.npy, their maps npy/rival_gqa2_att.npy, npy/rival_mqa_att.npy),
the same x and one head, and the same "training" record: every model's
held-out losses, under "by_kv_heads" by its number of K/V heads, the mean of
the two readouts' under "held_out_loss" and each readout's under
"by_readout".

Deterministic: every model starts from torch.manual_seed(seed), whatever
was trained before it in the process; the embeddings, batches and held-out
sequences come from their own seeded generators; one thread, deterministic
algorithms. Two runs write the same bytes.
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

SEEDS = (1, 2, 3)
SHARED_KV = (2, 1)      # the K/V head counts also trained: GQA-2, MQA
SHIPPED = SEEDS[0]      # the seed whose pair rival.json holds
D_MODEL, N_HEADS = 32, 4
T = 12                  # words per sequence
BATCH, STEPS, LR = 64, 2000, 3e-3
HELD_OUT = 2000         # held-out sequences, the same for every seed
WORDS = ("cat dog fox owl bee ant cow pig hen yak ram bat elk emu eel gnu "
         "sun sky sea bay hill lake rock sand oak elm fig pea corn rice bean plum "
         "cup pot pan jar box bag hat cap key pen ink map book lamp bell drum "
         "ship boat car bus van cart sled kite red blue gold pink gray jade rose ruby").split()
READOUTS = ("previous token", "first token")
# The sample's sequence: 12 different words, so that every cell of its maps
# counts for the one relation it looks like (no earlier copies).
SAMPLE = "owl sun key cat boat fig map dog lamp sea hat bee"


def targets(ids):
    """(2, B, T) the word each readout must name at each position: the
    previous word and the first word."""
    previous = torch.cat([ids[:, :1], ids[:, :-1]], dim=1)  # position 0: unused
    return torch.stack([previous, ids[:, :1].expand_as(ids)])


class SharedKV(nn.Module):
    """Causal attention whose n_heads query heads share n_kv K/V heads (query
    head h reads K/V head h // (n_heads // n_kv)), started from mha's weights:
    W_q, W_o as they are, K/V head g from mha's K/V head g * (n_heads // n_kv),
    the first of its group. Called as nn.MultiheadAttention is here."""

    def __init__(self, mha, n_kv):
        super().__init__()
        E, H = mha.embed_dim, mha.num_heads
        hd, r = E // H, H // n_kv
        self.num_heads, self.n_kv, self.embed_dim = H, n_kv, E
        W, b = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()   # (3E, E), (3E)
        rows = torch.cat([torch.arange(g * r * hd, g * r * hd + hd) for g in range(n_kv)])
        self.q_proj = nn.Linear(E, E)
        self.k_proj = nn.Linear(E, n_kv * hd)
        self.v_proj = nn.Linear(E, n_kv * hd)
        self.out_proj = nn.Linear(E, E)
        with torch.no_grad():
            self.q_proj.weight.copy_(W[:E]), self.q_proj.bias.copy_(b[:E])
            self.k_proj.weight.copy_(W[E:2 * E][rows]), self.k_proj.bias.copy_(b[E:2 * E][rows])
            self.v_proj.weight.copy_(W[2 * E:][rows]), self.v_proj.bias.copy_(b[2 * E:][rows])
            self.out_proj.weight.copy_(mha.out_proj.weight), self.out_proj.bias.copy_(mha.out_proj.bias)

    def forward(self, x, _k, _v, attn_mask, need_weights=False, average_attn_weights=False):
        B, T_, E = x.shape
        H, hd = self.num_heads, E // self.num_heads
        q = self.q_proj(x).view(B, T_, H, hd).transpose(1, 2)                     # (B, H, T, hd)
        k = self.k_proj(x).view(B, T_, self.n_kv, hd).transpose(1, 2)             # (B, n_kv, T, hd)
        v = self.v_proj(x).view(B, T_, self.n_kv, hd).transpose(1, 2)
        k = k.repeat_interleave(H // self.n_kv, dim=1)                            # (B, H, T, hd)
        v = v.repeat_interleave(H // self.n_kv, dim=1)
        scores = (q @ k.transpose(-2, -1)) / hd ** 0.5
        maps = torch.softmax(scores.masked_fill(attn_mask, float("-inf")), dim=-1)   # (B, H, T, T)
        out = (maps @ v).transpose(1, 2).reshape(B, T_, E)
        return self.out_proj(out), (maps if need_weights else None)


class Model(nn.Module):
    def __init__(self, n_heads, tok, pos, n_kv=None):
        super().__init__()
        self.register_buffer("tok", tok)   # (n_words, D_MODEL), frozen
        self.register_buffer("pos", pos)   # (T, D_MODEL), frozen
        self.attn = nn.MultiheadAttention(D_MODEL, n_heads, batch_first=True)
        self.readout = nn.ModuleList(nn.Linear(D_MODEL, tok.shape[0]) for _ in READOUTS)
        if n_kv is not None and n_kv != n_heads:   # the same start, then its K/V heads shared
            self.attn = SharedKV(self.attn, n_kv)   # (after the readouts: their start is the same too)

    def forward(self, ids, need_weights=False):
        """(2, B, T, n_words) logits, one set per readout; x (B, T, D_MODEL);
        the maps (B, n_heads, T, T) when need_weights."""
        x = self.tok[ids] + self.pos[:ids.shape[1]]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = not allowed
        out, maps = self.attn(x, x, x, attn_mask=mask, need_weights=need_weights,
                              average_attn_weights=False)
        return torch.stack([r(out) for r in self.readout]), x, maps


def losses(model, ids):
    """(2) the mean cross-entropy of each readout over positions 1..T-1 (at
    position 0 there is no previous word), in nats."""
    logits, _, _ = model(ids)
    want = targets(ids)
    return torch.stack([nn.functional.cross_entropy(logits[r, :, 1:].reshape(-1, logits.shape[-1]),
                                                    want[r, :, 1:].reshape(-1))
                        for r in range(len(READOUTS))])


def embeddings(seed, n_words):
    """The seed's fixed token and position embeddings, shared by both models."""
    g = torch.Generator().manual_seed(1000 + seed)
    return torch.randn(n_words, D_MODEL, generator=g), torch.randn(T, D_MODEL, generator=g)


def train(seed, n_heads, n_words, held_out, n_kv=None):
    """Train one model on the first n_words words (n_kv: its K/V heads, when
    fewer than its heads); returns it and its held-out loss per readout."""
    tok, pos = embeddings(seed, n_words)
    torch.manual_seed(seed)   # re-seeded for every model: the same start whatever was trained before
    model = Model(n_heads, tok, pos, n_kv)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    data = torch.Generator().manual_seed(100 + seed)   # the same batches for both models
    for step in range(1, STEPS + 1):
        ids = torch.randint(0, n_words, (BATCH, T), generator=data)
        loss = losses(model, ids).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        return model, losses(model, held_out)


def shares(model, ids):
    """Each head's mean weight on the previous word and on the first word,
    over the rows t >= 2 (where the two are different keys)."""
    with torch.no_grad():
        _, _, maps = model(ids, need_weights=True)           # (B, H, T, T)
    rows = torch.arange(2, T)
    return torch.stack([maps[:, :, rows, rows - 1], maps[:, :, rows, 0]]).mean(dim=(1, 3))   # (2, H)


def save(out_dir, name, a):
    path = os.path.join("npy", "rival_" + name + ".npy")
    np.save(os.path.join(out_dir, path), np.ascontiguousarray(a, dtype=np.float32))
    return path


def layer_weights(out_dir, attn, prefix):
    """attn's weights as mhaviz input keys (W@x), saved under prefix."""
    E = attn.embed_dim
    W = attn.in_proj_weight.detach().numpy()   # (3E, E): W_q, W_k, W_v stacked
    b = attn.in_proj_bias.detach().numpy()     # (3E)
    return {"W_q": save(out_dir, prefix + "W_q", W[:E]), "W_k": save(out_dir, prefix + "W_k", W[E:2 * E]),
            "W_v": save(out_dir, prefix + "W_v", W[2 * E:]),
            "W_o": save(out_dir, prefix + "W_o", attn.out_proj.weight.detach().numpy()),
            "b_q": save(out_dir, prefix + "b_q", b[:E]), "b_k": save(out_dir, prefix + "b_k", b[E:2 * E]),
            "b_v": save(out_dir, prefix + "b_v", b[2 * E:]),
            "b_o": save(out_dir, prefix + "b_o", attn.out_proj.bias.detach().numpy())}


def shared_kv_weights(out_dir, attn, prefix):
    """A SharedKV layer's weights as mhaviz input keys (W@x), saved under prefix."""
    named = {"W_q": attn.q_proj.weight, "W_k": attn.k_proj.weight, "W_v": attn.v_proj.weight,
             "W_o": attn.out_proj.weight, "b_q": attn.q_proj.bias, "b_k": attn.k_proj.bias,
             "b_v": attn.v_proj.bias, "b_o": attn.out_proj.bias}
    return {key: save(out_dir, prefix + key, a.detach().numpy()) for key, a in named.items()}


def loss_table(loss, r, own_kv):
    """One "held_out_loss" object: readout r's losses (r None: their mean) of
    every model at every seed, this layer's own (N_HEADS, own_kv) under "heads"."""
    def each(kind):
        return [round(float(np.mean(v)) if r is None else v[r], 4) for v in loss[kind]]
    return {"heads": each((N_HEADS, own_kv)), "single_head": each((1, 1)),
            "by_kv_heads": {str(n_kv): each((N_HEADS, n_kv)) for n_kv in (N_HEADS,) + SHARED_KV}}


def training_record(loss, own_kv):
    """The "training" record every rival file carries: the mean of the two
    readouts' losses, and each readout's, of every model at every seed."""
    return {"seeds": list(SEEDS), "seed": SHIPPED, "steps": STEPS,
            "held_out_loss": loss_table(loss, None, own_kv),
            "by_readout": {name: loss_table(loss, r, own_kv) for r, name in enumerate(READOUTS)}}


def export_shared(out_dir, model, n_kv, single_paths, x_path, loss):
    """rival_gqa2.json / rival_mqa.json: the shipped seed's layer trained with
    n_kv K/V heads, the same x and one head as rival.json."""
    name = "gqa%d" % n_kv if n_kv > 1 else "mqa"
    kind = f"GQA-{n_kv}" if n_kv > 1 else "MQA"
    ids = torch.tensor([[WORDS.index(w) for w in SAMPLE.split()]])
    with torch.no_grad():
        _, _, maps = model(ids, need_weights=True)
    save(out_dir, name + "_att", maps[0].reshape(-1, T).numpy())   # (n_heads * T, T)
    record = training_record(loss, n_kv)
    layer = {
        "comment": (f"Lesson {2 if n_kv > 1 else 3} by training (samples/train_rival.py, seed {SHIPPED}): the "
                    f"rival task's layer trained as {kind}, its {N_HEADS} query heads sharing {n_kv} K/V "
                    f"head{'s' if n_kv > 1 else ''}, from the same start (the {N_HEADS}-head model's initial "
                    "weights, each shared K/V head the first head of its group), on the same batches for "
                    f"the same {STEPS} steps as rival.json's layer; single_head: the one head trained on its own."),
        "title": f"trained here as {kind}: {N_HEADS} query heads sharing {n_kv} K/V head{'s' if n_kv > 1 else ''}",
        "tokens": SAMPLE.split(), "d_model": D_MODEL, "n_heads": N_HEADS, "n_kv_heads": n_kv, "causal": True,
        "weight_layout": "W@x", "x": x_path,
        **shared_kv_weights(out_dir, model.attn, name + "_"),
        "single_head": single_paths,
        "training": record,
    }
    with open(os.path.join(out_dir, f"rival_{name}.json"), "w") as f:
        json.dump(layer, f, indent=1, ensure_ascii=False)
        f.write("\n")


def export(out_dir, heads, single, loss):
    """rival.json: the shipped seed's two layers on SAMPLE, and every seed's losses."""
    words = SAMPLE.split()
    ids = torch.tensor([[WORDS.index(w) for w in words]])
    with torch.no_grad():
        _, x, maps = heads(ids, need_weights=True)
        _, x1, maps1 = single(ids, need_weights=True)
    assert torch.equal(x, x1)   # both layers read the same x
    save(out_dir, "att", maps[0].reshape(-1, T).numpy())         # (n_heads * T, T)
    save(out_dir, "single_att", maps1[0, 0].numpy())              # (T, T)
    layer = {
        "comment": (f"The fair experiment (samples/train_rival.py, seed {SHIPPED}): one causal attention "
                    f"layer (d_model {D_MODEL}) trained for {STEPS} steps to name, at every position, the "
                    f"previous word and the first word of {T} words drawn from "
                    f"{len(WORDS)}; trained twice from the same weights on the same batches, once as "
                    f"{N_HEADS} heads (the layer) and once as one head (single_head). x: fixed random "
                    "token + position embeddings, frozen, the same for both. Weights: "
                    "nn.MultiheadAttention's in_proj and out_proj as PyTorch stores them (W@x)."),
        "title": f"trained here: {N_HEADS} heads, and one head trained on its own for the same task",
        "tokens": words, "d_model": D_MODEL, "n_heads": N_HEADS, "causal": True,
        "weight_layout": "W@x",
        "x": save(out_dir, "x", x[0].numpy()),    # (T, D_MODEL)
        **layer_weights(out_dir, heads.attn, ""),
        "single_head": layer_weights(out_dir, single.attn, "single_"),
        "training": training_record(loss, N_HEADS),
    }
    with open(os.path.join(out_dir, "rival.json"), "w") as f:
        json.dump(layer, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return layer["single_head"], layer["x"]


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--words" and args[1].isdigit() and 2 <= int(args[1]) <= len(WORDS):
        out_dir, n_words = None, int(args[1])
    elif len(args) == 1 and not args[0].startswith("-"):
        out_dir, n_words = args[0], len(WORDS)
    else:
        sys.exit("usage: train_rival.py OUT_DIR\n"
                 f"       train_rival.py --words N   (a trial on the first N of the {len(WORDS)} words: "
                 "prints the losses, writes nothing)")
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    held_out = torch.randint(0, n_words, (HELD_OUT, T), generator=torch.Generator().manual_seed(7))
    # The models, as (heads, K/V heads): the 4 heads, the one head, then GQA-2 and MQA.
    kinds = [(N_HEADS, N_HEADS), (1, 1)] + [(N_HEADS, n_kv) for n_kv in SHARED_KV]
    loss = {kind: [] for kind in kinds}   # held-out loss per readout at each seed, by kind
    shipped = {}                          # the shipped seed's models, by kind
    print(f"{n_words} words; each head's mean weight on the previous word and on the first word "
          f"(rows 2..{T - 1}, held out)")
    start = time.time()
    for seed in SEEDS:
        for n_heads, n_kv in kinds:
            model, each = train(seed, n_heads, n_words, held_out, n_kv)
            loss[(n_heads, n_kv)].append(each.tolist())   # one loss per readout
            share = shares(model, held_out)
            kv = f" sharing {n_kv} K/V head{'s' if n_kv > 1 else ''}" if n_kv != n_heads else ""
            print(f"seed {seed}, {n_heads} head{'s' if n_heads > 1 else ''}{kv}: held-out loss "
                  f"{each.mean().item():.4f} nats (" +
                  ", ".join(f"{r} {v:.3f}" for r, v in zip(READOUTS, each.tolist())) + ")   " +
                  "; ".join(f"head {h}: " + " ".join(f"{share[r, h]:.2f}" for r in range(len(READOUTS)))
                            for h in range(n_heads)) +
                  f"   {time.time() - start:4.0f} s", flush=True)
            if seed == SHIPPED:
                shipped[(n_heads, n_kv)] = model
    if out_dir:
        os.makedirs(os.path.join(out_dir, "npy"), exist_ok=True)
        single_paths, x_path = export(out_dir, shipped[(N_HEADS, N_HEADS)], shipped[(1, 1)], loss)
        for n_kv in SHARED_KV:
            export_shared(out_dir, shipped[(N_HEADS, n_kv)], n_kv, single_paths, x_path, loss)


if __name__ == "__main__":
    main()
