"""Held-out QA accuracy of an adapted SmolLM2 (delta on the base, or a merged folder), torch decoders of
decode.py, settings closed-book / oracle / gold + 4 / gold + 9 on models/world/eval-heldout.jsonl.gz
(test people, never trained on). `--n` caps the questions per setting (the first n, as the tiny cards).
A setting may name the MDM's canvas: `oracle@32` = 32 masks in 32 steps (default 8; the twin's greedy
decoding is the same at any canvas, up to max(10, G) new tokens). Long answers (phase 4 on):
`long_oracle@64` (the gold passages only) and `long_full@64` (gold passages + 4 distractors) on
models/world/eval-heldout-long.jsonl.gz (`--long-data`), scored by fact recall/precision
(training/qa_metrics.py fact_scores).

    OPENBLAS_CORETYPE=SkylakeX nice -n 19 /usr/bin/python3 training/real/eval_qa.py --append \
        --delta models/smollm2-135m-dream-world/delta.safetensors \
        --n oracle@32=300 long_oracle@64=100 --out models/smollm2-135m-dream-world/eval-torch.json

    OPENBLAS_CORETYPE=SkylakeX nice -n 19 /usr/bin/python3 training/real/eval_qa.py \
        --delta models/smollm2-135m-dream-world/delta.safetensors \
        --n oracle=100 gold_4=50 gold_9=30 closed_book=50 --out models/smollm2-135m-dream-world/eval-torch.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import smol  # noqa: E402
import decode  # noqa: E402
from merge import adapted, load_merged  # noqa: E402
from decode import read_jsonl  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--delta")
    g.add_argument("--merged")
    ap.add_argument("--data", default="models/world/eval-heldout.jsonl.gz")
    ap.add_argument("--long-data", default="models/world/eval-heldout-long.jsonl.gz")
    ap.add_argument("--n", nargs="+", default=["oracle=100"], help="setting=count …, in the order run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--append", action="store_true", help="keep the settings already in --out (same model)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.delta:
        m, tok, _, dmeta = adapted(a.delta)
        kind = "dream" if dmeta["objective"] == "mdm" else "arm"
    else:
        m, kind = load_merged(a.merged)
        tok, dmeta = smol.Tok(smol.load_base_tensors()[1]), {}
    limits = {s.split("=")[0]: int(s.split("=")[1]) for s in a.n}
    recs = read_jsonl(a.data, max(limits.values()))
    long_recs = read_jsonl(a.long_data, max(limits.values())) if any(s.startswith("long_") for s in limits) else []
    out = {"model": a.delta or a.merged, "delta_step": dmeta.get("step"), "data": os.path.basename(a.data),
           "evaluator": "training framework (torch, training/real/decode.py)",
           "decoder": {"arm": "greedy, max 10 new tokens (max(10, G) for a setting @G), stop at <|im_end|>",
                       "dream": "Dream diffusion_generate at tau 0: shifted logits, entropy order, "
                                "G masks in G steps (G = 8 unless the setting says @G), eps 1e-3"}[kind],
           "blas_core": smol.blas_core(), "results": {}, "seconds": {}}
    if a.append and os.path.exists(a.out):
        prev = json.load(open(a.out))
        if prev["model"] != out["model"] or prev.get("delta_step") != out["delta_step"]:
            raise SystemExit(f"{a.out} holds results of another model ({prev['model']}, step {prev.get('delta_step')})")
        out["results"], out["seconds"] = prev["results"], prev["seconds"]
    for s, n in limits.items():
        t0 = time.time()
        base, _, g = s.partition("@")
        gen = int(g) if g else decode.GEN
        if base.startswith("long_"):
            r = decode.evaluate_long(m, kind, tok, long_recs[:n], base[len("long_"):], gen, samples=3)
        else:
            r = decode.evaluate(m, kind, tok, recs, [base], limit={base: n}, samples=3, gen=gen)[base]
            r["gen"] = gen
        out["results"][s] = r
        out["seconds"][s] = round(time.time() - t0, 1)
        print(s, json.dumps({k: v for k, v in r.items() if k != "samples"}), f"{out['seconds'][s]} s", flush=True)
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out + ".tmp", "w") as f:
            json.dump(out, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
