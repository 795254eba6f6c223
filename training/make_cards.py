"""Render models/<name>/README.md (the model card) from recorded JSON — never from typed numbers.

Inputs per model folder (all committed next to the weights):
    config.json          architecture (read as saved)
    training.json        written by training/publish.py from the run: summary, loss and validation curves
    eval-torch.json      held-out evaluation by the training framework (training/evaluate.py)
    eval-engine.json     optional: the same evaluation by floatscope's TypeScript engine and samplers;
                         when present it is the headline table and the torch numbers become a cross-check

    python3 training/make_cards.py            # all models/tiny-* folders that have training.json
    python3 training/make_cards.py tiny-qwen  # one
Both also rewrite the summary table between the tiny-models markers of the top-level README.md.

Plain Python (no torch), so any python3 can regenerate the cards.
"""
from __future__ import annotations

import json
import os
import sys

from escape import code_span, escape_markdown as md  # names and strings from the JSON files are user text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models")

FAMILY_TEXT = {
    "llama": ("LLaMA (`LlamaForCausalLM`, `model_type: llama`)", "causal decoder, no biases"),
    "qwen2": ("Qwen2 (`Qwen2ForCausalLM`, `model_type: qwen2`)", "causal decoder, q/k/v biases"),
    "llada": ("LLaDA (`LLaDAModelLM`, `model_type: llada`, OLMo-style tensor names)",
              "bidirectional masked-diffusion model, no biases"),
    "dream": ("Dream (`DreamModel`, `model_type: Dream`, Qwen2 tensor names)",
              "bidirectional masked-diffusion model, q/k/v biases, logits shifted by one"),
}
OBJECTIVE_TEXT = {
    "arm": "next-token prediction on every token, plus the same loss once more on the answer tokens",
    "llada": ("masked diffusion from scratch: QA examples mask only the answer region (answer + `<eos>` padding) "
              "with ratio t ~ U(ε, 1) and never the prompt; plain-text examples mask every token but `<bos>` with "
              "ratio t; cross-entropy on masked tokens weighted 1/t"),
    "dream": ("the same masked-diffusion objective with Dream's shifted logits (position i is predicted from the "
              "output at i−1), starting from the finished tiny-qwen weights"),
}
SETTING_TEXT = {"closed_book": "closed-book (no passage)", "oracle": "oracle passage only",
                "gold_4": "gold among 4 distractors", "gold_9": "gold among 9 distractors"}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _load(path: str):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def eval_table(ev: dict) -> list[str]:
    rows = ["| setting | n | accuracy % | F1 % | exact match % |", "|---|---|---|---|---|"]
    for s in ("closed_book", "oracle", "gold_4", "gold_9"):
        r = ev["results"].get(s)
        if r:
            rows.append(f"| {SETTING_TEXT[s]} | {r['n']} | {_pct(r['accuracy'])} | {_pct(r['f1'])} | "
                        f"{_pct(r['exact_match'])} |")
    return rows


def render(name: str) -> str:
    d = os.path.join(MODELS, name)
    cfg = _load(os.path.join(d, "config.json"))
    tr = _load(os.path.join(d, "training.json"))
    et = _load(os.path.join(d, "eval-torch.json"))
    ee = _load(os.path.join(d, "eval-engine.json"))
    if cfg is None or tr is None:
        raise FileNotFoundError(f"{d}: expected config.json and training.json (run training/publish.py), found none")
    s = tr["summary"]
    hp = s["hparams"]
    fam = s["family"]
    fam_name, fam_arch = FAMILY_TEXT[fam]
    if fam == "llada":
        arch = {"layers": cfg["n_layers"], "heads": cfg["n_heads"], "hidden": cfg["d_model"],
                "ffn": cfg["mlp_hidden_size"]}
    else:
        arch = {"layers": cfg["num_hidden_layers"], "heads": cfg["num_attention_heads"], "hidden": cfg["hidden_size"],
                "ffn": cfg["intermediate_size"]}
    L = ["---", "license: mit", "library_name: floatscope", f"tags: [floatscope, tiny, synthetic, {fam}]", "---", "",
         f"# {md(name)}", "",
         f"A miniature **{fam}**-format model trained by floatscope on a synthetic fact world, so that the notebooks "
         "run on a CPU and show real (if miniature) attention behaviour. It is an instrument, not a result: "
         "the numbers below describe this checkpoint only.", "",
         "## Model", "",
         "| | |", "|---|---|",
         f"| format | {fam_name} |",
         f"| architecture | {fam_arch}; pre-norm RMSNorm, RoPE (half-split), SwiGLU, "
         f"{'LM head tied to the embedding in training, written untied (as the real checkpoints)' if hp.get('tied') else 'untied LM head'} |",
         f"| parameters | {s['parameters']:,} |",
         f"| layers / heads / hidden / FFN | {arch['layers']} / {arch['heads']} / {arch['hidden']} / {arch['ffn']} |",
         f"| vocabulary | {cfg['vocab_size']} (word level, `tokenizer.json`) |",
         f"| RoPE θ / RMSNorm ε | {cfg['rope_theta']:g} / {cfg['rms_norm_eps']:g} |"]
    if cfg.get("mask_token_id") is not None:
        L.append(f"| mask token id | {cfg['mask_token_id']} (`<mask>`) |")
    L += [f"| weights | f32 `model.safetensors` |", "",
          "## Training", "",
          f"- Objective: {OBJECTIVE_TEXT[s['objective']]}.",
          f"- Data: the synthetic world (`models/world/world.json`, seed {hp['world_seed']}), "
          f"{'fresh people (below)' if hp.get('fresh') else 'training people only'}; "
          f"{100 * (1 - hp['p_lm'] - hp.get('p_copy', 0)):.0f} % of batches are QA examples (gold passage among "
          f"k ~ U{{0..{hp['k_max']}}} distractors at a random position), {100 * hp['p_lm']:.0f} % plain passages with "
          f"restated facts" + (f", {100 * hp['p_copy']:.0f} % copy batches" if hp.get("p_copy") else "") + ".",
          ]
    if hp.get("copy_warmup") or hp.get("p_copy"):
        L.append(f"- Copy batches (a run of 6–24 random world words, then the same run again"
                 + ("; masked-diffusion models mask only the second run" if s["objective"] != "arm" else "") + "): "
                 + (f"all of the first {hp['copy_warmup']:,} steps, then " if hp.get("copy_warmup") else "")
                 + f"{100 * hp.get('p_copy', 0):.0f} % of batches. They seed the copying circuit that reading "
                 "needs; on the world text alone it did not form (training/README.md).")
    if hp.get("p_same"):
        L.append(f"- Plain-text restatements repeat the sentence word for word with probability {hp['p_same']:g} "
                 "(else they use the other template).")
    if hp.get("fresh"):
        L.append("- Fresh people: every training example is about people drawn anew from the name pools (never a "
                 "validation or test person) with attributes drawn anew, so no fact can be memorised and reading "
                 "the passage is the only way to answer.")
    if hp.get("k_curriculum"):
        start = f"step {hp['copy_warmup']:,}" if hp.get("copy_warmup") else "the start"
        L.append(f"- Curriculum: the largest k grows linearly from 0 to {hp['k_max']} over "
                 f"{100 * hp['k_curriculum']:.0f} % of the steps, from {start} (oracle first).")
    if s.get("init_from"):
        L.append(f"- Initialised from {code_span(s['init_from'])}'s final weights.")
    if s["objective"] != "arm":
        L.append(f"- Mask ratio t ~ U({hp['mdm_eps']}, 1); answer region padded with `<eos>` to a random length ≤ "
                 f"{hp['gen_max']}.")
    for h in tr.get("history", [])[1:]:
        if h["event"] == "resume":
            changed = {k: v for k, v in h.get("changed", {}).items() if k != "steps"}
            what = "; ".join(f"{md(k)} {md(a)} → {md(b)}" for k, (a, b) in changed.items())
            L.append(f"- Interrupted and resumed at step {h['step']:,} ({md(h['time'])}) with a schedule of "
                     f"{h['steps_total']:,} steps in all (it started with {tr['history'][0]['steps_total']:,})"
                     + (f", changing {what}" if what else "") + "; the schedules follow the new settings from then on.")
    L += [f"- Steps: {s['steps']:,} of batch {s['batch']}; tokens seen: {s['tokens']:,}; wall time "
          f"{s['minutes']} min on one CPU thread (torch {md(s['torch'])}).",
          f"- Optimiser: AdamW (0.9, 0.95), lr {hp['lr']:g}, warmup {hp['warmup']}, cosine to {hp['min_lr_frac']:g}×, "
          f"weight decay {hp['wd']:g}, gradient clip 1.0; seed {hp['seed']}.",
          f"- Final training loss (mean of the last logged steps): {tr['loss_curve'][-1]['loss']:.4f}; "
          f"validation loss: {tr['val_curve'][-1]['val_loss']:.4f}." if tr.get("val_curve") else "",
          "", "### Learning curve (validation people, 100 questions, training-framework decoding)", "",
          "| step | tokens | minutes | val loss | oracle acc % | gold+4 acc % | closed-book acc % |",
          "|---|---|---|---|---|---|---|"]
    for r in tr.get("val_curve", []):
        L.append(f"| {r['step']} | {r['tokens']:,} | {r['minutes']} | {r['val_loss']:.4f} | "
                 f"{_pct(r.get('oracle_acc', 0))} | {_pct(r.get('gold_4_acc', 0))} | {_pct(r.get('closed_book_acc', 0))} |")
    L += ["", "## Evaluation (held-out people: never seen in training)", "",
          "Questions from `models/world/eval-heldout.jsonl.gz`; the gold passage sits at position i mod (k+1) of "
          "question i. Metrics as in the paper (§10): accuracy = normalised gold is a substring of the normalised "
          "response; token F1; exact match added.", ""]
    if ee:
        L += [f"**Evaluated by floatscope** ({md(ee.get('evaluator', 'TypeScript engine'))}; decoder: {md(ee.get('decoder', '?'))}):", ""]
        L += eval_table(ee) + [""]
    if et:
        head = "Cross-check, training framework" if ee else "Evaluated by the training framework (engine evaluation pending)"
        L += [f"**{head}** ({md(et['evaluator'])}; decoder: {md(et['decoder'])}):", ""]
        L += eval_table(et) + [""]
    L += ["## Prompt", "",
          "Exactly the layout of `training/README.md` (chat template in `tokenizer_config.json`):", "",
          "```", "<bos><|user|> Passage 1 : … Passage k : … Question : … ? <|end|><|assistant|>", "```", "",
          "The answer follows, then `<eos>`." + (" Masked-diffusion models are decoded on a canvas of `<mask>` "
                                                  "tokens after the prompt." if s["objective"] != "arm" else ""), "",
          f"Regenerate this card with {code_span('python3 training/make_cards.py ' + name)}.", ""]
    return "\n".join(x for x in L if x is not None)


def write(name: str) -> str:
    path = os.path.join(MODELS, name, "README.md")
    text = render(name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return path


START, END = "<!-- tiny-models:start -->", "<!-- tiny-models:end -->"


def summary_table() -> list[str]:
    """One row per published model: the engine's held-out accuracy (the card's headline numbers)."""
    rows = ["| model | objective | steps | oracle % | gold + 4 % | gold + 9 % | closed-book % | n |",
            "|---|---|---|---|---|---|---|---|"]
    for n in ("tiny-llama", "tiny-qwen", "tiny-llada", "tiny-dream"):
        tr = _load(os.path.join(MODELS, n, "training.json"))
        ee = _load(os.path.join(MODELS, n, "eval-engine.json"))
        if tr is None or ee is None:
            rows.append(f"| `{n}` | not published | | | | | | |")
            continue
        r = ee["results"]
        obj = {"arm": "causal LM", "llada": "masked diffusion, from scratch",
               "dream": "masked diffusion, from tiny-qwen"}[tr["summary"]["objective"]]
        rows.append(f"| [`{n}`](models/{n}/README.md) | {obj} | {tr['summary']['steps']:,} | "
                    + " | ".join(_pct(r[k]["accuracy"]) for k in ("oracle", "gold_4", "gold_9", "closed_book"))
                    + f" | {r['oracle']['n']} |")
    return rows


def write_readme_table(path: str = os.path.join(ROOT, "README.md")) -> bool:
    """Replace the block between the tiny-models markers in README.md; False when there are no markers."""
    text = open(path).read()
    if START not in text or END not in text:
        return False
    a, b = text.index(START) + len(START), text.index(END)
    text = text[:a] + "\n" + "\n".join(summary_table()) + "\n" + text[b:]
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return True


def main() -> None:
    names = sys.argv[1:] or sorted(n for n in os.listdir(MODELS)
                                   if os.path.exists(os.path.join(MODELS, n, "training.json")))
    for n in names:
        print(write(n))
    if write_readme_table():
        print(os.path.join(ROOT, "README.md") + " (tiny-models table)")


if __name__ == "__main__":
    main()
