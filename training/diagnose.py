"""Can a checkpoint copy? The two measurements that decided the recipe (training/README.md, "Training recipe").

    /usr/bin/python3 training/diagnose.py --model tiny-qwen [--run-dir training/runs/tiny-qwen | --ckpt PATH]

1. Copy task: 16 random world words, then the same 16 again. A model that copies predicts the second run
   (causal: next-token loss on it; masked diffusion: 30 % of the second run masked, loss on those) far below
   chance, ln |V| ≈ 6.65 for the 776-word vocabulary.
2. World text: on plain passages about fresh people, the loss on tokens whose bigram (previous token, token)
   already occurred earlier in the sequence (mostly surnames after a repeated first name) vs all other
   tokens. Before copying forms, the repeated ones are *harder* (a random surname, ≈ ln 160); after, they are
   the easiest tokens in the text. Causal models only.

Prints one JSON line. Reads ckpt.pt (a run in progress) or final-state.pt.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train  # noqa: E402
import world as worldlib  # noqa: E402
from model import shift_logits  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402


def load(name: str, path: str) -> tuple[train.TinyLM, str, Tokenizer, int]:
    hp = dict(train.DEFAULTS)
    hp.update(train.MODELS[name]["hp"])
    saved = os.path.join(os.path.dirname(path), "hparams.json")
    if os.path.exists(saved):  # the run's own settings (rope_theta, tied…)
        hp.update({k: v for k, v in json.load(open(saved)).items() if k in hp})
    w = worldlib.World(hp["world_seed"])
    tok = Tokenizer(w.words())
    model = train.TinyLM(train.model_config(name, hp, len(tok)))
    ck = torch.load(path)
    state, step = (ck["model"], ck["step"]) if "model" in ck else (ck, -1)
    model.load_state_dict(state)
    model.eval()
    return model, train.MODELS[name]["kind"], tok, step


@torch.no_grad()
def copy_loss(model: train.TinyLM, kind: str, tok: Tokenizer, n: int = 16, batch: int = 32, seed: int = 3) -> float:
    g = torch.Generator().manual_seed(seed)
    run = torch.randint(train.FIRST_WORD_ID, len(tok), (batch, n), generator=g)
    x = torch.cat([torch.full((batch, 1), tok.bos_id), run, run], 1)
    if kind == "arm":
        logits = model(x[:, :-1])
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1), reduction="none").view(batch, -1)
        return float(ce[:, n + 1:].mean())  # predictions of the second run after its first token
    masked = torch.zeros_like(x, dtype=torch.bool)
    masked[:, n + 1:] = torch.rand(batch, n, generator=g) < 0.3
    masked[:, n + 1] |= ~masked[:, n + 1:].any(1)  # at least one per row
    logits = model(x.masked_fill(masked, tok.mask_id))
    if kind == "dream":
        logits = shift_logits(logits)
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x.reshape(-1), reduction="none").view(x.shape)
    return float(ce[masked].mean())


@torch.no_grad()
def repeated_bigram_loss(model: train.TinyLM, tok: Tokenizer, docs: int = 40, seed: int = 7) -> tuple[float, float]:
    w = worldlib.World(1234)
    rng = random.Random(seed)
    rep, other = [], []
    for _ in range(docs):
        ids = [tok.bos_id] + tok.encode(w.lm_document(rng, fresh=True))
        x = torch.tensor([ids])
        ce = F.cross_entropy(model(x)[0, :-1], x[0, 1:], reduction="none")
        for t in range(1, len(ids) - 1):  # target ids[t + 1]
            seen = any(ids[j] == ids[t] and ids[j + 1] == ids[t + 1] for j in range(t))
            (rep if seen else other).append(float(ce[t]))
    return sum(rep) / len(rep), sum(other) / len(other)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, choices=list(train.MODELS))
    ap.add_argument("--run-dir", help="default training/runs/<model>")
    ap.add_argument("--ckpt", help="a ckpt.pt or final-state.pt (default: the run's ckpt.pt, else final-state.pt)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    run = a.run_dir or os.path.join(train.RUNS, a.model)
    path = a.ckpt or next((p for p in (os.path.join(run, "ckpt.pt"), os.path.join(run, "final-state.pt")) if os.path.exists(p)), None)
    if path is None:
        sys.exit(f"{run}: expected ckpt.pt or final-state.pt, found neither (train first, or pass --ckpt)")
    model, kind, tok, step = load(a.model, path)
    out = {"model": a.model, "checkpoint": path, "step": step, "chance": round(float(torch.log(torch.tensor(float(len(tok))))), 3),
           "copy_second_run_loss": round(copy_loss(model, kind, tok), 3)}
    if kind == "arm":
        rep, other = repeated_bigram_loss(model, tok)
        out.update({"repeated_bigram_loss": round(rep, 3), "other_token_loss": round(other, 3)})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
