"""The PyTorch side of the benchmarks: an eager LLaDA/Dream-shaped masked diffusion transformer written
the way the paper's extraction code runs it, so that `npm run bench` and bench/gpu/ time the same math
our ONNX engine computes (same weights, same shapes).

    Shape(...)                    layers, width, heads, kv heads, ffn, vocab, qkv bias (Dream), rope θ
    LLADA_8B, DREAM_7B            the published models' shapes (config.json of each)
    random_weights(shape, seed)   canonical weights (training/hf_formats.py names) as numpy f32 / torch
    load_llada(dir)               a LLaDA-format folder (config.json + model.safetensors) → (shape, weights)
    EagerMDM(shape, weights)      the model; three ways to run one denoising step:
      .forward(ids)               plain: logits only
      .step_output_attentions(ids)  one forward that keeps every layer's [B, H, T, T] probabilities, as
                                  Hugging Face eager attention does with `output_attentions=True`, then the
                                  per-layer received vector (mean over heads and queries) from them
      .step_paper(ids)            the paper's extraction: one forward for the logits, then one full forward
                                  per layer that records only that layer's head-mean map (L + 1 forwards)

Bidirectional attention (no mask: nothing is padded), RoPE in the NeoX/HF-Llama layout, RMSNorm, SwiGLU.
Works with torch 1.13 (Debian's /usr/bin/python3) and torch 2.x (the GPU machine).
"""
from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "training"))


@dataclass(frozen=True)
class Shape:
    layers: int
    width: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    qkv_bias: bool = False
    rope_theta: float = 10000.0
    eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    def matmul_params(self) -> int:
        """Weights that enter a matrix product per token (the LM head included, the embedding lookup not)."""
        d, kv = self.width, self.kv_heads * self.head_dim
        per_layer = d * d * 2 + 2 * d * kv + 3 * d * self.ffn
        return self.layers * per_layer + self.vocab * d

    def forward_flops(self, T: int) -> float:
        """Multiply-adds × 2 of one forward over T tokens: the linear layers plus QKᵀ and P·V."""
        return 2.0 * T * self.matmul_params() + 4.0 * self.layers * T * T * self.width

    def to_dict(self) -> dict:
        return asdict(self)


# The published shapes (config.json of GSAI-ML/LLaDA-8B-Instruct and Dream-org/Dream-v0-Instruct-7B).
LLADA_8B = Shape(layers=32, width=4096, heads=32, kv_heads=32, ffn=12288, vocab=126464, rope_theta=500000.0)
DREAM_7B = Shape(layers=28, width=3584, heads=28, kv_heads=4, ffn=18944, vocab=152064, qkv_bias=True,
                 rope_theta=1000000.0, eps=1e-6)

LAYER_KEYS = ("attn_norm", "q", "k", "v", "o", "mlp_norm", "gate", "up", "down")


def random_weights(s: Shape, seed: int = 0, *, device: str = "cpu", dtype=torch.float32) -> dict:
    """Canonical weights ([out, in] like nn.Linear), std 1/√fan-in so activations stay O(1) over depth."""
    g = torch.Generator(device=device).manual_seed(seed)
    kv = s.kv_heads * s.head_dim

    def mat(o: int, i: int, scale: float = 1.0) -> torch.Tensor:
        return (torch.randn(o, i, generator=g, device=device, dtype=torch.float32) * (scale / math.sqrt(i))).to(dtype)

    def ones(n: int) -> torch.Tensor:
        return torch.ones(n, device=device, dtype=dtype)

    w: dict = {"embed": torch.randn(s.vocab, s.width, generator=g, device=device).to(dtype),
               "final_norm": ones(s.width), "lm_head": mat(s.vocab, s.width)}
    residual = 1.0 / math.sqrt(2 * s.layers)
    for i in range(s.layers):
        p = f"layers.{i}."
        w[p + "attn_norm"] = ones(s.width)
        w[p + "q"] = mat(s.width, s.width)
        w[p + "k"] = mat(kv, s.width)
        w[p + "v"] = mat(kv, s.width)
        w[p + "o"] = mat(s.width, s.width, residual)
        w[p + "mlp_norm"] = ones(s.width)
        w[p + "gate"] = mat(s.ffn, s.width)
        w[p + "up"] = mat(s.ffn, s.width)
        w[p + "down"] = mat(s.width, s.ffn, residual)
        if s.qkv_bias:
            w[p + "q_bias"] = torch.zeros(s.width, device=device, dtype=dtype)
            w[p + "k_bias"] = torch.zeros(kv, device=device, dtype=dtype)
            w[p + "v_bias"] = torch.zeros(kv, device=device, dtype=dtype)
    return w


_LLADA = {"attn_norm": "attn_norm", "q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "attn_out",
          "mlp_norm": "ff_norm", "gate": "ff_proj", "up": "up_proj", "down": "ff_out"}


def load_llada(folder: str) -> tuple[Shape, dict]:
    """A LLaDA-format checkpoint (as training/hf_formats.py writes it) → (Shape, canonical f32 weights)."""
    from hf_formats import read_safetensors

    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    s = Shape(layers=c["n_layers"], width=c["d_model"], heads=c["n_heads"], kv_heads=c["n_kv_heads"],
              ffn=c["mlp_hidden_size"], vocab=c["vocab_size"], rope_theta=float(c["rope_theta"]),
              eps=float(c["rms_norm_eps"]))
    raw, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    t = lambda name: torch.from_numpy(raw[name])  # noqa: E731
    w = {"embed": t("model.transformer.wte.weight"), "final_norm": t("model.transformer.ln_f.weight"),
         "lm_head": t("model.transformer.ff_out.weight")}
    for i in range(s.layers):
        for k in LAYER_KEYS:
            w[f"layers.{i}.{k}"] = t(f"model.transformer.blocks.{i}.{_LLADA[k]}.weight")
    return s, w


def _rms(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class EagerMDM:
    def __init__(self, s: Shape, w: dict):
        self.s, self.w = s, w
        self._rope: dict = {}

    def _tables(self, T: int, device, dtype):
        key = (T, str(device), dtype)
        if key not in self._rope:
            d = self.s.head_dim
            inv = 1.0 / (self.s.rope_theta ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
            ang = torch.arange(T, device=device, dtype=torch.float32)[:, None] * inv[None, :]
            ang = torch.cat((ang, ang), dim=-1)
            self._rope[key] = (ang.cos().to(dtype), ang.sin().to(dtype))
        return self._rope[key]

    def _layer(self, i: int, x: torch.Tensor, cos, sin, keep: str | None):
        """One block. keep: None, "probs" (return [B, H, T, T]) or "mean" (return mean_h P [B, T, T])."""
        s, w, p = self.s, self.w, f"layers.{i}."
        B, T, D = x.shape
        H, Hkv, d = s.heads, s.kv_heads, s.head_dim
        h = _rms(x, w[p + "attn_norm"], s.eps)
        q, k, v = F.linear(h, w[p + "q"], w.get(p + "q_bias")), F.linear(h, w[p + "k"], w.get(p + "k_bias")), \
            F.linear(h, w[p + "v"], w.get(p + "v_bias"))
        q = q.view(B, T, H, d).transpose(1, 2)
        k = k.view(B, T, Hkv, d).transpose(1, 2)
        v = v.view(B, T, Hkv, d).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        if Hkv != H:  # grouped-query attention, as HF's repeat_kv
            k = k.repeat_interleave(H // Hkv, dim=1)
            v = v.repeat_interleave(H // Hkv, dim=1)
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
        probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        kept = None if keep is None else (probs if keep == "probs" else probs.float().mean(1))
        o = (probs @ v).transpose(1, 2).reshape(B, T, H * d)
        x = x + F.linear(o, w[p + "o"])
        g = _rms(x, w[p + "mlp_norm"], s.eps)
        x = x + F.linear(F.silu(F.linear(g, w[p + "gate"])) * F.linear(g, w[p + "up"]), w[p + "down"])
        return x, kept

    def _run(self, ids: torch.Tensor, keep_layer: int | None = None, keep_all: bool = False):
        w = self.w
        x = F.embedding(ids, w["embed"])
        cos, sin = self._tables(ids.shape[1], x.device, x.dtype)
        kept: list = []
        for i in range(self.s.layers):
            mode = "probs" if keep_all else ("mean" if i == keep_layer else None)
            x, a = self._layer(i, x, cos, sin, mode)
            if a is not None:
                kept.append(a)
        logits = F.linear(_rms(x, w["final_norm"], self.s.eps), w["lm_head"])
        return logits, kept

    @torch.no_grad()
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self._run(ids)[0]

    @torch.no_grad()
    def step_output_attentions(self, ids: torch.Tensor):
        """Logits and every layer's [B, H, T, T] (all held at once, as `output_attentions` returns them),
        reduced to the per-layer received vector [B, key] the engine's default probe returns."""
        logits, probs = self._run(ids, keep_all=True)
        received = [p.float().mean(dim=(1, 2)) for p in probs]
        return logits, received, probs

    @torch.no_grad()
    def step_paper(self, ids: torch.Tensor):
        """Logits, then one forward per layer for that layer's head-mean map [B, T, T]."""
        logits = self._run(ids)[0]
        maps = [self._run(ids, keep_layer=layer)[1][0] for layer in range(self.s.layers)]
        return logits, maps
