"""Render the numbers of training/real/README.md (between the `numbers` markers) from the recorded JSON:
models/<name>/training.json, models/<name>/eval-torch.json, training/real/attention.json and
training/real/verify-base.json. No number in that section is typed by hand.

    python3 training/real/card.py
"""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
# Questions, model answers, decoder names and token text are user text: escaped for Markdown.
from escape import code_span, escape_markdown as md  # noqa: E402
README = os.path.join(HERE, "README.md")
MODELS = [("smollm2-135m-dream-world", "Dream-style MDM"), ("smollm2-135m-causal-world", "causal twin")]
BEGIN, END = "<!-- numbers:begin (training/real/card.py) -->", "<!-- numbers:end -->"


def load(path: str):
    return json.load(open(path)) if os.path.exists(path) else None


def phase_steps(t: dict) -> list[int]:
    """Steps run in each phase of training.json's `phases`: to the next phase's first step, the last to `steps`.
    The batches of a step are a pure function of seed and step (phase 4: of its own step count), so two runs
    with the same steps by phase saw identical data."""
    starts = [p["from_step"] for p in t.get("phases") or [{"from_step": 0}]]
    # a phase listed twice (published while its continuation ran; see publish.phases) runs 0 steps: skip it
    return [b - a for a, b in zip(starts, starts[1:] + [t["steps"]]) if b > a]


def pct(x) -> str:
    return f"{100 * x:.0f} %"


def render() -> str:
    out = []
    v = load(os.path.join(HERE, "verify-base.json"))
    if v:
        out += ["### The base as dequantised here", "",
                f"Perplexity on the first {v['n_passages']} NQ-open gold passages (first 128 tokens each): "
                f"**{v['ppl_unpermuted']:.1f}** with the q/k rows un-permuted, {v['ppl_raw_gguf_order']:.1f} in the "
                f"GGUF's raw row order. Greedy answers from the chat template:", ""]
        out += [f"- {md(q)} → {md(a)}" for q, a in v["greedy"].items()] + [""]
    out += ["### Runs", "", "| model | objective | steps | steps by phase | examples | tokens | s / step (median) | train time | trainable params | delta file |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    infos = {}
    for name, label in MODELS:
        t = load(os.path.join(REPO, "models", name, "training.json"))
        if not t:
            continue
        infos[name] = t
        out.append(f"| `models/{name}` | {label} | {t['steps']} | {' + '.join(map(str, phase_steps(t)))} | "
                   f"{t['steps'] * t['batch']} | {t['tokens']:,} | "
                   f"{t['seconds_per_step_median']} | {t['train_seconds'] / 60:.0f} min | {t['trainable_params']:,} | "
                   f"{t['delta_bytes'] / 1e6:.1f} MB |")
    if infos:
        t = next(iter(infos.values()))
        out += ["", f"OpenBLAS core {t['blas_core']}, {t['threads']} thread per run, both runs side by side on a shared "
                "2-core machine (the seconds include that contention)."]
    out += ["", "### Held-out accuracy (test people, `models/world/eval-heldout.jsonl.gz`, torch decoders)", "",
            "Normalised substring accuracy (token F1 in brackets); n = questions, the first n of the file.", "",
            "| model | step | closed-book | oracle | gold + 4 | gold + 9 |", "|---|---|---|---|---|---|"]
    for name, label in MODELS:
        e = load(os.path.join(REPO, "models", name, "eval-torch.json"))
        if not e:
            continue
        cells = []
        for s in ("closed_book", "oracle", "gold_4", "gold_9"):
            r = e["results"].get(s)
            cells.append(f"{pct(r['accuracy'])} ({r['f1']:.2f}), n = {r['n']}" if r else "not measured")
        out.append(f"| {label} | {md(e.get('delta_step'))} | " + " | ".join(cells) + " |")
    out += ["", "Decoders: " + "; ".join(f"{label}: {md(load(os.path.join(REPO, 'models', n, 'eval-torch.json'))['decoder'])}"
                                      for n, label in MODELS if load(os.path.join(REPO, "models", n, "eval-torch.json")))]
    # phase 4 on: canvas sizes (`setting@G`) and long answers (eval_qa.py), shown only once measured
    extra = {}
    for name, label in MODELS:
        e = load(os.path.join(REPO, "models", name, "eval-torch.json"))
        if e:
            extra[label] = {s: r for s, r in e["results"].items() if "@" in s}
    cols = sorted({s for v in extra.values() for s in v}, key=lambda s: (s.startswith("long_"), s))
    if cols:
        out += ["", "Variable canvas and long answers (`setting@G`: G masks in G steps for the MDM; short settings: "
                "substring accuracy as above; `long_*`: `models/world/eval-heldout-long.jsonl.gz`, fact recall / "
                "precision of `training/qa_metrics.py`):", "",
                "| model | " + " | ".join(f"`{c}`" for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
        for label, res in extra.items():
            cells = []
            for c in cols:
                r = res.get(c)
                if not r:
                    cells.append("not measured")
                elif c.startswith("long_"):
                    cells.append(f"recall {pct(r['recall'])}, precision {pct(r['precision'])}, n = {r['n']}")
                else:
                    cells.append(f"{pct(r['accuracy'])} ({r['f1']:.2f}), n = {r['n']}")
            out.append(f"| {label} | " + " | ".join(cells) + " |")
    out += ["", "### Learning curves", "", "Validation oracle accuracy (validation people, the first n questions of "
            "`eval_records(world, \"val\", …)`, same decoders) and the training loss (mean of the steps since the "
            "previous row; k = distractors of the last step):", ""]
    for name, label in MODELS:
        t = infos.get(name)
        if not t:
            continue
        out += [f"{label}:", "", "| step | val oracle | n | mean loss | k |", "|---|---|---|---|---|"]
        prev = 0
        for step, acc, n in t["val_curve"]:
            seg = [l for s, l, _ in t["loss_curve"] if prev < s <= step]
            ks = [k for s, _, k in t["loss_curve"] if prev < s <= step]
            out.append(f"| {step} | {pct(acc)} | {n} | {sum(seg) / len(seg):.3f} | {ks[-1]} |" if seg
                       else f"| {step} | {pct(acc)} | {n} | – | – |")
            prev = step
        out.append("")
    at = load(os.path.join(HERE, "attention.json"))
    if at:
        mods = at["models"]
        names = [("base_causal", "base, causal"), ("base_bidirectional", "base, bidirectional (untrained)"),
                 ("mdm_step0", "MDM, step 0 (all masks)"), ("mdm_last_step", "MDM, last step"), ("causal_twin", "causal twin")]
        L = len(mods["base_causal"]["share_pos0_per_layer"])
        out += ["### Attention on the first token", "",
                f"Share of attention received by position 0 (`<|im_start|>`), mean over heads and queries, "
                f"{at['n_prompts']} held-out oracle prompts (MDM delta step {at['mdm_delta_step']}, causal twin step "
                f"{at['arm_delta_step']}); MDM canvases are prompt + 8 masks.", "",
                "| layer | " + " | ".join(lbl for _, lbl in names) + " |", "|---" * (len(names) + 1) + "|"]
        for layer in range(L):
            out.append(f"| {layer} | " + " | ".join(f"{mods[k]['share_pos0_per_layer'][layer]:.2f}" for k, _ in names) + " |")
        mean = {k: sum(mods[k]["share_pos0_per_layer"]) / L for k, _ in names}
        out.append("| mean | " + " | ".join(f"{mean[k]:.2f}" for k, _ in names) + " |")
        out += ["", "Where the attention goes instead: per layer, the most-attended key of the first prompt and its "
                "share (mean over heads and queries; mean share over the prompts):", "",
                "| layer | base, causal | base, bidirectional | MDM, step 0 | causal twin |", "|---|---|---|---|---|"]
        for layer in range(L):
            cells = []
            for k in ("base_causal", "base_bidirectional", "mdm_step0", "causal_twin"):
                mk = mods[k]
                cells.append(f"{code_span(mk['anchor_token_prompt0'][layer], table=True)} @{mk['anchor_per_layer'][0][layer]} "
                             f"({mk['anchor_share_per_layer'][layer]:.2f})")
            out.append(f"| {layer} | " + " | ".join(cells) + " |")
        moving = at["mdm_layers_with_moving_anchor"]
        out += ["", f"Layers (of {L}) whose most-attended key changes across the MDM's 8 denoising steps, per prompt: "
                f"{', '.join(str(x) for x in moving)}."]
        anchors0 = [sum(1 for a in row if a == 0) for row in mods["mdm_step0"]["anchor_per_layer"]]
        anchorsb = [sum(1 for a in row if a == 0) for row in mods["base_causal"]["anchor_per_layer"]]
        out += [f"Layers whose most-attended key is position 0, per prompt: base (causal) "
                f"{', '.join(map(str, anchorsb))}; MDM at step 0 {', '.join(map(str, anchors0))}.", ""]
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    text = open(README).read()
    i, j = text.index(BEGIN), text.index(END)
    text = text[: i + len(BEGIN)] + "\n\n" + render() + "\n" + text[j:]
    with open(README + ".tmp", "w") as f:
        f.write(text)
    os.replace(README + ".tmp", README)
    print("rendered", README)


if __name__ == "__main__":
    main()
