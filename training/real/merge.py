"""Base + delta → an HF-style checkpoint folder our engine opens like any other.

    /usr/bin/python3 training/real/merge.py --delta models/smollm2-135m-dream-world/delta.safetensors \
        --out .cache/smollm2/smollm2-135m-dream-world
    /usr/bin/python3 training/real/merge.py --delta models/smollm2-135m-causal-world/delta.safetensors \
        --out .cache/smollm2/smollm2-135m-causal-world

The base is the GGUF from the registry package (fetch_base.sh; dequantised, q/k rows un-permuted, see
smol.py); the delta holds LoRA factors (W' = W + (α/r)·B·A for q, k, v, o, gate, up, down of every layer),
all RMSNorm weights, and for the MDM the mask token's embedding row. The objective recorded in the delta
picks the format:
- mdm → Dream (`DreamModel`: Qwen2 tensor names, zero q/k/v biases because SmolLM2 has none,
  `mask_token_id` 16 = `<empty_output>`, bidirectional, logits shifted by one in the engine);
- arm → LLaMA (`LlamaForCausalLM`).
Both keep the base's tied embedding (`tie_word_embeddings: true`, one tensor) and write f32
model.safetensors (≈ 540 MB), config.json, generation_config.json, tokenizer.json (built from the GGUF's
vocabulary, merges and pre-tokenizer) and tokenizer_config.json (the base's chat template).
`--check` reloads the written folder and compares its logits with the unmerged LoRA model.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import smol  # noqa: E402
from hf_formats import read_safetensors, write_safetensors  # noqa: E402


def load_delta(path: str) -> tuple[dict, dict]:
    st, meta = read_safetensors(path)
    return {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in st.items()}, meta


def adapted(delta_path: str):
    """The LoRA model (unmerged) with the delta loaded, its tokenizer, base metadata, delta metadata."""
    d, dmeta = load_delta(delta_path)
    mdm = dmeta["objective"] == "mdm"
    m, tok, meta = smol.build(causal=not mdm, rank=int(dmeta["rank"]), alpha=float(dmeta["alpha"]),
                              train_mask_row=mdm)
    m.load_delta(d)
    m.eval()
    return m, tok, meta, dmeta


def config_for(hp: dict, mdm: bool) -> dict:
    common = {"hidden_size": hp["hidden"], "num_hidden_layers": hp["layers"], "num_attention_heads": hp["heads"],
              "num_key_value_heads": hp["kv_heads"], "intermediate_size": hp["ffn"], "vocab_size": hp["vocab_size"],
              "rms_norm_eps": hp["rms_norm_eps"], "rope_theta": hp["rope_theta"],
              "max_position_embeddings": hp["max_positions"], "hidden_act": "silu", "tie_word_embeddings": True,
              "rope_scaling": None, "bos_token_id": smol.IM_START, "eos_token_id": smol.IM_END,
              "pad_token_id": smol.IM_END, "torch_dtype": "float32", "attention_dropout": 0.0,
              "initializer_range": 0.02}
    if mdm:
        return {"architectures": ["DreamModel"], "model_type": "Dream", **common, "use_sliding_window": False,
                "sliding_window": None, "max_window_layers": hp["layers"], "mask_token_id": smol.MASK_ID}
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", **common, "attention_bias": False,
            "mlp_bias": False, "pretraining_tp": 1, "head_dim": hp["hidden"] // hp["heads"]}


def write_folder(m, meta: dict, dmeta: dict, out: str) -> dict:
    mdm = dmeta["objective"] == "mdm"
    os.makedirs(out, exist_ok=True)
    w = {k: v.numpy() for k, v in m.merged_hf().items()}
    if mdm:  # Dream = Qwen2 body: q/k/v biases are part of the format; SmolLM2 has none
        for i in range(m.hp["layers"]):
            p = f"model.layers.{i}.self_attn."
            w[p + "q_proj.bias"] = np.zeros(m.hp["hidden"], np.float32)
            kv = m.hp["kv_heads"] * (m.hp["hidden"] // m.hp["heads"])
            w[p + "k_proj.bias"] = np.zeros(kv, np.float32)
            w[p + "v_proj.bias"] = np.zeros(kv, np.float32)
    w = dict(sorted(w.items()))
    write_safetensors(os.path.join(out, "model.safetensors"), w, dtype="f32",
                      metadata={"format": "pt", "base": smol.GGUF_NAME, "delta_step": str(dmeta.get("step"))})
    cfg = config_for(m.hp, mdm)
    files = {"config.json": cfg,
             "generation_config.json": {"bos_token_id": smol.IM_START, "eos_token_id": smol.IM_END,
                                        "pad_token_id": smol.IM_END, **({"mask_token_id": smol.MASK_ID} if mdm else {})},
             "tokenizer.json": smol.tokenizer_json(meta),
             "tokenizer_config.json": smol.tokenizer_config(meta, mask=mdm)}
    for name, obj in files.items():
        with open(os.path.join(out, name) + ".tmp", "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=None if name == "tokenizer.json" else 2, ensure_ascii=False)
            f.write("\n")
        os.replace(os.path.join(out, name) + ".tmp", os.path.join(out, name))
    return cfg


def load_merged(folder: str):
    """A merged folder → (SmolLM without LoRA, 'dream' | 'arm'). Checks the Dream biases are zero (our
    torch block has none)."""
    cfg = json.load(open(os.path.join(folder, "config.json")))
    st, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    sd = {}
    for k, v in st.items():
        if k.endswith("_proj.bias"):
            if np.abs(v).max() != 0:
                raise ValueError(f"{folder}: {k} is not zero; this torch model has no q/k/v biases")
            continue
        sd[k] = torch.from_numpy(np.array(v, dtype=np.float32))
    hp = {"vocab_size": cfg["vocab_size"], "hidden": cfg["hidden_size"], "layers": cfg["num_hidden_layers"],
          "heads": cfg["num_attention_heads"], "kv_heads": cfg["num_key_value_heads"], "ffn": cfg["intermediate_size"],
          "rope_theta": cfg["rope_theta"], "rms_norm_eps": cfg["rms_norm_eps"],
          "max_positions": cfg["max_position_embeddings"]}
    dream = cfg["architectures"][0] == "DreamModel"
    m = smol.SmolLM(sd, hp, causal=not dream)
    m.eval()
    return m, ("dream" if dream else "arm")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--delta", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(1)
    m, tok, meta, dmeta = adapted(a.delta)
    cfg = write_folder(m, meta, dmeta, a.out)
    print(f"wrote {a.out} ({cfg['architectures'][0]}, delta step {dmeta.get('step')})")
    if a.check:
        mm, kind = load_merged(a.out)
        ids = tok.encode(tok.chat("Passage 1 : Kabo Lentis plays the harp .\nQuestion : What does Kabo Lentis play ?"))
        if kind == "dream":
            ids = ids + [smol.MASK_ID] * 8
        with torch.no_grad():
            x = torch.tensor([ids])
            diff = (mm(x) - m(x)).abs().max().item()
        print(f"max |logit difference| merged vs LoRA: {diff:.2e}")
        if diff > 1e-3:
            raise SystemExit("merged weights do not reproduce the LoRA model")


if __name__ == "__main__":
    main()
