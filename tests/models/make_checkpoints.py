#!/usr/bin/env python3
"""make_checkpoints.py — tiny checkpoints in Hugging Face's layouts, and their reference.

Usage: make_checkpoints.py OUT_DIR

Writes one folder per case, OUT_DIR/<case>/, as a model folder a teacher
downloads would hold it, plus the numbers a correct reader must find in it:

  config.json             transformers' field names (model_type, torch_dtype, ...)
  model.safetensors       or shards model-0000N-of-0000M.safetensors with
                          model.safetensors.index.json ({"metadata": {"total_size"},
                          "weight_map": {tensor name: shard file}})
  case.json               {"ids": [token ids], "n_layers": L, "model_type": "...",
                           "dtype": "F32|F16|BF16", "n_heads", "n_kv_heads",
                           "head_dim", "d_model", "vocab_size", "tied", "ablate_set"}
  ref/attn_LL.npy         float64 (n_heads, T, T) softmax attention weights of
                          layer LL (two digits), row = query; masked cells exactly 0
  ref/x_LL.npy            float64 (T, d_model) layer LL's attention input after its
                          first norm (ln_1 / input_layernorm): what mhaviz calls x
  ref/ablate.npy          float64 (n_layers, n_heads) the log-probability of
                          logprobs.npy's top token with that one head's output
                          zeroed before c_proj / o_proj
  ref/ablate_set.npy      float64 (vocab) logprobs.npy with the heads case.json's
                          "ablate_set" lists ([[layer, head], ...]) zeroed at once
  ref/logprobs.npy        float64 (vocab) log-softmax of the last position's logits
                          (final norm, then the unembedding: tied or lm_head)

The safetensors files are written here byte by byte, as the format is specified:
an 8-byte little-endian header length N, N bytes of JSON header
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
{"format": "pt"}} padded with spaces to a multiple of 8, then the tensors'
raw little-endian bytes, row-major, offsets counted from the end of the header.
Tensor names and layouts are those transformers saves:
  gpt2   [transformer.]wte.weight (vocab, d)  wpe.weight (n_positions, d)
         h.N.ln_1.{weight,bias} (d)  h.N.attn.c_attn.weight (d, 3d) Conv1D, stored
         input x output, columns q | k | v  h.N.attn.c_attn.bias (3d)
         h.N.attn.c_proj.weight (d, d)  h.N.ln_2.*  h.N.mlp.c_fc.weight (d, inner)
         h.N.mlp.c_proj.weight (inner, d) (+ biases)  ln_f.{weight,bias};
         lm_head tied to wte (never saved); h.N.attn.bias, the (1, 1, n_positions,
         n_positions) causal-mask buffer old checkpoints carry, and a 0-d
         h.N.attn.masked_bias: extra tensors a reader must ignore
  llama, mistral, qwen2   model.embed_tokens.weight (vocab, d)
         model.layers.N.input_layernorm.weight (d)
         model.layers.N.self_attn.{q,k,v,o}_proj.weight nn.Linear, stored output x
         input: q (n_heads*head_dim, d), k and v (n_kv_heads*head_dim, d),
         o (d, n_heads*head_dim); qwen2 adds q/k/v_proj.bias
         model.layers.N.post_attention_layernorm.weight (d)
         model.layers.N.mlp.{gate,up}_proj.weight (inter, d), down_proj (d, inter)
         model.norm.weight (d); lm_head.weight (vocab, d) unless tie_word_embeddings
         (case llama_no_prefix: the names without "model.", as LlamaModel saves them)

The cases (name: family, dtype, layout, what it tests):
  gpt2_f32              F32, one file, no prefix, the attn.bias buffers
  gpt2_sharded_prefix   F16, 3 shards (a layer split across two), transformer.
                        prefix, masked_bias, n_inner given
  llama_f16_gqa_tied    F16, 4 heads over 2 K/V heads, tie_word_embeddings
  llama_bf16_rope_llama3 BF16, rope_scaling llama3 with original_max_position_embeddings
                        64, so that head_dim 16's frequencies fall in all three of
                        its bands (kept, smoothed, divided by factor) and the
                        scaling moves the maps within 12 positions; head_dim
                        given, lm_head, 2 shards
  llama_no_prefix       F32, names without "model.", tied, MQA (1 K/V head)
  mistral_f32           F32, GQA, sliding_window (longer than the text), lm_head
  qwen2_bias_gqa        BF16, q/k/v biases, GQA, tied, rope_theta 1e6
  gpt2_vocab            F32, vocab 50257 and n_positions 1024 (GPT-2's), d_model 16
  llama2_vocab          F16, vocab 32000 (Llama 2's), BOS 1 first, untied
  llama3_vocab          BF16, vocab 128256 (Llama 3's), BOS 128000 first, tied,
                        Llama 3.2's rope_scaling (factor 32, original 8192)
Weights are random (torch.Generator, fixed seed per case), drawn in float32 and
rounded to the stored dtype; q/k weights are scaled so that scores spread over a
few units (maps far from uniform). The reference reads the tensors back from the
written files and computes in float64 from exactly the stored values (F16/BF16
upcast exactly), following transformers' modeling code (the functions are
named at each step below). It shares no code with src/.

Self-checks (the script exits 1 when one fails): every map's rows sum to 1 and
its masked cells are 0; every layer's maps and attention outputs recomputed a
second way, with scalar loops per head, query and key (rotary positions as
explicit 2x2 rotations of the pairs (i, i + head_dim/2), frequencies by Meta's
scalar llama3 rule, K/V head g = h / (n_heads / n_kv_heads), the output as the sum
over heads of each head's weighted values through its rows of W_o), within 1e-10;
maps sharp enough to test something; and each feature a case exists for changes
the maps by over twice the C tests' 1e-4 when left out (no rotation, rotation of
adjacent pairs, llama3 scaling ignored, K/V heads interleaved, biases dropped,
gelu for gelu_new), and the log-probabilities when the embedding unembeds where
lm_head is given. The *_vocab cases skip that last check: they exist for their
vocabularies' sizes, and Llama 3.2's own rope_scaling barely moves 8 positions.
"""
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
TORCH_DTYPE_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}
BYTES = {"F32": 4, "F16": 2, "BF16": 2}

# The attention maps' tolerance in the C tests: every feature a case tests must
# move some map by more than twice this when it is left out (gelu_new against
# gelu moves them least: the two differ by 5e-4 at most).
C_TOLERANCE = 1e-4

LLAMA32_ROPE = {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                "original_max_position_embeddings": 8192, "rope_type": "llama3"}

CASES = [
    dict(name="gpt2_f32", family="gpt2", dtype="F32", seed=11, T=10, d=32, heads=4,
         layers=3, vocab=300, n_positions=64, shards=1, prefix="", mask_buffers=True),
    dict(name="gpt2_sharded_prefix", family="gpt2", dtype="F16", seed=12, T=9, d=48,
         heads=6, layers=2, vocab=260, n_positions=32, n_inner=96, shards=3,
         prefix="transformer.", masked_bias=True),
    dict(name="llama_f16_gqa_tied", family="llama", dtype="F16", seed=13, T=9, d=32,
         heads=4, kv_heads=2, layers=2, inter=64, vocab=256, tied=True, shards=1,
         rope_theta=10000.0),
    dict(name="llama_bf16_rope_llama3", family="llama", dtype="BF16", seed=14, T=12,
         d=64, heads=4, kv_heads=2, layers=3, inter=96, vocab=320, tied=False, shards=2,
         rope_theta=500000.0, head_dim_in_config=True, max_positions=512,
         rope_scaling={"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                       "original_max_position_embeddings": 64, "rope_type": "llama3"}),
    dict(name="llama_no_prefix", family="llama", dtype="F32", seed=15, T=7, d=32,
         heads=4, kv_heads=1, layers=2, inter=48, vocab=200, tied=True, shards=1,
         rope_theta=10000.0, prefix=""),
    dict(name="mistral_f32", family="mistral", dtype="F32", seed=16, T=8, d=48,
         heads=6, kv_heads=2, layers=2, inter=80, vocab=280, tied=False, shards=1,
         rope_theta=10000.0, sliding_window=4096),
    dict(name="qwen2_bias_gqa", family="qwen2", dtype="BF16", seed=17, T=10, d=48,
         heads=6, kv_heads=2, layers=2, inter=64, vocab=300, tied=True, shards=1,
         rope_theta=1000000.0),
    dict(name="gpt2_vocab", family="gpt2", dtype="F32", seed=18, T=8, d=16, heads=2,
         layers=2, vocab=50257, n_positions=1024, shards=1, prefix=""),
    dict(name="llama2_vocab", family="llama", dtype="F16", seed=19, T=8, d=16, heads=2,
         kv_heads=2, layers=2, inter=32, vocab=32000, tied=False, shards=1,
         rope_theta=10000.0, bos=1, max_positions=4096),
    dict(name="llama3_vocab", family="llama", dtype="BF16", seed=20, T=8, d=16,
         heads=2, kv_heads=1, layers=2, inter=32, vocab=128256, tied=True, shards=1,
         rope_theta=500000.0, bos=128000, head_dim_in_config=True,
         max_positions=131072, rope_scaling=LLAMA32_ROPE),
]


class CheckFailed(Exception):
    pass


def check(ok, what):
    if not ok:
        raise CheckFailed(what)


# ---------------------------------------------------------------- weights

# A checkpoint's tensors as a spec: [(name, shape, init)], init being a std (normal
# values, a number or a tensor broadcast over the last axis), ("one_plus", std) for
# a norm's weight (1 + normal), or a tensor of fixed values. bench/make_bench_models.py
# writes the real models' shapes from the same specs.

def gpt2_spec(c):
    """GPT2LMHeadModel's tensors (modeling_gpt2.py), names without the prefix."""
    d, V, L, P = c["d"], c["vocab"], c["layers"], c["n_positions"]
    inner = c.get("n_inner") or 4 * d
    qk = 1.5 / math.sqrt(d)   # q, k entries ~1.5 after ln_1: scores of a few units
    one = 1.0 / math.sqrt(d)
    spec = [("wte.weight", (V, d), 1.0), ("wpe.weight", (P, d), 0.5)]
    for i in range(L):
        p = f"h.{i}."
        spec += [
            (p + "ln_1.weight", (d,), ("one_plus", 0.1)), (p + "ln_1.bias", (d,), 0.1),
            # Conv1D(3d, d): weight (in, out) = (d, 3d), columns q | k | v.
            (p + "attn.c_attn.weight", (d, 3 * d), torch.tensor([qk] * (2 * d) + [one] * d)),
            (p + "attn.c_attn.bias", (3 * d,), 0.2),
            (p + "attn.c_proj.weight", (d, d), one), (p + "attn.c_proj.bias", (d,), 0.1),
            (p + "ln_2.weight", (d,), ("one_plus", 0.1)), (p + "ln_2.bias", (d,), 0.1),
            # MLP entries of order 2, where gelu_new and gelu differ most (5e-4).
            (p + "mlp.c_fc.weight", (d, inner), 2.0 / math.sqrt(d)), (p + "mlp.c_fc.bias", (inner,), 0.1),
            (p + "mlp.c_proj.weight", (inner, d), 3.0 / math.sqrt(inner)),
            (p + "mlp.c_proj.bias", (d,), 0.1)]
        if c.get("mask_buffers"):
            # GPT2Attention's registered causal-mask buffer, saved by older transformers.
            spec.append((p + "attn.bias", (1, 1, P, P), torch.tril(torch.ones(P, P)).view(1, 1, P, P)))
        if c.get("masked_bias"):
            spec.append((p + "attn.masked_bias", (), torch.tensor(-1e4)))
    spec += [("ln_f.weight", (d,), ("one_plus", 0.1)), ("ln_f.bias", (d,), 0.1)]
    return [(c.get("prefix", "") + n, shape, init) for n, shape, init in spec]


def gpt2_config(c):
    """config.json as transformers writes a GPT2Config."""
    V, P = c["vocab"], c["n_positions"]
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1, "bos_token_id": V - 1, "embd_pdrop": 0.1, "eos_token_id": V - 1,
        "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
        "n_ctx": P, "n_embd": c["d"], "n_head": c["heads"], "n_inner": c.get("n_inner"),
        "n_layer": c["layers"], "n_positions": P, "reorder_and_upcast_attn": False,
        "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True, "summary_activation": None,
        "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
        "summary_type": "cls_index", "summary_use_proj": True,
        "torch_dtype": TORCH_DTYPE_NAME[c["dtype"]], "transformers_version": "4.44.0",
        "use_cache": True, "vocab_size": V,
    }


def llama_spec(c):
    """Llama/Mistral/Qwen2ForCausalLM's tensors (modeling_llama.py, modeling_qwen2.py)."""
    d, V, L = c["d"], c["vocab"], c["layers"]
    H, KV, inter = c["heads"], c["kv_heads"], c["inter"]
    hd = c.get("head_dim") or d // H
    qk, one = 1.5 / math.sqrt(d), 1.0 / math.sqrt(d)
    spec = [("embed_tokens.weight", (V, d), 1.0)]
    for i in range(L):
        p = f"layers.{i}."
        # nn.Linear(in, out): weight (out, in).
        spec += [(p + "input_layernorm.weight", (d,), ("one_plus", 0.1)),
                 (p + "self_attn.q_proj.weight", (H * hd, d), qk),
                 (p + "self_attn.k_proj.weight", (KV * hd, d), qk),
                 (p + "self_attn.v_proj.weight", (KV * hd, d), one)]
        if c["family"] == "qwen2":   # Qwen2Attention: q/k/v_proj bias=True
            spec += [(p + "self_attn.q_proj.bias", (H * hd,), 1.0),
                     (p + "self_attn.k_proj.bias", (KV * hd,), 1.0),
                     (p + "self_attn.v_proj.bias", (KV * hd,), 0.5)]
        spec += [(p + "self_attn.o_proj.weight", (d, H * hd), one),
                 (p + "post_attention_layernorm.weight", (d,), ("one_plus", 0.1)),
                 (p + "mlp.gate_proj.weight", (inter, d), one),
                 (p + "mlp.up_proj.weight", (inter, d), one),
                 (p + "mlp.down_proj.weight", (d, inter), 1.0 / math.sqrt(inter))]
    spec.append(("norm.weight", (d,), ("one_plus", 0.1)))
    prefix = c.get("prefix", "model.")
    spec = [(prefix + n, shape, init) for n, shape, init in spec]
    if not c["tied"]:
        spec.append(("lm_head.weight", (V, d), one))
    return spec


def llama_config(c):
    """config.json as transformers writes a Llama/Mistral/Qwen2Config."""
    family, L = c["family"], c["layers"]
    arch = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
            "qwen2": "Qwen2ForCausalLM"}[family]
    config = {
        "architectures": [arch], "attention_dropout": 0.0,
        "bos_token_id": c.get("bos", 1), "eos_token_id": c.get("bos", 1) + 1,
        "hidden_act": "silu", "hidden_size": c["d"], "initializer_range": 0.02,
        "intermediate_size": c["inter"], "max_position_embeddings": c.get("max_positions", 2048),
        "model_type": family, "num_attention_heads": c["heads"], "num_hidden_layers": L,
        "num_key_value_heads": c["kv_heads"],
        "rms_norm_eps": 1e-06 if family == "qwen2" else 1e-05,
        "rope_theta": c["rope_theta"], "tie_word_embeddings": c["tied"],
        "torch_dtype": TORCH_DTYPE_NAME[c["dtype"]], "transformers_version": "4.44.0",
        "use_cache": True, "vocab_size": c["vocab"],
    }
    if family == "llama":
        config.update({"attention_bias": False, "mlp_bias": False, "pretraining_tp": 1,
                       "rope_scaling": c.get("rope_scaling")})
    if family == "mistral":
        config["sliding_window"] = c["sliding_window"]
    if family == "qwen2":
        config.update({"max_window_layers": L, "sliding_window": 131072,
                       "use_sliding_window": False, "rope_scaling": None})
    if c.get("head_dim_in_config"):
        config["head_dim"] = c.get("head_dim") or c["d"] // c["heads"]
    return config


def spec_and_config(c):
    if c["family"] == "gpt2":
        return gpt2_spec(c), gpt2_config(c)
    return llama_spec(c), llama_config(c)


def draw(gen, shape, init, dtype):
    """One tensor of a spec: drawn in float32, rounded to the stored dtype."""
    if isinstance(init, tuple):   # ("one_plus", std)
        t = 1.0 + torch.randn(shape, generator=gen) * init[1]
    elif isinstance(init, torch.Tensor) and init.shape == torch.Size(shape):
        t = init.to(torch.float32)
    else:
        t = torch.randn(shape, generator=gen) * init
    return t.to(DTYPES[dtype])


# ---------------------------------------------------------------- safetensors

def tensor_bytes(t):
    """A tensor's raw little-endian bytes, row-major."""
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()   # this machine's order: little-endian (main checks)


def safetensors_header(entries):
    """The 8-byte length and the JSON header of a file holding entries
    [(name, dtype "F32|F16|BF16", shape)] in that order, their data back to back."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dt, shape in entries:
        n = BYTES[dt] * math.prod(shape)
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h


def safetensors_bytes(tensors):
    """A whole safetensors file: the tensors sorted by name."""
    names = sorted(tensors)
    name_of = {v: k for k, v in DTYPES.items()}
    entries = [(n, name_of[tensors[n].dtype], tuple(tensors[n].shape)) for n in names]
    return safetensors_header(entries) + b"".join(tensor_bytes(tensors[n]) for n in names)


def read_safetensors(path):
    """{name: float64 tensor} from a safetensors file: the reference's input."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = bytearray(data[8 + n + b:8 + n + e])
        dt = info["dtype"]
        check(e - b == BYTES[dt] * math.prod(info["shape"]), f"{path}: {name}'s size")
        if dt == "BF16":
            t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(raw, dtype=DTYPES[dt])
        out[name] = t.reshape(info["shape"]).to(torch.float64)
    return out


def shard_plan(names, n_shards):
    """Consecutive runs of the sorted names, as save_pretrained's size-bounded shards
    are (so one layer's tensors may fall in two shards)."""
    names = sorted(names)
    per = -(-len(names) // n_shards)
    return [names[i * per:(i + 1) * per] for i in range(n_shards)]


def write_checkpoint(folder, tensors, n_shards):
    """model.safetensors, or the shards and their index. Returns the files written."""
    if n_shards == 1:
        files = {"model.safetensors": tensors}
    else:
        files = {}
        for i, names in enumerate(shard_plan(tensors, n_shards)):
            files[f"model-{i + 1:05d}-of-{n_shards:05d}.safetensors"] = {k: tensors[k] for k in names}
        index = {"metadata": {"total_size": sum(len(tensor_bytes(t)) for t in tensors.values())},
                 "weight_map": {k: f for f, part in files.items() for k in sorted(part)}}
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=2, sort_keys=True)
            f.write("\n")
    for fname, part in files.items():
        with open(os.path.join(folder, fname), "wb") as f:
            f.write(safetensors_bytes(part))
    return [os.path.join(folder, f) for f in files]


# ---------------------------------------------------------------- reference, GPT-2

def layer_norm(x, w, b, eps):
    """nn.LayerNorm (GPT2Block.ln_1/ln_2, GPT2Model.ln_f): biased variance."""
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu_new(x):
    """activations.py NewGELUActivation (ACT2FN["gelu_new"]): the tanh approximation."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_exact(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def causal_softmax(scores):
    """(H, T, T) scores -> weights; masked cells (key after query) exactly 0.
    GPT2Attention._attn: torch.where(causal_mask, w, finfo.min) then softmax;
    LlamaAttention: w + causal_mask then softmax: exp underflows to 0 either way."""
    T = scores.shape[-1]
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    p = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return p.masked_fill(~allowed, 0.0)


def gpt2_forward(W, cfg, ids, ablate=None, dtype=torch.float64, last_layer=None, zero_heads=()):
    """GPT2LMHeadModel's forward in dtype (float64 for the reference). W: the stored
    tensors by name without "transformer.", converted to dtype as each is used.
    Returns per layer {x, attn, out} and the last position's log-probabilities
    (None when it stops after last_layer's attention, as bench/model_peer.py does)."""
    d, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    hd, eps, T = d // H, cfg["layer_norm_epsilon"], len(ids)
    act = gelu_exact if ablate == "gelu_exact" else gelu_new

    def w(name):
        return W[name].to(dtype)
    # GPT2Model.forward: inputs_embeds + position_embeds (position_ids = arange(T)).
    h = W["wte.weight"][ids].to(dtype) + W["wpe.weight"][:T].to(dtype)   # (T, d)
    layers = []
    for i in range(L if last_layer is None else last_layer + 1):
        p = f"h.{i}."
        # GPT2Block.forward: residual + attn(ln_1(h)).
        x = layer_norm(h, w(p + "ln_1.weight"), w(p + "ln_1.bias"), eps)   # (T, d)
        # GPT2Attention.forward: Conv1D c_attn (x @ W + b), split(split_size=d).
        qkv = x @ w(p + "attn.c_attn.weight") + w(p + "attn.c_attn.bias")  # (T, 3d)
        q, k, v = qkv.split(d, dim=1)
        # _split_heads: (T, d) -> (H, T, hd).
        q, k, v = (t.view(T, H, hd).permute(1, 0, 2) for t in (q, k, v))
        # _attn: q k^T / sqrt(head_dim) (scale_attn_weights), causal mask, softmax.
        attn = causal_softmax(q @ k.transpose(1, 2) / math.sqrt(hd))    # (H, T, T)
        # _merge_heads then c_proj (Conv1D).
        heads = (attn @ v).permute(1, 0, 2)                              # (T, H, hd)
        for li, hi in zero_heads:
            if li == i:
                heads = heads.clone()
                heads[:, hi, :] = 0           # the head's output zeroed before c_proj
        merged = heads.reshape(T, d)                                     # (T, d)
        out = merged @ w(p + "attn.c_proj.weight") + w(p + "attn.c_proj.bias")
        layers.append({"x": x, "attn": attn, "out": out})
        if i == last_layer:
            return layers, None
        h = h + out
        # GPT2MLP: c_fc, gelu_new, c_proj; residual.
        x2 = layer_norm(h, w(p + "ln_2.weight"), w(p + "ln_2.bias"), eps)
        m = act(x2 @ w(p + "mlp.c_fc.weight") + w(p + "mlp.c_fc.bias"))
        h = h + m @ w(p + "mlp.c_proj.weight") + w(p + "mlp.c_proj.bias")
    # GPT2Model.ln_f; GPT2LMHeadModel.lm_head: Linear tied to wte.
    hf = layer_norm(h, w("ln_f.weight"), w("ln_f.bias"), eps)
    logits = hf[-1] @ w("wte.weight").T
    return layers, torch.log_softmax(logits, dim=-1)


# ---------------------------------------------------------------- reference, Llama family

def rms_norm(x, w, eps):
    """LlamaRMSNorm (Qwen2RMSNorm, MistralRMSNorm): w * x / sqrt(mean(x^2) + eps)."""
    return w * (x * torch.rsqrt((x ** 2).mean(-1, keepdim=True) + eps))


def head_dim_of(cfg):
    """LlamaAttention: getattr(config, "head_dim", None) or hidden_size // num_heads."""
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def rope_inv_freq(cfg, ablate=None):
    """modeling_rope_utils.py: _compute_default_rope_parameters
    (1 / base^(arange(0, dim, 2) / dim)), then _compute_llama3_parameters when
    rope_scaling's rope_type is llama3."""
    dim = head_dim_of(cfg)
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    rs = cfg.get("rope_scaling")
    if rs is None or ablate == "no_llama3":
        return inv_freq
    check(rs.get("rope_type", rs.get("type")) == "llama3", "only llama3 rope_scaling here")
    factor = rs["factor"]
    low_freq_factor, high_freq_factor = rs["low_freq_factor"], rs["high_freq_factor"]
    old_context_len = rs["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    # wavelen < high_freq_wavelen: kept; wavelen > low_freq_wavelen: divided by factor;
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    # in between: interpolated with the smooth factor.
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama)


def rotate_half(x):
    """modeling_llama.rotate_half: (x1, x2) -> (-x2, x1) on the two halves."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_adjacent(x, cos, sin):
    """The other convention (Meta's original checkpoints, llama2.c): pairs (2i, 2i+1).
    Only for the ablation: transformers' weights are permuted for rotate_half."""
    c, s = cos[..., ::2], sin[..., ::2]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x1 * c - x2 * s
    out[..., 1::2] = x1 * s + x2 * c
    return out


def repeat_kv(x, n_rep):
    """modeling_llama.repeat_kv: (KV, T, hd) -> (KV * n_rep, T, hd), each K/V head
    repeated n_rep times in place (query head h reads K/V head h // n_rep)."""
    KV, T, hd = x.shape
    return x[:, None].expand(KV, n_rep, T, hd).reshape(KV * n_rep, T, hd)


def llama_forward(W, cfg, ids, ablate=None, dtype=torch.float64, last_layer=None, zero_heads=()):
    """LlamaForCausalLM's forward (MistralForCausalLM, Qwen2ForCausalLM: the same
    steps; Qwen2Attention's q/k/v_proj have biases), as gpt2_forward: in dtype,
    W by names without "model.", stopping after last_layer's attention if given."""
    d, H, KV, L = (cfg["hidden_size"], cfg["num_attention_heads"],
                   cfg["num_key_value_heads"], cfg["num_hidden_layers"])
    hd, eps, T = head_dim_of(cfg), cfg["rms_norm_eps"], len(ids)
    # LlamaRotaryEmbedding.forward: freqs = position x inv_freq, emb = cat(freqs, freqs).
    inv_freq = rope_inv_freq(cfg, ablate)
    if ablate == "no_rope":
        inv_freq = torch.zeros_like(inv_freq)
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)    # (T, hd/2)
    emb = torch.cat((freqs, freqs), dim=-1)                                  # (T, hd)
    cos, sin = emb.cos().to(dtype), emb.sin().to(dtype)

    def w(name):
        return W[name].to(dtype)

    def linear(x, name):
        """nn.Linear: x @ weight^T (+ bias when the checkpoint has one)."""
        y = x @ w(name + ".weight").T
        if name + ".bias" in W and ablate != "no_bias":
            y = y + w(name + ".bias")
        return y

    h = W["embed_tokens.weight"][ids].to(dtype)                             # (T, d)
    layers = []
    for i in range(L if last_layer is None else last_layer + 1):
        p = f"layers.{i}."
        # LlamaDecoderLayer.forward: residual + self_attn(input_layernorm(h)).
        x = rms_norm(h, w(p + "input_layernorm.weight"), eps)               # (T, d)
        # LlamaAttention.forward: project, view (T, heads, hd), transpose(1, 2).
        q = linear(x, p + "self_attn.q_proj").view(T, H, hd).transpose(0, 1)   # (H, T, hd)
        k = linear(x, p + "self_attn.k_proj").view(T, KV, hd).transpose(0, 1)  # (KV, T, hd)
        v = linear(x, p + "self_attn.v_proj").view(T, KV, hd).transpose(0, 1)
        # apply_rotary_pos_emb: q * cos + rotate_half(q) * sin (and k).
        if ablate == "rope_adjacent":
            q, k = rotate_adjacent(q, cos, sin), rotate_adjacent(k, cos, sin)
        else:
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        # repeat_kv: query head h reads K/V head h // (H / KV).
        if ablate == "kv_interleaved":
            k, v = k.repeat(H // KV, 1, 1), v.repeat(H // KV, 1, 1)   # head h reads h % KV
        else:
            k, v = repeat_kv(k, H // KV), repeat_kv(v, H // KV)
        # eager attention: q k^T / sqrt(head_dim), causal mask, softmax (fp32 there).
        attn = causal_softmax(q @ k.transpose(1, 2) / math.sqrt(hd))        # (H, T, T)
        heads = (attn @ v).transpose(0, 1)                                   # (T, H, hd)
        for li, hi in zero_heads:
            if li == i:
                heads = heads.clone()
                heads[:, hi, :] = 0           # the head's output zeroed before o_proj
        merged = heads.reshape(T, H * hd)                                    # (T, H*hd)
        out = linear(merged, p + "self_attn.o_proj")                         # (T, d)
        layers.append({"x": x, "attn": attn, "out": out})
        if i == last_layer:
            return layers, None
        h = h + out
        # LlamaMLP: down_proj(act_fn(gate_proj(x)) * up_proj(x)), act_fn = SiLU.
        x2 = rms_norm(h, w(p + "post_attention_layernorm.weight"), eps)
        gate = linear(x2, p + "mlp.gate_proj")
        h = h + linear(torch.nn.functional.silu(gate) * linear(x2, p + "mlp.up_proj"),
                       p + "mlp.down_proj")
    # LlamaModel.norm; LlamaForCausalLM.lm_head (tied: embed_tokens' weight).
    hf = rms_norm(h, w("norm.weight"), eps)
    if "lm_head.weight" in W and ablate != "embedding_unembeds":
        unembed = w("lm_head.weight")                                       # (vocab, d)
    else:
        unembed = w("embed_tokens.weight")
    logits = hf[-1] @ unembed.T
    return layers, torch.log_softmax(logits, dim=-1)


# ---------------------------------------------------------------- the second way

def attention_by_loops(case, cfg, W, layer, x):
    """One layer's maps (H, T, T) and attention output (T, d) from its x, with
    scalar loops: a derivation apart from the tensor code above."""
    T = len(x)
    xs = x.tolist()
    gpt2 = case["family"] == "gpt2"
    if gpt2:
        d, H = cfg["n_embd"], cfg["n_head"]
        KV, hd = H, d // H
        Wa = W[f"h.{layer}.attn.c_attn.weight"].tolist()    # (d, 3d) input x output
        ba = W[f"h.{layer}.attn.c_attn.bias"].tolist()
        Wo = W[f"h.{layer}.attn.c_proj.weight"].tolist()    # (d, d)
        bo = W[f"h.{layer}.attn.c_proj.bias"].tolist()

        def proj(t, col):   # column col of x_t @ c_attn
            return sum(xs[t][i] * Wa[i][col] for i in range(d)) + ba[col]
        q = [[[proj(t, h * hd + j) for j in range(hd)] for t in range(T)] for h in range(H)]
        k = [[[proj(t, d + g * hd + j) for j in range(hd)] for t in range(T)] for g in range(KV)]
        v = [[[proj(t, 2 * d + g * hd + j) for j in range(hd)] for t in range(T)] for g in range(KV)]
    else:
        d, H, KV = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
        hd = head_dim_of(cfg)
        p = f"layers.{layer}.self_attn."

        def rows(name, n):   # nn.Linear rows (out, in) and bias
            w = W[p + name + ".weight"].tolist()
            b = W[p + name + ".bias"].tolist() if p + name + ".bias" in W else [0.0] * n
            return w, b
        Wq, bq = rows("q_proj", H * hd)
        Wk, bk = rows("k_proj", KV * hd)
        Wv, bv = rows("v_proj", KV * hd)
        Wo = W[p + "o_proj.weight"].T.tolist()               # as (H*hd, d)
        bo = [0.0] * d

        def proj(Wm, bm, t, row):
            return sum(Wm[row][i] * xs[t][i] for i in range(d)) + bm[row]
        # Frequencies as Meta's llama3 apply_scaling writes them, one by one.
        rs = cfg.get("rope_scaling")
        freqs = []
        for j in range(hd // 2):
            f = 1.0 / cfg["rope_theta"] ** (2 * j / hd)
            if rs is not None:
                lo = rs["original_max_position_embeddings"] / rs["low_freq_factor"]
                hi = rs["original_max_position_embeddings"] / rs["high_freq_factor"]
                wl = 2 * math.pi / f
                if wl < hi:
                    pass
                elif wl > lo:
                    f = f / rs["factor"]
                else:
                    s = (rs["original_max_position_embeddings"] / wl - rs["low_freq_factor"]) / \
                        (rs["high_freq_factor"] - rs["low_freq_factor"])
                    f = (1 - s) * f / rs["factor"] + s * f
            freqs.append(f)

        def rotated(vec, t):   # pairs (j, j + hd/2) turned by angle t * freq_j
            out = list(vec)
            for j in range(hd // 2):
                a, b = vec[j], vec[j + hd // 2]
                c, s = math.cos(t * freqs[j]), math.sin(t * freqs[j])
                out[j], out[j + hd // 2] = a * c - b * s, a * s + b * c
            return out
        q = [[rotated([proj(Wq, bq, t, h * hd + j) for j in range(hd)], t) for t in range(T)]
             for h in range(H)]
        k = [[rotated([proj(Wk, bk, t, g * hd + j) for j in range(hd)], t) for t in range(T)]
             for g in range(KV)]
        v = [[[proj(Wv, bv, t, g * hd + j) for j in range(hd)] for t in range(T)] for g in range(KV)]
    attn = np.zeros((H, T, T))
    out = np.array([bo] * T, dtype=np.float64)
    for h in range(H):
        g = h // (H // KV)
        for t in range(T):
            s = [sum(q[h][t][j] * k[g][u][j] for j in range(hd)) / math.sqrt(hd)
                 for u in range(t + 1)]
            m = max(s)
            e = [math.exp(si - m) for si in s]
            z = sum(e)
            for u in range(t + 1):
                attn[h, t, u] = e[u] / z
            # Head h's weighted values, through its rows h*hd .. h*hd+hd-1 of W_o.
            for j in range(hd):
                val = sum(attn[h, t, u] * v[g][u][j] for u in range(t + 1))
                row = Wo[h * hd + j]
                for c in range(d):
                    out[t, c] += val * row[c]
    return attn, out


# ---------------------------------------------------------------- one case

# Each feature a case tests, and the change that leaves it out.
ABLATIONS = {
    "gpt2": ["gelu_exact"],
    "llama": ["no_rope", "rope_adjacent"],
}


def ablations_for(case, cfg):
    if case["name"].endswith("_vocab"):
        return []   # cases for a vocabulary's size (and Llama 3.2's own rope_scaling)
    fam = "gpt2" if case["family"] == "gpt2" else "llama"
    names = list(ABLATIONS[fam])
    if fam == "llama":
        if cfg["num_key_value_heads"] not in (1, cfg["num_attention_heads"]):
            names.append("kv_interleaved")
        if cfg.get("rope_scaling"):
            names.append("no_llama3")
        if case["family"] == "qwen2":
            names.append("no_bias")
        if not case["tied"]:
            names.append("embedding_unembeds")
    return names


def write_model(c, folder):
    """Case c's checkpoint into folder (made when missing): config.json and the
    safetensors files, the tensors drawn from c's seed. Returns the generator
    (drawn on next), the config, the tensors and the files. The browser test
    writes its 16 x 32-head model with it."""
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(folder):   # a rerun with other shards leaves no stale file
        if f.endswith(".safetensors") or f == "model.safetensors.index.json":
            os.remove(os.path.join(folder, f))
    gen = torch.Generator().manual_seed(c["seed"])
    spec, cfg = spec_and_config(c)
    tensors = {name: draw(gen, shape, init, c["dtype"]) for name, shape, init in spec}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    return gen, cfg, tensors, write_checkpoint(folder, tensors, c["shards"])


def make_case(c, root):
    t0 = time.perf_counter()
    folder = os.path.join(root, c["name"])
    os.makedirs(os.path.join(folder, "ref"), exist_ok=True)
    gen, cfg, tensors, files = write_model(c, folder)

    # Token ids: the last vocabulary row and a BOS when the family's tokenizer adds one.
    ids = torch.randint(0, c["vocab"], (c["T"],), generator=gen).tolist()
    ids[-2] = c["vocab"] - 1
    if "bos" in c:
        ids[0] = c["bos"]

    # The reference reads the files back: exactly the stored values, in float64.
    W = {}
    for path in files:
        W.update(read_safetensors(path))
    check(sorted(W) == sorted(tensors), f"{c['name']}: tensors read back")
    for name, t in tensors.items():
        check(torch.equal(W[name], t.to(torch.float64)), f"{c['name']}: {name} read back")
    prefix = c.get("prefix", "" if c["family"] == "gpt2" else "model.")
    W = {(k[len(prefix):] if k.startswith(prefix) else k): v for k, v in W.items()}

    forward = gpt2_forward if c["family"] == "gpt2" else llama_forward
    layers, logprobs = forward(W, cfg, ids)
    n_layers = len(layers)
    H = layers[0]["attn"].shape[0]
    T = len(ids)

    # Self-checks: rows, masks, the second way, sharpness.
    worst = 0.0
    sharp = []
    for i, lay in enumerate(layers):
        a = lay["attn"]
        check(torch.isfinite(a).all() and torch.isfinite(lay["x"]).all(), f"{c['name']} L{i}: finite")
        check(torch.allclose(a.sum(-1), torch.ones(H, T, dtype=torch.float64), atol=1e-12, rtol=0),
              f"{c['name']} L{i}: rows sum to 1")
        check(bool((a.triu(1) == 0).all()), f"{c['name']} L{i}: masked cells 0")
        attn2, out2 = attention_by_loops(c, cfg, W, i, lay["x"])
        da = float(np.abs(attn2 - a.numpy()).max())
        do = float(np.abs(out2 - lay["out"].numpy()).max())
        check(da < 1e-10 and do < 1e-10, f"{c['name']} L{i}: second way differs ({da:.1e}, {do:.1e})")
        worst = max(worst, da, do)
        # Sharpness: the mean over heads and rows (3+ keys visible) of the top weight
        # above the uniform one.
        top = a.max(-1).values[:, 2:] - 1.0 / torch.arange(3, T + 1, dtype=torch.float64)
        sharp.append(float(top.mean()))
    check(min(sharp) > 0.15, f"{c['name']}: maps too flat to test ({min(sharp):.2f})")
    check(abs(float(logprobs.exp().sum()) - 1.0) < 1e-12, f"{c['name']}: logprobs")

    # Each feature changes the outputs by far more than the C tests' tolerance.
    moved = {}
    for ab in ablations_for(c, cfg):
        lays2, lp2 = forward(W, cfg, ids, ablate=ab)
        if ab == "embedding_unembeds":
            delta = float((lp2 - logprobs).abs().max())
        else:
            delta = max(float((l2["attn"] - l1["attn"]).abs().max()) for l1, l2 in zip(layers, lays2))
        moved[ab] = delta
        check(delta > 2 * C_TOLERANCE, f"{c['name']}: leaving out {ab} moves the maps only {delta:.1e}")

    for i, lay in enumerate(layers):
        np.save(os.path.join(folder, "ref", f"attn_{i:02d}.npy"), lay["attn"].numpy().astype("<f8"))
        np.save(os.path.join(folder, "ref", f"x_{i:02d}.npy"), lay["x"].numpy().astype("<f8"))
    np.save(os.path.join(folder, "ref", "logprobs.npy"), logprobs.numpy().astype("<f8"))
    # Each head switched off in turn (its slice of the attention's output zeroed
    # before c_proj / o_proj, the rest of the forward as is): the log-probability
    # of the unablated top token (the lowest id on ties), (n_layers, n_heads).
    top = int(torch.argmax(logprobs))
    off = np.zeros((n_layers, H))
    for li in range(n_layers):
        for hi in range(H):
            off[li, hi] = float(forward(W, cfg, ids, zero_heads=[(li, hi)])[1][top])
    np.save(os.path.join(folder, "ref", "ablate.npy"), off.astype("<f8"))
    # Several heads switched off at once (--ablate L.H,L.H,...): the first and
    # second head of layer 0 (the first alone when it has one) and the last head
    # of the last layer; every log-probability, (vocab).
    heads_off = sorted({(0, 0), (0, min(1, H - 1)), (n_layers - 1, H - 1)})
    lp_off = forward(W, cfg, ids, zero_heads=heads_off)[1]
    moved_off = float((lp_off - logprobs).abs().max())
    check(moved_off > 2 * C_TOLERANCE, f"{c['name']}: switching off {heads_off} moves only {moved_off:.1e}")
    np.save(os.path.join(folder, "ref", "ablate_set.npy"), lp_off.numpy().astype("<f8"))
    hd = layers[0]["x"].shape[1] // H if c["family"] == "gpt2" else head_dim_of(cfg)
    info = {"ids": ids, "n_layers": n_layers, "model_type": cfg["model_type"],
            "dtype": c["dtype"], "n_heads": H,
            "n_kv_heads": cfg.get("num_key_value_heads", H), "head_dim": hd,
            "d_model": int(layers[0]["x"].shape[1]), "vocab_size": c["vocab"],
            "tied": c["family"] == "gpt2" or c["tied"], "ablate_set": [list(k) for k in heads_off]}
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    ms = (time.perf_counter() - t0) * 1e3
    print(f"  {c['name']:24s} T={T:2d} layers={n_layers} heads={H}/{info['n_kv_heads']} "
          f"{c['dtype']:4s} second way {worst:.0e}, sharpness {min(sharp):.2f}, "
          "left out: " + (", ".join(f"{k} {v:.1e}" for k, v in moved.items()) or "-") + f" ({ms:.0f} ms)")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_checkpoints.py OUT_DIR")
    if sys.byteorder != "little":
        sys.exit("make_checkpoints: writes the files in this machine's byte order: little-endian only")
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    try:
        for c in CASES:
            make_case(c, sys.argv[1])
    except CheckFailed as e:
        sys.exit(f"make_checkpoints: self-check failed: {e}")
    print(f"make_checkpoints: {len(CASES)} checkpoints in {sys.argv[1]} "
          f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
