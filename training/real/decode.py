"""Torch-side decoders and QA evaluation for the SmolLM2 adaptations (the training framework's numbers;
the reference numbers are the engine's).

- ARM: greedy after the chat prompt, stop at `<|im_end|>`.
- MDM: Dream's `diffusion_generate` at τ 0 — canvas = prompt + G masks, timesteps linspace(1, ε, S+1)
  in float32, at step i every masked position gets argmax and negative entropy from its shifted logits
  (row p−1 predicts position p), floor(m·(1 − t_{i+1}/t_i)) most confident are written, all the rest at the
  last step; the answer is the text before the first `<|im_end|>`. G = S = 8 (the longest world answer
  is 7 SmolLM2 tokens).
"""
from __future__ import annotations

import gzip
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import smol  # noqa: E402
from qa_metrics import accuracy, exact, f1, fact_scores  # noqa: E402

SETTINGS = {"closed_book": None, "oracle": 0, "gold_4": 4, "gold_9": 9}
GEN = 8


def passages_for(rec: dict, setting: str, index: int) -> list[str] | None:
    """As training/evaluate.py: the gold at position index % (k+1) among the first k distractors."""
    k = SETTINGS[setting]
    if k is None:
        return None
    gold = rec["ctxs"][0]["text"]
    ds = [c["text"] for c in rec["ctxs"][1:1 + k]]
    pos = index % (k + 1)
    return ds[:pos] + [gold] + ds[pos:]


def prompt_ids(tok, question: str, passages: list[str] | None) -> list[int]:
    return tok.encode(tok.chat(smol.user_content(passages or [], question)))


@torch.no_grad()
def greedy_arm(m, ids: list[int], eos: int, max_new: int = 10) -> list[int]:
    cache = [[] for _ in m.layers]
    x, out = list(ids), []
    for _ in range(max_new):
        t = int(m(torch.tensor([x]), rows=torch.tensor([[False] * (len(x) - 1) + [True]]), cache=cache)[0].argmax())
        if t == eos:
            break
        out.append(t)
        x = [t]
    return out


def dream_timesteps(steps: int, eps: float = 1e-3) -> torch.Tensor:
    return torch.linspace(1, eps, steps + 1, dtype=torch.float32)


@torch.no_grad()
def dream_decode(m, ids: list[int], mask_id: int, eos: int, gen: int = GEN, steps: int = GEN) -> list[int]:
    x = torch.tensor([list(ids) + [mask_id] * gen])
    ts = dream_timesteps(steps)
    logits, seen = None, None
    for i in range(steps):
        masked = (x[0] == mask_id).nonzero().flatten()
        nm = len(masked)
        if nm == 0:
            break
        rows = torch.zeros_like(x, dtype=torch.bool)
        rows[0, masked - 1] = True  # shifted: row p−1 gives position p
        if seen is None or not torch.equal(seen, x):  # a step that wrote nothing leaves the canvas as it was
            logits, seen = m(x, rows=rows), x.clone()
        p = torch.softmax(logits.double(), -1)
        conf = (p * torch.log(p.clamp_min(1e-300))).sum(-1)  # negative entropy
        tok = p.argmax(-1)
        if i == steps - 1:
            n = nm
        else:
            n = int(torch.tensor(nm, dtype=torch.float32) * (1 - ts[i + 1] / ts[i]))
        if n <= 0:
            continue
        top = torch.topk(conf, n).indices
        x[0, masked[top]] = tok[top]
    out = []
    for t in x[0, len(ids):].tolist():
        if t == eos:
            break
        out.append(t)
    return out


def generate(m, kind: str, tok, ids: list[int], gen: int = GEN, steps: int | None = None) -> list[int]:
    """ARM: greedy up to 10 new tokens (the short setting) or `gen` when it is larger; MDM: `gen` masks
    denoised in `steps` steps (default `gen`: the paper's N tokens in N steps)."""
    if kind == "arm":
        return greedy_arm(m, ids, tok.eos_id, max_new=max(10, gen) if gen > GEN else 10)
    return dream_decode(m, ids, tok.mask_id, tok.eos_id, gen=gen, steps=steps or gen)


def long_passages(rec: dict, setting: str) -> list[str]:
    """Long-answer records hold their ctxs in prompt order: "oracle" = the gold passages only (in order),
    "full" = every ctx as stored (the golds first, then the distractors, in eval-heldout-long.jsonl.gz)."""
    if setting == "oracle":
        return [c["text"] for c in rec["ctxs"] if c["isgold"]]
    return [c["text"] for c in rec["ctxs"]]


def evaluate_long(m, kind: str, tok, records: list[dict], setting: str = "oracle", gen: int = 64,
                  samples: int = 0, steps: int | None = None) -> dict:
    """Mean fact recall / precision / F1 / complete share (training/qa_metrics.py fact_scores) of long answers."""
    m.eval()
    tot = {"recall": 0.0, "precision": 0.0, "f1": 0.0, "complete": 0.0}
    shown = []
    for r in records:
        pred = tok.decode(generate(m, kind, tok, prompt_ids(tok, r["question"], long_passages(r, setting)), gen, steps)).strip()
        sc = fact_scores(pred, r["facts"])
        for k in tot:
            tot[k] += sc[k]
        if len(shown) < samples:
            shown.append({"q": r["question"], "gold": r["answers"][0], "pred": pred, "recall": sc["recall"]})
    n = len(records)
    res = {"n": n, "gen": gen, "steps": steps or gen, **{k: v / max(1, n) for k, v in tot.items()}}
    if samples:
        res["samples"] = shown
    return res


def evaluate(m, kind: str, tok, records: list[dict], settings, limit: dict | None = None,
             samples: int = 0, gen: int = GEN) -> dict:
    """{setting: {n, accuracy, f1, exact_match[, samples]}}; `limit` caps n per setting; `gen` = MDM canvas."""
    m.eval()
    res = {}
    for s in settings:
        recs = records[: (limit or {}).get(s, len(records))]
        acc = f = em = 0.0
        shown = []
        for i, r in enumerate(recs):
            pred = tok.decode(generate(m, kind, tok, prompt_ids(tok, r["question"], passages_for(r, s, i)), gen)).strip()
            acc += max(accuracy(pred, g) for g in r["answers"])
            f += max(f1(pred, g) for g in r["answers"])
            em += max(exact(pred, g) for g in r["answers"])
            if len(shown) < samples:
                shown.append({"q": r["question"], "gold": r["answers"][0], "pred": pred})
        n = len(recs)
        res[s] = {"n": n, "accuracy": acc / n, "f1": f / n, "exact_match": em / n}
        if samples:
            res[s]["samples"] = shown
    return res


def read_jsonl(path: str, limit: int | None = None) -> list[dict]:
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
                if limit and len(out) >= limit:
                    break
    return out
