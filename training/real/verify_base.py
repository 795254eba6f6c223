"""Check that the dequantised base is the real model (and that the q/k un-permutation is right):
greedy continuations of chat prompts, and perplexity on plain English passages, with the un-permutation
on (ours) and off (llama.cpp's raw row order) for comparison.

    OPENBLAS_CORETYPE=SkylakeX nice -n 19 /usr/bin/python3 training/real/verify_base.py \
        --passages /path/to/nq-open-oracle.jsonl.gz --n 8 --out training/real/verify-base.json
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smol  # noqa: E402

PROMPTS = ["What is the capital of France?", "Write one sentence about the sea.",
           "Name three colours.", "How many legs does a spider have?"]


@torch.no_grad()
def greedy(m, ids: list[int], n: int, eos: int) -> list[int]:
    out = []
    x = list(ids)
    for _ in range(n):
        t = int(m(torch.tensor([x]))[0, -1].argmax())
        if t == eos:
            break
        out.append(t)
        x.append(t)
    return out


@torch.no_grad()
def perplexity(m, tok, texts: list[str], max_tokens: int = 128) -> float:
    nll = cnt = 0.0
    for t in texts:
        ids = tok.encode(t)[:max_tokens]
        x = torch.tensor([ids])
        lp = torch.log_softmax(m(x)[0, :-1].double(), -1)
        nll += -lp.gather(1, x[0, 1:, None]).sum().item()
        cnt += len(ids) - 1
    return math.exp(nll / cnt)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", required=True, help="jsonl(.gz) with ctxs[].text (e.g. NQ-open oracle)")
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    torch.set_num_threads(1)
    m, tok, meta = smol.build(causal=True)
    m.eval()
    texts = []
    with gzip.open(a.passages, "rt", encoding="utf-8") as f:
        for line in f:
            texts.append(json.loads(line)["ctxs"][0]["text"])
            if len(texts) >= a.n:
                break
    t0 = time.time()
    res = {"blas_core": smol.blas_core(), "gguf": smol.GGUF_NAME}
    res["ppl_unpermuted"] = perplexity(m, tok, texts)
    res["greedy"] = {p: tok.decode(greedy(m, tok.encode(tok.chat(p)), 24, tok.eos_id)) for p in PROMPTS}
    # Control: the raw GGUF row order (no un-permutation) must be clearly worse.
    raw = smol.build(causal=True)[0]
    with torch.no_grad():
        for blk in raw.layers:
            for name, nh in (("q", m.hp["heads"]), ("k", m.hp["kv_heads"])):
                w = getattr(blk, name).weight
                D = w.shape[0] // nh
                # re-apply llama.cpp's permutation: (lane r, pair j) → (pair j, lane r)
                w.copy_(w.reshape(nh, 2, D // 2, -1).transpose(1, 2).reshape(w.shape))
    res["ppl_raw_gguf_order"] = perplexity(raw, tok, texts)
    res["n_passages"] = len(texts)
    res["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(res, indent=2, ensure_ascii=False))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=2, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
