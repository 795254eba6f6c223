"""Train the embedded tiny models (tiny-llama, tiny-qwen, tiny-llada, tiny-dream) on the synthetic world.

    /usr/bin/python3 training/train.py --model tiny-qwen            # one model, resumable
    /usr/bin/python3 training/train.py --smoke --out /tmp/smoke     # a few steps of all four (CI)
    training/run_all.sh                                             # the documented full run (background)

Each run lives in training/runs/<model>/ (gitignored): ckpt.pt (resumable: weights, optimiser, step),
metrics.csv (train loss per log step), eval.csv (validation curves), status.json, and at the end
final/ (the real on-disk format, written by training/hf_formats.py) + summary.json.
Running the same command again resumes from ckpt.pt. Everything is seeded per step, so a resumed run
draws the same batches and masks as an uninterrupted one.

Objectives (all see the same example stream for the same seed; see training/README.md):
  arm    (tiny-llama, tiny-qwen): next-token loss on every token + an extra loss on the answer tokens.
  llada  (tiny-llada): masked diffusion from scratch. QA batches: the prompt is never masked; the answer
         region (answer + <eos> padding to a random length ≤ 8) is masked with ratio t ~ U(ε, 1), at least
         one token; loss = Σ CE / t / |region|. Plain-text batches: every token but <bos> masked with
         ratio t; loss = Σ CE / t / |sequence|.
  dream  (tiny-dream): the same objective with Dream's shifted logits (position i predicted from the
         output at i-1), starting from tiny-qwen's final weights.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate as ev  # noqa: E402
import hf_formats  # noqa: E402
import world as worldlib  # noqa: E402
from model import ModelConfig, TinyLM, shift_logits  # noqa: E402
from tokenizer import Tokenizer, save as tokenizer_files, user_content  # noqa: E402

# Per-model recipe: architecture facts of the family + the training settings that differ from DEFAULTS
# (precedence: DEFAULTS < MODELS[name]["hp"] < command line).
MODELS = {
    "tiny-llama": {"family": "llama", "kind": "arm", "rope_theta": 500000.0, "eps": 1e-5, "bias": False,
                   "hp": {"steps": 4200}},
    "tiny-qwen": {"family": "qwen2", "kind": "arm", "rope_theta": 1000000.0, "eps": 1e-6, "bias": True,
                  "hp": {"steps": 4200}},
    # From scratch, the hard one: the longest budget and more plain-text (restatement) batches, whose
    # whole-sequence masking gives a dense copy signal.
    "tiny-llada": {"family": "llada", "kind": "llada", "rope_theta": 500000.0, "eps": 1e-5, "bias": False,
                   "hp": {"steps": 5500, "p_lm": 0.3, "copy_warmup": 2300}},
    # Dream recipe: start from the finished tiny-qwen, train the shifted-logit MDM objective briefly.
    "tiny-dream": {"family": "dream", "kind": "dream", "rope_theta": 1000000.0, "eps": 1e-6, "bias": True,
                   "init_from": "tiny-qwen", "hp": {"steps": 800, "lr": 1e-3, "warmup": 50, "copy_warmup": 0,
                                                     "k_curriculum": 0.0}},
}
DEFAULTS = {"steps": 2400, "batch": 32, "lr": 2e-3, "warmup": 100, "min_lr_frac": 0.1, "wd": 0.1,
            "p_lm": 0.25, "k_max": 9, "mdm_eps": 0.02, "gen_max": 8, "seed": 1234, "world_seed": 1234,
            "eval_every": 300, "eval_n": 100, "ckpt_minutes": 4.0, "log_every": 20,
            "hidden": 128, "layers": 6, "heads": 4, "ffn": 344, "k_curriculum": 0.2, "tied": 1, "fresh": 1,
            "rope_theta": 0.0, "p_same": 0.5, "p_copy": 0.1,
            "copy_warmup": 1500}
RUNS = os.path.join(HERE, "runs")
FIRST_WORD_ID = 8  # ids below are special tokens (<pad> … <|end|>, training/README.md)


# ----------------------------------------------------------------------------- data

def make_batch(w: worldlib.World, tok: Tokenizer, hp: dict, step: int, kind: str, split: str = "train") -> dict:
    """The batch of `step`: a pure function of (seed, step). Returns ids [B,T] (padded with <pad>),
    region [B,T] (answer region for QA, all non-<bos> tokens for plain text, for MDMs only the second run of a
    copy batch), answer [B,T] (answer + <eos>),
    is_lm (bool: a plain-text or copy batch, i.e. not QA), k (distractors)."""
    rng = random.Random(f"{hp['seed']}:{split}:{step}")
    B = hp["batch"]
    seqs, regions, answers = [], [], []
    u = rng.random()
    # Copy warm-up: the first steps are copy batches only (mixed in from the start, 25 % of batches did not
    # seed copying within 1,000 steps); afterwards a share p_copy keeps the skill exercised.
    is_copy = (u < hp.get("p_copy", 0.0) or step < hp.get("copy_warmup", 0)) and split == "train"
    is_lm = is_copy or u < hp.get("p_copy", 0.0) + hp["p_lm"]
    k_max = hp["k_max"]
    if hp.get("k_curriculum", 0) > 0 and split == "train":
        after = max(0, step - hp.get("copy_warmup", 0))  # the curriculum starts when the copy warm-up ends
        k_max = min(hp["k_max"], int(hp["k_max"] * after / (hp["k_curriculum"] * hp["steps"])))
    k = rng.randint(0, k_max)
    fresh = bool(hp.get("fresh", 0)) and split == "train"
    for _ in range(B):
        if is_copy:
            # A run of random world words, then the same run again: the plainest copy signal. Without it
            # no induction formed in 1,500 steps on the world text alone (loss on repeated name bigrams
            # stayed at chance); the model learns to copy first, then to read.
            run = [rng.randrange(FIRST_WORD_ID, len(tok)) for _ in range(rng.randint(6, 24))]
            ids = [tok.bos_id] + run + run + [tok.eos_id]
            seqs.append(ids)
            # MDMs: only the second run (+ <eos>) is masked, as an answer after a prompt — masking both runs
            # at ratio t left nothing to copy from at large t, and no copying formed in 1,000 steps.
            first = 1 if kind == "arm" else 1 + len(run)
            regions.append([0] * first + [1] * (len(ids) - first))
            answers.append([0] * len(ids))
            continue
        if is_lm:
            ids = [tok.bos_id] + tok.encode(w.lm_document(rng, split, fresh=fresh, p_same=hp.get("p_same", 0.0))) + [tok.eos_id]
            seqs.append(ids)
            regions.append([0] + [1] * (len(ids) - 1))
            answers.append([0] * len(ids))
            continue
        r = w.qa_example(rng, split, k, fresh=fresh)
        p = tok.encode(tok.chat(user_content([c["text"] for c in r["ctxs"]], r["question"])))
        a = tok.encode(r["answers"][0])
        if kind == "arm":
            tail = a + [tok.eos_id]
        else:  # MDM: answer + <eos> padding to a random canvas length, as LLaDA's SFT pads with EOS
            g = rng.randint(len(a) + 1, max(len(a) + 1, hp["gen_max"]))
            tail = a + [tok.eos_id] * (g - len(a))
        seqs.append(p + tail)
        regions.append([0] * len(p) + [1] * len(tail))
        answers.append([0] * len(p) + [1] * (len(a) + 1) + [0] * (len(tail) - len(a) - 1))
    T = max(len(s) for s in seqs)
    pad = lambda xs, v: [x + [v] * (T - len(x)) for x in xs]  # noqa: E731
    return {"ids": torch.tensor(pad(seqs, tok.pad_id)), "region": torch.tensor(pad(regions, 0)).bool(),
            "answer": torch.tensor(pad(answers, 0)).bool(), "is_lm": is_lm, "k": k,
            "tokens": sum(len(s) for s in seqs)}


# ----------------------------------------------------------------------------- objectives

def arm_loss(model: TinyLM, b: dict, tok: Tokenizer) -> torch.Tensor:
    ids = b["ids"]
    logits = model(ids[:, :-1])
    tgt = ids[:, 1:]
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), reduction="none").view(tgt.shape)
    valid = (tgt != tok.pad_id).float()
    loss = (ce * valid).sum() / valid.sum()
    ans = b["answer"][:, 1:].float()
    if ans.sum() > 0:
        loss = loss + (ce * ans).sum() / ans.sum()
    return loss


def mdm_loss(model: TinyLM, b: dict, tok: Tokenizer, hp: dict, step: int, shift: bool) -> torch.Tensor:
    ids, region = b["ids"], b["region"]
    g = torch.Generator().manual_seed(hp["seed"] * 1_000_003 + step)
    B, T = ids.shape
    t = hp["mdm_eps"] + (1 - hp["mdm_eps"]) * torch.rand(B, 1, generator=g)
    masked = (torch.rand(B, T, generator=g) < t) & region
    # At least one masked token per sequence (a sequence with none would teach nothing).
    none = ~masked.any(1)
    if none.any():
        r = torch.rand(B, T, generator=g).masked_fill(~region, -1.0)
        first = r.argmax(1)
        masked[none, first[none]] = True
    x = ids.masked_fill(masked, tok.mask_id)
    key_pad = ids == tok.pad_id
    logits = model(x, key_pad)
    if shift:
        logits = shift_logits(logits)
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1), reduction="none").view(B, T)
    per = (ce * masked.float()).sum(1) / t[:, 0] / region.float().sum(1)
    return per.mean()


def loss_for(model, kind, b, tok, hp, step):
    if kind == "arm":
        return arm_loss(model, b, tok)
    return mdm_loss(model, b, tok, hp, step, shift=(kind == "dream"))


# ----------------------------------------------------------------------------- run

def lr_at(hp: dict, step: int) -> float:
    if step < hp["warmup"]:
        return hp["lr"] * (step + 1) / hp["warmup"]
    p = (step - hp["warmup"]) / max(1, hp["steps"] - hp["warmup"])
    return hp["lr"] * (hp["min_lr_frac"] + (1 - hp["min_lr_frac"]) * 0.5 * (1 + math.cos(math.pi * min(1.0, p))))


def model_config(name: str, hp: dict, vocab: int) -> ModelConfig:
    m = MODELS[name]
    return ModelConfig(vocab_size=vocab, hidden=hp["hidden"], layers=hp["layers"], heads=hp["heads"],
                       ffn=hp["ffn"], rope_theta=hp.get("rope_theta") or m["rope_theta"], rms_norm_eps=m["eps"],
                       causal=(m["kind"] == "arm"), qkv_bias=m["bias"], tied=bool(hp.get("tied", 0)))


def _atomic_json(path: str, obj) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


def _history(run_dir: str, event: dict) -> None:
    """history.jsonl: when the run started and every resume (the card reports changed schedules)."""
    event = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **event}
    with open(os.path.join(run_dir, "history.jsonl"), "a") as f:
        f.write(json.dumps(event) + "\n")


def _append_csv(path: str, row: dict) -> None:
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(row))
        if new:
            wr.writeheader()
        wr.writerow(row)


def export(model: TinyLM, name: str, tok: Tokenizer, out_dir: str) -> list[str]:
    """Write the model in its family's real on-disk format (training/hf_formats.py). Always untied, as the
    real 7–8B checkpoints are: a model trained with a tied head gets the embedding copied into lm_head."""
    fam = MODELS[name]["family"]
    hp = {"num_attention_heads": model.c.heads, "num_key_value_heads": model.c.heads,
          "rope_theta": model.c.rope_theta, "rms_norm_eps": model.c.rms_norm_eps,
          "max_position_embeddings": model.c.max_positions, "bos_token_id": tok.bos_id,
          "eos_token_id": tok.eos_id, "pad_token_id": tok.pad_id,
          "tie_word_embeddings": False}
    if fam in ("llada", "dream"):
        hp["mask_token_id"] = tok.mask_id
    return hf_formats.save_checkpoint(out_dir, fam, model.canonical_weights(), hp, dtype="f32",
                                      tokenizer_files=tokenizer_files(tok, out_dir))


def train(name: str, hp: dict, run_dir: str, log=print) -> dict:
    torch.set_num_threads(1)
    kind = MODELS[name]["kind"]
    os.makedirs(run_dir, exist_ok=True)
    w = worldlib.World(hp["world_seed"])
    tok = Tokenizer(w.words())
    torch.manual_seed(hp["seed"])
    model = TinyLM(model_config(name, hp, len(tok)))
    init_from = MODELS[name].get("init_from")
    ckpt_path = os.path.join(run_dir, "ckpt.pt")
    decay = [p for n, p in model.named_parameters() if p.dim() == 2 and "embed" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() == 2 and "embed" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": hp["wd"]}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=hp["lr"], betas=(0.9, 0.95))
    step, tokens, elapsed = 0, 0, 0.0
    if os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, tokens, elapsed = ck["step"], ck["tokens"], ck["elapsed"]
        log(f"[{name}] resumed at step {step}")
        # Record what the resume changed (a longer schedule, a longer copy warm-up…): the card lists it.
        prev_path = os.path.join(run_dir, "hparams.json")
        prev = json.load(open(prev_path)) if os.path.exists(prev_path) else {}
        changed = {k: [prev.get(k), v] for k, v in hp.items() if k in prev and prev[k] != v}
        _history(run_dir, {"event": "resume", "step": step, "steps_total": hp["steps"], "changed": changed})
    else:
        _history(run_dir, {"event": "start", "step": 0, "steps_total": hp["steps"]})
    if step == 0 and init_from:
        src = hp.get("init_path") or os.path.join(os.path.dirname(run_dir), init_from, "final-state.pt")
        sd = torch.load(src)
        model.load_state_dict(sd)
        log(f"[{name}] initialised from {src}")
    _atomic_json(os.path.join(run_dir, "hparams.json"), {"model": name, **{k: v for k, v in MODELS[name].items() if k != "hp"}, **hp})
    val = worldlib.eval_records(w, "val", hp["eval_n"], hp["world_seed"]) if hp["eval_n"] else []
    val_batches = [make_batch(w, tok, {**hp, "batch": 16}, i, kind, split="val") for i in range(4)]
    last_ckpt = time.time()
    t_start = time.time() - elapsed

    def save_ckpt():
        tmp = ckpt_path + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "tokens": tokens,
                    "elapsed": time.time() - t_start}, tmp)
        os.replace(tmp, ckpt_path)

    def do_eval():
        model.eval()
        with torch.no_grad():
            vl = sum(float(loss_for(model, kind, b, tok, hp, 10_000_000 + i)) for i, b in enumerate(val_batches)) / 4
        res = ev.evaluate(model, kind, tok, val, ["oracle", "gold_4", "closed_book"]) if val else {}
        row = {"step": step, "tokens": tokens, "minutes": round((time.time() - t_start) / 60, 2), "val_loss": round(vl, 4)}
        for s, r in res.items():
            row[f"{s}_acc"] = round(r["accuracy"], 4)
        _append_csv(os.path.join(run_dir, "eval.csv"), row)
        log(f"[{name}] eval {row}")
        model.train()
        return row

    model.train()
    run_loss, n_loss = 0.0, 0
    while step < hp["steps"]:
        if hp["eval_every"] and step % hp["eval_every"] == 0 and step > 0:
            do_eval()
        for gparam in opt.param_groups:
            gparam["lr"] = lr_at(hp, step)
        b = make_batch(w, tok, hp, step, kind)
        loss = loss_for(model, kind, b, tok, hp, step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens += b["tokens"]
        run_loss += float(loss)
        n_loss += 1
        if step % hp["log_every"] == 0 or step == hp["steps"]:
            row = {"step": step, "tokens": tokens, "minutes": round((time.time() - t_start) / 60, 2),
                   "lr": round(lr_at(hp, step - 1), 6), "loss": round(run_loss / n_loss, 4)}
            _append_csv(os.path.join(run_dir, "metrics.csv"), row)
            _atomic_json(os.path.join(run_dir, "status.json"), {"model": name, "state": "training",
                                                                "steps_total": hp["steps"], **row})
            run_loss, n_loss = 0.0, 0
        if time.time() - last_ckpt > hp["ckpt_minutes"] * 60:
            save_ckpt()
            last_ckpt = time.time()
    save_ckpt()
    final = do_eval() if hp["eval_every"] else {}
    torch.save(model.state_dict(), os.path.join(run_dir, "final-state.pt"))
    export(model, name, tok, os.path.join(run_dir, "final"))
    summary = {"model": name, "family": MODELS[name]["family"], "objective": kind, "init_from": init_from,
               "parameters": model.n_params(), "steps": step, "batch": hp["batch"], "tokens": tokens,
               "minutes": round((time.time() - t_start) / 60, 1), "final_val": final,
               "hparams": hp, "torch": torch.__version__}
    _atomic_json(os.path.join(run_dir, "summary.json"), summary)
    _atomic_json(os.path.join(run_dir, "status.json"), {"model": name, "state": "done", "step": step,
                                                        "tokens": tokens, "minutes": summary["minutes"]})
    log(f"[{name}] done: {summary['minutes']} min, {tokens} tokens")
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=list(MODELS))
    ap.add_argument("--run-dir", help="default training/runs/<model>")
    ap.add_argument("--smoke", action="store_true", help="a few steps of all four models into --out")
    ap.add_argument("--out", help="smoke output folder (default: a temp dir)")
    for k, v in DEFAULTS.items():
        ap.add_argument("--" + k.replace("_", "-"), type=type(v), default=None)
    ap.add_argument("--init-path", help="tiny-dream: weights to start from (default runs/tiny-qwen/final-state.pt)")
    a = ap.parse_args()
    hp = dict(DEFAULTS)
    if a.model and not a.smoke:
        hp.update(MODELS[a.model]["hp"])
    for k in DEFAULTS:
        v = getattr(a, k)
        if v is not None:
            hp[k] = v
    if a.init_path:
        hp["init_path"] = a.init_path
    if a.smoke:
        out = a.out or tempfile.mkdtemp(prefix="tiny-smoke-")
        hp.update({"steps": 6, "batch": 4, "warmup": 2, "eval_every": 3, "eval_n": 3, "log_every": 2,
                   "copy_warmup": 2})  # copy batches first, then the mixture: every batch kind runs
        t0 = time.time()
        for name in ("tiny-qwen", "tiny-dream", "tiny-llama", "tiny-llada"):
            rd = os.path.join(out, name)
            if os.path.exists(rd):
                shutil.rmtree(rd)
            mhp = {**hp, **{k: v for k, v in MODELS[name]["hp"].items() if k not in ("steps", "copy_warmup")}}
            mhp.update({"steps": 6, "warmup": 2})
            train(name, mhp, rd)
        print(json.dumps({"smoke": out, "seconds": round(time.time() - t0, 1)}))
        return
    if not a.model:
        ap.error("--model is required (or --smoke)")
    train(a.model, hp, a.run_dir or os.path.join(RUNS, a.model))


if __name__ == "__main__":
    main()
