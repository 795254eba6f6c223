"""Self-checks of training/real that need neither the base model nor a long run (about a second):

    /usr/bin/python3 training/real/test_real.py

1. `unpermute_qk` inverts llama.cpp's q/k row permutation, written here from its definition (per head,
   rows in HF order [first half | second half] become interleaved pairs (h0, h1), (h2, h3), …).
2. The Dream decoder's transfer counts equal those of the upstream schedule recorded in
   test/fixtures/samplers/dream-schedule.json (torch, independent of this code).
3. A LoRA layer's merged weight gives the same output as the unmerged layer.
4. With a KV cache, causal decoding gives the same logits as the full forward pass (tiny random model).
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import smol  # noqa: E402
import decode  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))


def test_unpermute() -> None:
    n_head, d, inp = 3, 8, 5
    hf = np.arange(n_head * d * inp, dtype=np.float32).reshape(n_head * d, inp)
    # llama.cpp order, from the definition: within each head, row 2j is HF row j, row 2j+1 is HF row j + d/2
    gg = np.empty_like(hf)
    for h in range(n_head):
        for j in range(d // 2):
            gg[h * d + 2 * j] = hf[h * d + j]
            gg[h * d + 2 * j + 1] = hf[h * d + j + d // 2]
    assert np.array_equal(smol.unpermute_qk(gg, n_head), hf), "unpermute_qk does not invert the GGUF row order"


def test_dream_counts() -> None:
    fx = json.load(open(os.path.join(REPO, "test", "fixtures", "samplers", "dream-schedule.json")))
    checked = 0
    for case in fx["cases"]:
        if case["eps"] != 1e-3 or case["masks"] != case["steps"]:
            continue
        ts = decode.dream_timesteps(case["steps"], case["eps"])
        assert np.allclose(ts.numpy(), case["timesteps"], atol=0), "timesteps differ"
        m, counts = case["masks"], []
        for i in range(case["steps"]):  # the same arithmetic as decode.dream_decode
            n = m if i == case["steps"] - 1 else int(torch.tensor(m, dtype=torch.float32) * (1 - ts[i + 1] / ts[i]))
            counts.append(n)
            m -= n
        assert counts == case["counts"], f"transfer counts {counts} != {case['counts']}"
        checked += 1
    assert checked > 0, "no fixture case checked"


def test_lora_merge() -> None:
    torch.manual_seed(0)
    lin = smol.LoRALinear(torch.randn(7, 5), rank=3, alpha=6.0)
    with torch.no_grad():
        lin.lora_B.normal_()
        x = torch.randn(4, 5)
        assert torch.allclose(lin(x), x @ lin.merged().t(), atol=1e-5), "merged LoRA weight differs"


def test_kv_cache() -> None:
    torch.manual_seed(0)
    hp = {"vocab_size": 50, "hidden": 16, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 24,
          "rope_theta": 1e4, "rms_norm_eps": 1e-5, "max_positions": 64}
    sd = {"model.embed_tokens.weight": torch.randn(50, 16), "model.norm.weight": torch.ones(16)}
    for i in range(2):
        p = f"model.layers.{i}."
        sd[p + "input_layernorm.weight"] = torch.ones(16)
        sd[p + "post_attention_layernorm.weight"] = torch.ones(16)
        for n, shape in (("q", (16, 16)), ("k", (8, 16)), ("v", (8, 16)), ("o", (16, 16)),
                         ("gate", (24, 16)), ("up", (24, 16)), ("down", (16, 24))):
            sd[p + smol.HF_LINEAR[n] + ".weight"] = torch.randn(*shape) * 0.3
    m = smol.SmolLM(sd, hp, causal=True).eval()
    ids = [3, 7, 1, 9, 4, 4, 2]
    with torch.no_grad():
        full = m(torch.tensor([ids]))[0]
        cache = [[] for _ in m.layers]
        first = m(torch.tensor([ids[:4]]), cache=cache)[0]
        rest = [m(torch.tensor([[t]]), cache=cache)[0, -1] for t in ids[4:]]
    got = torch.cat([first, torch.stack(rest)])
    assert torch.allclose(got, full, atol=1e-5), f"KV cache differs by {(got - full).abs().max():.2e}"


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            fn()
            print("ok", name)
