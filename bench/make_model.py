"""Build a random-weight LLaDA- or Dream-format checkpoint of a chosen shape for the benchmarks (f32 or bf16).

    /usr/bin/python3 bench/make_model.py OUT_DIR --layers 8 --width 1024 --heads 16 --ffn 2816 --vocab 4096 [--dtype f32]
    python bench/make_model.py OUT_DIR --preset llada-8b --dtype bf16 --shards 8     # the GPU machine (bench/gpu/run.sh)

Writes config.json + model safetensors (training/hf_formats.py, the real tensor names of the family) and
bench-shape.json (the shape and seed). A folder whose bench-shape.json already matches is left as it
is, so repeated runs reuse it. Benchmarks put these under .cache/bench/ (git-ignored): never commit them.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "training"))

from torch_model import DREAM_7B, LLADA_8B, Shape, random_weights  # noqa: E402

PRESETS = {"llada-8b": ("llada", LLADA_8B), "dream-7b": ("dream", DREAM_7B)}


def build(out: str, shape: Shape, seed: int = 0, dtype: str = "f32", family: str = "llada", shards: int = 1) -> bool:
    """Write the checkpoint unless an identical one is there; True when written."""
    from hf_formats import save_checkpoint

    stamp = {"shape": shape.to_dict(), "seed": seed, "dtype": dtype, "family": family, "shards": shards}
    stamp_path = os.path.join(out, "bench-shape.json")
    if os.path.exists(stamp_path) and os.path.exists(os.path.join(out, "config.json")):
        with open(stamp_path) as f:
            if json.load(f) == stamp:
                return False
    w = random_weights(shape, seed)
    keys = ("attn_norm", "q", "k", "v", "o", "mlp_norm", "gate", "up", "down") + (
        ("q_bias", "k_bias", "v_bias") if shape.qkv_bias else ())
    layers = [{k: w[f"layers.{i}.{k}"] for k in keys} for i in range(shape.layers)]
    weights = {"embed": w["embed"], "final_norm": w["final_norm"], "lm_head": w["lm_head"], "layers": layers}
    hp = {"num_attention_heads": shape.heads, "num_key_value_heads": shape.kv_heads, "rope_theta": shape.rope_theta,
          "rms_norm_eps": shape.eps, "max_position_embeddings": 8192, "bos_token_id": 1, "eos_token_id": 2,
          "pad_token_id": 0, "mask_token_id": shape.vocab - 1}
    if os.path.exists(stamp_path):
        os.unlink(stamp_path)  # the stamp is written last: a half-written folder never looks finished
    save_checkpoint(out, family, weights, hp, dtype=dtype, shards=shards)
    with open(stamp_path, "w") as f:
        json.dump(stamp, f, indent=1)
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--preset", choices=sorted(PRESETS), help="a published model's shape (overrides the sizes)")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--ffn", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtype", choices=("f32", "bf16"), default="f32")
    ap.add_argument("--shards", type=int, default=1)
    a = ap.parse_args()
    if a.preset:
        family, s = PRESETS[a.preset]
    else:
        missing = [n for n in ("layers", "width", "heads", "ffn", "vocab") if getattr(a, n) is None]
        if missing:
            sys.exit(f"--{missing[0]}: expected an integer (or --preset), found none")
        if a.width % a.heads:
            sys.exit(f"--width: expected a multiple of --heads ({a.heads}), found {a.width}")
        family, s = "llada", Shape(layers=a.layers, width=a.width, heads=a.heads, kv_heads=a.heads, ffn=a.ffn, vocab=a.vocab)
    wrote = build(a.out, s, a.seed, a.dtype, family, a.shards)
    print(json.dumps({"out": a.out, "written": wrote, "params": s.matmul_params() + s.vocab * s.width}))


if __name__ == "__main__":
    main()
