"""Reference outputs of the training framework for the engine parity test.

For one saved model folder (models/tiny-*), run three fixed prompts through the torch model loaded from
that folder's real on-disk files and write

    test/fixtures/tiny-models/<name>.reference.safetensors   (f32)
        p{i}.logits                      [rows, vocab]  LM-head output aligned as floatscope's Engine returns
                                                        it: row i is the distribution of token i, so for Dream
                                                        the shift is applied (row i from hidden i−1, row 0
                                                        repeated); rows as listed in the inputs file
        p0.blocks.{l}.attn.pattern       [1, head, query, key]  softmax(QKᵀ/√d + mask) of layer l, prompt 0
    test/fixtures/tiny-models/<name>.inputs.json             ids, text and saved rows of each prompt

    /usr/bin/python3 training/fixtures.py --model models/tiny-qwen
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate as ev  # noqa: E402
import hf_formats  # noqa: E402
from model import shift_logits  # noqa: E402
from tokenizer import MASK, user_content  # noqa: E402

ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "test", "fixtures", "tiny-models")
EVAL = os.path.join(ROOT, "models", "world", "eval-heldout.jsonl.gz")


def prompts(tok) -> list[dict]:
    """Three fixed prompts built from the first held-out record (the same for every model)."""
    r = ev.read_jsonl(EVAL, 1)[0]
    gold = r["ctxs"][0]["text"]
    ds = [c["text"] for c in r["ctxs"][1:5]]
    u0 = user_content([gold], r["question"])
    u2 = user_content(ds[:2] + [gold] + ds[2:], r["question"])
    p0 = tok.chat(u0)
    p1 = p0 + " " + " ".join([MASK] * 4)
    p2 = tok.chat(u2, r["answers"][0])
    # `messages`: what the chat template renders into `text` (prompt 1 adds the masks by hand).
    out = []
    for i, (text, msgs, note) in enumerate([
            (p0, [{"role": "user", "content": u0}], "oracle QA prompt ending with the generation prompt <|assistant|>"),
            (p1, None, "prompt 0 followed by 4 <mask> tokens (the first MDM denoising step)"),
            (p2, [{"role": "user", "content": u2}, {"role": "assistant", "content": r["answers"][0]}],
             "gold passage 3rd among 4 distractors, answer and <eos> appended")]):
        ids = tok.encode(text)
        rows = [0, len(ids)] if i < 2 else [len(ids) - 8, len(ids)]
        out.append({"name": f"p{i}", "text": text, "messages": msgs, "add_generation_prompt": i == 0,
                    "ids": ids, "logits_rows": rows, "note": note})
    return out


def make(model_dir: str, out_dir: str = FIXTURES) -> str:
    torch.set_num_threads(1)
    name = os.path.basename(os.path.normpath(model_dir))
    model, kind, tok = ev.load_hf(model_dir)
    ps = prompts(tok)
    tensors = {}
    with torch.no_grad():
        for i, p in enumerate(ps):
            for l in model.layers:
                l.capture = i == 0
            logits = model(torch.tensor([p["ids"]]))
            if kind == "dream":  # align as the Engine contract does: row i = distribution of token i
                logits = shift_logits(logits)
            logits = logits[0]
            a, b = p["logits_rows"]
            tensors[f"{p['name']}.logits"] = logits[a:b].numpy()
            if i == 0:
                for li, l in enumerate(model.layers):
                    tensors[f"p0.blocks.{li}.attn.pattern"] = l.last_attn.numpy()
    for l in model.layers:
        l.capture = False
    os.makedirs(out_dir, exist_ok=True)
    hf_formats.write_safetensors(os.path.join(out_dir, f"{name}.reference.safetensors"), tensors, "f32",
                                 {"format": "pt", "model": name})
    meta = {"model": name, "model_dir": f"models/{name}", "kind": kind,
            "causal": model.c.causal, "logit_shift": 1 if kind == "dream" else 0,
            "logits": ("f32 LM-head output aligned like Engine.forward: row i is the distribution of token i; "
                       "for Dream that is the shifted output (row i from hidden state i-1, row 0 repeated)"),
            "tolerance": 1e-4, "generated_by": "training/fixtures.py (torch " + torch.__version__ + ")",
            "prompts": ps}
    path = os.path.join(out_dir, f"{name}.inputs.json")
    body = json.dumps({k: v for k, v in meta.items() if k != "prompts"}, indent=2)[:-2]
    body += ',\n  "prompts": [\n' + ",\n".join("    " + json.dumps(p) for p in ps) + "\n  ]\n}\n"
    json.loads(body)  # the hand-joined layout must stay valid JSON
    with open(path + ".tmp", "w") as f:
        f.write(body)
    os.replace(path + ".tmp", path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, nargs="+")
    ap.add_argument("--out", default=FIXTURES)
    a = ap.parse_args()
    for m in a.model:
        print(make(m, a.out))


if __name__ == "__main__":
    main()
