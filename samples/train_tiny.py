"""train_tiny.py: train a tiny attention-only transformer here, export its two
attention layers as mhaviz inputs (run by `make samples`).

    python3 samples/train_tiny.py OUT_DIR

The model: token + position embeddings (d_model 64), two causal attention
layers of 4 heads (torch.nn.MultiheadAttention, each adding its output to the
residual stream), no MLPs, no layer norm before attention, a final layer norm
and an unembedding. It learns to predict the next word of short stories in
the lesson's style, in which people come back: "Mary gave the book to John
because John had helped Mary". In each story every person keeps one giving verb
and object and one helping verb ("had helped"), and in half the stories a
surname ("Mary Lee gave the book ... Mary Lee gave the book"); a quarter of
the training sequences instead repeat one run of 6 to 24 words drawn from the
same vocabulary, over and over. So the words after a word that came before
can be copied from its earlier mention: that is what an induction circuit (a
previous-token head in layer 1, a head in layer 2 that finds the token after
the earlier copy) does. docs/trained.md says what the heads became.

Written to OUT_DIR: for the lesson-1 sentence and a longer story,
<text>_layer1.json and <text>_layer2.json (mhaviz inputs, weights in .npy
files under OUT_DIR/npy/ shared by both texts), for the story also both
layers in one file, story.json (its "layers": mhaviz shows them side by
side, counted from 0), and npy/<text>_layer{1,2}_att.npy,
the attention maps PyTorch itself computed, (n_heads * T, T), head after head,
row = query, for the tests. Layer 2's x is the residual stream entering layer
2 (the embeddings plus layer 1's output); there is no layer norm before either
layer, so x is exactly what each attention layer receives.

Deterministic: seeded corpus and model, one thread, deterministic algorithms.
"""
import json
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn

SEED = 15
D_MODEL, N_HEADS, N_LAYERS = 64, 4, 2
CONTEXT = 48            # tokens per training sequence
BATCH, STEPS, LR = 32, 4000, 6e-3
WEIGHT_DECAY = 0.001
REPEATS = 0.25          # share of sequences that repeat one run of words

LESSON = "Mary gave the book to John because John had helped Mary"
PASSAGE = ("Anna Lee sent the letter to Tom Park because Tom Park had called Anna Lee . "
           "Tom Park showed the map to Anna Lee . Anna Lee sent the letter to Mary Fox")

NAMES = ("Mary John Anna Tom Lucy Paul Emma Jack Sara Mark Kate Sam Lily Ben Rose Dan "
         "Alice Peter Nina Leo Clara Hugo Ida Max").split()
SURNAMES = "Lee Park Smith Brown Green Hall King Ward Stone Hill Moore Reed Shaw Fox Cole Lane".split()
GIVING = "gave sent showed lent handed sold brought passed threw offered".split()
OBJECTS = "book letter pen cake ball key map coat cup hat box lamp".split()
HELPING = "helped called thanked visited met warned praised trusted".split()
LINKS = "because after when".split()


def story(rng):
    """One story of 2 to 4 sentences about 3 or 4 people. Each person keeps
    one giving verb, one object and one helping verb for the whole story
    ("because John had helped Mary ... because John had helped"), and in half the
    stories a surname too ("Mary Lee gave the book ... Mary Lee gave the
    book"): the words after a name that came before are then best found at
    its earlier mention."""
    people = rng.sample(NAMES, rng.choice((3, 4)))
    gives = {p: [rng.choice(GIVING), "the", rng.choice(OBJECTS)] for p in people}
    helps = {p: ["had", rng.choice(HELPING)] for p in people}
    full = rng.random() < 0.5
    name = {p: [p, rng.choice(SURNAMES)] if full else [p] for p in people}
    words = []
    for s in range(rng.randint(2, 4)):
        a, b = rng.sample(people, 2)
        words += name[a] + gives[a] + ["to"] + name[b]
        if rng.random() < 0.7:
            c = rng.choice([p for p in people if p != b])
            words += [rng.choice(LINKS)] + name[b] + helps[b] + name[c]
        words.append(".")
    return words


def vocabulary():
    words = NAMES + SURNAMES + GIVING + OBJECTS + HELPING + LINKS + ["the", "to", "had", "."]
    return {w: i for i, w in enumerate(words)}


def batch(rng, vocab):
    """BATCH sequences of CONTEXT + 1 token ids: stories, each sequence
    starting one, or (a share REPEATS of them) one run of random words of
    the vocabulary repeated, the classic setting in which induction heads
    grow: from the run's second time on, every next word is a copy."""
    rows = []
    every = list(vocab)
    for _ in range(BATCH):
        words = []
        if rng.random() < REPEATS:
            run = rng.choices(every, k=rng.randint(6, CONTEXT // 2))
            while len(words) < CONTEXT + 1:
                words += run
        else:
            while len(words) < CONTEXT + 1:
                words += story(rng)
        rows.append([vocab[w] for w in words[:CONTEXT + 1]])
    return torch.tensor(rows)


class AttnOnly(nn.Module):
    def __init__(self, n_vocab):
        super().__init__()
        self.tok = nn.Embedding(n_vocab, D_MODEL)
        self.pos = nn.Embedding(CONTEXT, D_MODEL)
        self.attn = nn.ModuleList(nn.MultiheadAttention(D_MODEL, N_HEADS, batch_first=True)
                                  for _ in range(N_LAYERS))
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.unembed = nn.Linear(D_MODEL, n_vocab)

    def forward(self, ids, keep=None):
        """Logits (B, T, n_vocab). When keep is a list, it receives for each
        layer (x entering it (B, T, E), its maps (B, n_heads, T, T))."""
        T = ids.shape[1]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = not allowed
        x = self.tok(ids) + self.pos(torch.arange(T))
        for attn in self.attn:
            out, maps = attn(x, x, x, attn_mask=mask, need_weights=keep is not None,
                             average_attn_weights=False)
            if keep is not None:
                keep.append((x, maps))
            x = x + out
        return self.unembed(self.ln_f(x))


def seen_before(ids):
    """(B, T) True where the token at t also stands somewhere before t: the
    next word may then be copied from what followed the earlier mention."""
    same = ids[:, :, None] == ids[:, None, :]                       # (B, T, T)
    return torch.tril(same, diagonal=-1).any(dim=2)


def train(model, vocab):
    rng = random.Random(SEED)
    held_out = batch(random.Random(SEED + 1), vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=LR, total_steps=STEPS, pct_start=0.1)
    start = time.time()
    avg = None
    for step in range(1, STEPS + 1):
        ids = batch(rng, vocab)
        logits = model(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        avg = loss.item() if avg is None else 0.95 * avg + 0.05 * loss.item()
        if step % 250 == 0 or step == 1:
            # held-out loss after a word seen before (copying helps) and elsewhere
            with torch.no_grad():
                logits = model(held_out[:, :-1])
                each = nn.functional.cross_entropy(logits.transpose(1, 2), held_out[:, 1:],
                                                   reduction="none")      # (B, T)
                seen = seen_before(held_out[:, :-1])
            print(f"step {step:5d}  loss {avg:.3f}   held out: after a word seen before "
                  f"{each[seen].mean().item():.3f}, elsewhere {each[~seen].mean().item():.3f}   "
                  f"{time.time() - start:4.0f} s", flush=True)
    return avg, time.time() - start


def save(out_dir, name, a):
    path = os.path.join("npy", name + ".npy")
    np.save(os.path.join(out_dir, path), np.ascontiguousarray(a, dtype=np.float32))
    return path


ORDINAL = ("first", "second")


def write_json(out_dir, file, obj):
    with open(os.path.join(out_dir, file), "w") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def whole_model(layers):
    """The layer inputs of one text (each a <text>_layer<L>.json object) as
    one mhaviz input of "layers", the tokens given once."""
    comment = layers[0]["comment"].split(". Weights:")[0].replace("Layer 1 of 2 of a", "Both layers of a")
    return {
        "comment": comment + ". Each layer's comment says how its weights and x were made. mhaviz counts "
                   "layers from 0: layers[0] is the model's first layer.",
        "title": "trained here: a tiny 2-layer model, not designed",
        "tokens": layers[0]["tokens"],
        "layers": [dict({k: v for k, v in layer.items() if k != "tokens"},
                        title=f"trained here: the {ORDINAL[i]} layer of a tiny 2-layer model, not designed")
                   for i, layer in enumerate(layers)],
    }


def export(model, vocab, out_dir, text, name, loss, whole=False):
    """Write text's layer inputs; whole: also both in one file, <name>.json."""
    tokens = text.split()
    keep = []
    layers = []
    with torch.no_grad():
        model(torch.tensor([[vocab[w] for w in tokens]]), keep)
    for layer, (attn, (x, maps)) in enumerate(zip(model.attn, keep), start=1):
        p = f"layer{layer}"
        E = attn.embed_dim
        W = attn.in_proj_weight.detach().numpy()   # (3E, E): W_q, W_k, W_v stacked
        b = attn.in_proj_bias.detach().numpy()     # (3E)
        what = ("the token and position embeddings" if layer == 1 else
                "the residual stream entering layer 2: embeddings + layer 1's output")
        comment = (f"Layer {layer} of 2 of a tiny attention-only transformer (d_model {E}, "
                   f"{attn.num_heads} heads a layer, no MLPs, no layer norm before attention) "
                   f"trained by samples/train_tiny.py for {STEPS} steps "
                   f"(seed {SEED}, final loss {loss:.3f}) to predict the next word of generated "
                   f"stories in which names come back and of runs of words said twice or more. Weights: its nn.MultiheadAttention's "
                   f"in_proj and out_proj as PyTorch stores them (W@x). x: {what}.")
        layer_json = {
            "comment": comment,
            "title": f"trained here: layer {layer} of a tiny 2-layer model, not designed",
            "tokens": tokens, "d_model": E, "n_heads": attn.num_heads, "causal": True,
            "weight_layout": "W@x",
            "x": save(out_dir, f"{name}_{p}_x", x[0].numpy()),   # (T, E)
            "W_q": save(out_dir, f"{p}_W_q", W[:E]), "W_k": save(out_dir, f"{p}_W_k", W[E:2 * E]),
            "W_v": save(out_dir, f"{p}_W_v", W[2 * E:]),
            "W_o": save(out_dir, f"{p}_W_o", attn.out_proj.weight.detach().numpy()),
            "b_q": save(out_dir, f"{p}_b_q", b[:E]), "b_k": save(out_dir, f"{p}_b_k", b[E:2 * E]),
            "b_v": save(out_dir, f"{p}_b_v", b[2 * E:]),
            "b_o": save(out_dir, f"{p}_b_o", attn.out_proj.bias.detach().numpy()),
        }
        # PyTorch's own maps, (n_heads, T, T) -> (n_heads * T, T)
        save(out_dir, f"{name}_{p}_att", maps[0].reshape(-1, len(tokens)).numpy())
        write_json(out_dir, f"{name}_{p}.json", layer_json)
        layers.append(layer_json)
    if whole:
        write_json(out_dir, f"{name}.json", whole_model(layers))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: train_tiny.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(os.path.join(out_dir, "npy"), exist_ok=True)
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    vocab = vocabulary()
    for w in (LESSON + " " + PASSAGE).split():
        assert w in vocab, w
    model = AttnOnly(len(vocab))
    loss, seconds = train(model, vocab)
    print(f"final loss {loss:.3f} after {STEPS} steps, {seconds:.0f} s")
    model.eval()
    export(model, vocab, out_dir, LESSON, "lesson1", loss)
    export(model, vocab, out_dir, PASSAGE, "story", loss, whole=True)


if __name__ == "__main__":
    main()
