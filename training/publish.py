"""Turn a finished training run into a committed model: models/<name>/ + parity fixture + card.

    /usr/bin/python3 training/publish.py --model tiny-qwen [--runs training/runs] [--eval-limit N]

Steps: copy runs/<name>/final/ (the real on-disk format) into models/<name>/; record the run's summary and
curves in models/<name>/training.json; evaluate the *saved files* on the held-out set with the training
framework → models/<name>/eval-torch.json; write the parity fixture (training/fixtures.py); render the
evaluate again with floatscope's engine and samplers (scripts/eval-tiny-models.ts, the QA harness → eval-engine.json); render the
card (training/make_cards.py). Every number in the card comes from these JSON files.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate as ev  # noqa: E402
import fixtures  # noqa: E402
import make_cards  # noqa: E402

ROOT = os.path.dirname(HERE)
FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


def _csv(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    rows: dict[int, dict] = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            r = {k: (float(v) if k not in ("step", "tokens") else int(v)) for k, v in r.items() if v != ""}
            rows[r["step"]] = r  # a resumed run may log a step twice: keep the last
    return [rows[k] for k in sorted(rows)]


def _jsonl(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def _thin(rows: list[dict], n: int = 60) -> list[dict]:
    if len(rows) <= n:
        return rows
    idx = sorted({round(i * (len(rows) - 1) / (n - 1)) for i in range(n)})
    return [rows[i] for i in idx]


def publish(name: str, runs: str, eval_limit: int | None = None, out_root: str = ROOT,
            engine_eval: bool = True, torch_limit: int | None = 100) -> dict:
    run = os.path.join(runs, name)
    summary = json.load(open(os.path.join(run, "summary.json")))
    dst = os.path.join(out_root, "models", name)
    os.makedirs(dst, exist_ok=True)
    for f in FILES:
        src = os.path.join(run, "final", f)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(dst, f + ".tmp"))
            os.replace(os.path.join(dst, f + ".tmp"), os.path.join(dst, f))
    training = {"summary": summary, "loss_curve": _thin(_csv(os.path.join(run, "metrics.csv"))),
                "val_curve": _csv(os.path.join(run, "eval.csv")), "history": _jsonl(os.path.join(run, "history.jsonl"))}
    _dump(os.path.join(dst, "training.json"), training)
    import torch
    torch.set_num_threads(1)
    model, kind, tok = ev.load_hf(dst)
    # The torch evaluation is the cross-check of the engine's; the first `torch_limit` questions suffice.
    lim = min(x for x in (eval_limit, torch_limit) if x) if (eval_limit or torch_limit) else None
    recs = ev.read_jsonl(os.path.join(ROOT, "models", "world", "eval-heldout.jsonl.gz"), lim)
    t0 = time.time()
    res = ev.evaluate(model, kind, tok, recs)
    _dump(os.path.join(dst, "eval-torch.json"), {
        "model": name, "data": "models/world/eval-heldout.jsonl.gz",
        "evaluator": "training framework: torch, training/evaluate.py, weights loaded from the saved files",
        "decoder": {"arm": "greedy, at most 6 new tokens, stop at <eos>",
                    "llada": "LLaDA low-confidence remasking, 4 masks, 4 steps, one block, temperature 0",
                    "dream": "Dream shifted logits, entropy order, 4 masks, 4 steps, temperature 0"}[kind],
        "results": res, "seconds": round(time.time() - t0, 1)})
    fixtures.make(dst)
    if engine_eval:
        # The card's headline numbers: floatscope's engine + samplers on the same questions.
        cmd = ["npx", "tsx", os.path.join("scripts", "eval-tiny-models.ts"), "--models", name,
               "--models-dir", os.path.join(out_root, "models")]
        if eval_limit:
            cmd += ["--limit", str(eval_limit)]
        subprocess.run(cmd, cwd=ROOT, check=True)
    make_cards.write(name)
    if out_root == ROOT:  # the table reads models/ under the repository root
        make_cards.write_readme_table()
    return res


def _dump(path: str, obj) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, nargs="+")
    ap.add_argument("--runs", default=os.path.join(HERE, "runs"))
    ap.add_argument("--eval-limit", type=int, default=None)
    ap.add_argument("--torch-limit", type=int, default=100, help="questions for the torch cross-check (0 = all)")
    ap.add_argument("--no-engine-eval", action="store_true", help="skip scripts/eval-tiny-models.ts (needs node)")
    a = ap.parse_args()
    for m in a.model:
        print(m, json.dumps(publish(m, a.runs, a.eval_limit, engine_eval=not a.no_engine_eval,
                                    torch_limit=a.torch_limit or None)))


if __name__ == "__main__":
    main()
