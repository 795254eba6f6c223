"""The GPU check's one table: PyTorch's step (anchor.json) beside the floatscope engine's (engine-step.json),
per model shape and T, from the files bench/gpu/run.sh wrote into its output folder.

    python3 bench/gpu/table.py OUT_DIR        # prints markdown; run.sh also writes it to OUT_DIR/table.md

Columns are medians in ms (anchor.py and engine-step.ts say how each is timed). The engine's columns read
"blocked" with the reason underneath when it could not run (OUT_DIR/engine-blocked.txt), and "—" where
a configuration did not finish inside run.sh's time share. Only the standard library: it runs wherever
python3 does.
"""
from __future__ import annotations

import json
import os
import sys

ENGINE_SETS = [("none", "engine, no probes"), ("default", "engine, default probes"),
               ("head-mean maps, every layer", "engine, head-mean maps of every layer")]
ANCHOR_COLS = [("plain_sdpa", "PyTorch SDPA"), ("plain_eager", "PyTorch eager"),
               ("output_attentions", "eager output_attentions"), ("paper", "paper's per-layer re-forward")]


def family(name: str) -> str:
    """The shape a row belongs to, so that anchor rows ("LLaDA-8B") meet engine rows ("llada-8b", "gpu-tiny-llada")."""
    n = name.lower()
    return "llada" if "llada" in n else "dream" if "dream" in n else n


def load(path: str):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def table(out_dir: str) -> str:
    anchor = load(os.path.join(out_dir, "anchor.json")) or {"info": {}, "results": []}
    engine = load(os.path.join(out_dir, "engine-step.json"))
    blocked_path = os.path.join(out_dir, "engine-blocked.txt")
    blocked = open(blocked_path).read().strip() if os.path.exists(blocked_path) else None
    info = anchor["info"]
    ms = lambda r, k: f"{r[k]['ms']:.1f}" if isinstance(r.get(k), dict) and "ms" in r[k] else "—"  # noqa: E731
    eng = {}
    for r in (engine or {}).get("results", []):
        eng[(family(r["model"]), r["T"], r["probes"])] = r

    head = (f"GPU step: PyTorch {info.get('torch', '?')} ({info.get('dtype', '?')}) on {info.get('gpu') or info.get('device', '?')}"
            f" beside the floatscope engine"
            + (f" (onnxruntime-node {engine.get('onnxruntime', '?')} on {engine.get('device', '?')}, Node {engine.get('node', '?')})"
               if engine else ""))
    cols = [c for _, c in ANCHOR_COLS] + [c for _, c in ENGINE_SETS]
    lines = [head, "", "| model | T | " + " | ".join(f"{c} ms" for c in cols) + " |", "|---|---|" + "---|" * len(cols)]
    rows = [(r["model"], r["T"], r) for r in anchor["results"]]
    for name, T, r in rows:
        cells = [ms(r, k) for k, _ in ANCHOR_COLS]
        for key, _ in ENGINE_SETS:
            e = eng.get((family(name), T, key))
            cells.append("blocked" if blocked else f"{e['ms']:.1f}" if e else "—")
        lines.append(f"| {name} | {T} | " + " | ".join(cells) + " |")
    if not anchor["results"]:
        lines += ["", "PyTorch anchor: no results (anchor.json missing or empty; the run's stderr says why)."]
    if blocked:
        lines += ["", f"Engine not run: {blocked}"]
    elif engine is None:
        lines += ["", "Engine not run: no engine-step.json (run.sh stopped before it)."]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: python3 bench/gpu/table.py OUT_DIR (the folder bench/gpu/run.sh wrote)")
    print(table(sys.argv[1]))
