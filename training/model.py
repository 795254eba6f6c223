"""The one transformer all four tiny models share, written to be numerically the HF modules.

Pre-norm decoder block as in HF Llama / Qwen2 and LLaDA's "llama" block:
    h = x + o_proj(attn(RMSNorm(x)))            # q/k/v biases only for qwen2 / dream
    y = h + down(silu(gate(RMSNorm(h))) * up(RMSNorm(h)))
RMSNorm: w * x / sqrt(mean(x²) + eps), eps as saved in config.json.
RoPE: half-split ("rotate_half", HF-Llama/NeoX layout), inv_freq[j] = θ^(-2j/dHead), positions 0..T-1.
Causal (llama, qwen2) or bidirectional (llada, dream); untied embedding and LM head (as the real 7–8B
checkpoints). Dream's logit shift is NOT part of the network: it is applied by the objective and the
sampler (`shift_logits`), exactly as the real Dream does.

Parameter names are the canonical ones of training/hf_formats.py (embed, layers.{i}.q, …, lm_head).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class ModelConfig:
    vocab_size: int
    hidden: int = 128
    layers: int = 6
    heads: int = 4
    ffn: int = 344
    rope_theta: float = 500000.0
    rms_norm_eps: float = 1e-5
    causal: bool = True
    qkv_bias: bool = False
    max_positions: int = 512
    tied: bool = False  # share the embedding with the LM head (tie_word_embeddings / weight_tying)

    def to_dict(self) -> dict:
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rope_tables(T: int, d_head: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin: [T, dHead] (angles duplicated across the two halves)."""
    inv = 1.0 / (theta ** (torch.arange(0, d_head, 2, dtype=torch.int64).float() / d_head))
    ang = torch.outer(torch.arange(T, dtype=torch.float32), inv)
    emb = torch.cat([ang, ang], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class Block(nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        D, H = c.hidden, c.heads
        self.H, self.dh = H, D // H
        self.attn_norm = RMSNorm(D, c.rms_norm_eps)
        self.q = nn.Linear(D, D, bias=c.qkv_bias)
        self.k = nn.Linear(D, D, bias=c.qkv_bias)
        self.v = nn.Linear(D, D, bias=c.qkv_bias)
        self.o = nn.Linear(D, D, bias=False)
        self.mlp_norm = RMSNorm(D, c.rms_norm_eps)
        self.gate = nn.Linear(D, c.ffn, bias=False)
        self.up = nn.Linear(D, c.ffn, bias=False)
        self.down = nn.Linear(c.ffn, D, bias=False)
        self.capture = False

    def forward(self, x, cos, sin, bias):
        B, T, D = x.shape
        h = self.attn_norm(x)
        q = self.q(h).view(B, T, self.H, self.dh).transpose(1, 2)  # [batch, head, query, dHead]
        k = self.k(h).view(B, T, self.H, self.dh).transpose(1, 2)
        v = self.v(h).view(B, T, self.H, self.dh).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        s = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh)  # [batch, head, query, key]
        if bias is not None:
            s = s + bias
        a = torch.softmax(s, dim=-1)
        if self.capture:  # for reference fixtures: attention probabilities [batch, head, query, key]
            self.last_attn = a.detach()
        o = (a @ v).transpose(1, 2).reshape(B, T, D)
        x = x + self.o(o)
        g = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(g)) * self.up(g))


class TinyLM(nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab_size, c.hidden)
        self.layers = nn.ModuleList([Block(c) for _ in range(c.layers)])
        self.final_norm = RMSNorm(c.hidden, c.rms_norm_eps)
        self.lm_head = nn.Linear(c.hidden, c.vocab_size, bias=False)
        self.apply(self._init)
        if c.tied:
            self.lm_head.weight = self.embed.weight
        for l in self.layers:  # GPT-2 style scaled init of residual outputs
            nn.init.normal_(l.o.weight, std=0.02 / math.sqrt(2 * c.layers))
            nn.init.normal_(l.down.weight, std=0.02 / math.sqrt(2 * c.layers))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids: torch.Tensor, key_pad: torch.Tensor | None = None) -> torch.Tensor:
        """ids [batch, T] → logits [batch, T, vocab] (unshifted). key_pad [batch, T] bool: True = padding key."""
        B, T = ids.shape
        cos, sin = rope_tables(T, self.c.hidden // self.c.heads, self.c.rope_theta)
        bias = None
        if self.c.causal:
            bias = torch.full((T, T), float("-inf")).triu(1)[None, None]
        if key_pad is not None and not self.c.causal:
            kp = torch.zeros(B, 1, 1, T).masked_fill(key_pad[:, None, None, :], float("-inf"))
            bias = kp if bias is None else bias + kp
        x = self.embed(ids)
        for l in self.layers:
            x = l(x, cos, sin, bias)
        return self.lm_head(self.final_norm(x))

    def canonical_weights(self) -> dict:
        """State dict in training/hf_formats.py canonical naming, as f32 numpy arrays."""
        # lm_head is listed even when tied (then it is the embedding): exports are always untied.
        out = {"embed": self.embed.weight, "final_norm": self.final_norm.weight, "lm_head": self.lm_head.weight}
        for i, l in enumerate(self.layers):
            p = f"layers.{i}."
            out[p + "attn_norm"] = l.attn_norm.weight
            out[p + "mlp_norm"] = l.mlp_norm.weight
            for n in ("q", "k", "v", "o", "gate", "up", "down"):
                out[p + n] = getattr(l, n).weight
            if self.c.qkv_bias:
                for n in ("q", "k", "v"):
                    out[p + n + "_bias"] = getattr(l, n).bias
        return {k: v.detach().float().numpy().copy() for k, v in out.items()}

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def shift_logits(logits: torch.Tensor) -> torch.Tensor:
    """Dream convention: the distribution for position i is the output row i-1 (row 0 reused)."""
    return torch.cat([logits[:, :1], logits[:, :-1]], dim=1)
