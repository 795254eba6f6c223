"""Torch-side evaluation of the tiny models: decoders (greedy ARM, LLaDA low-confidence remasking, Dream
entropy-ordered with shifted logits), the paper's QA metrics, and a loader for the saved HF-format folders.

These numbers are "evaluated by the training framework"; the model cards say so. The reference evaluation
is the TypeScript engine + samplers (pending).

    /usr/bin/python3 training/evaluate.py --model models/tiny-qwen --data models/world/eval-heldout.jsonl.gz \
        --out training/runs/eval/tiny-qwen.json
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import ModelConfig, TinyLM, shift_logits  # noqa: E402
from tokenizer import Tokenizer, user_content  # noqa: E402
from qa_metrics import accuracy, exact, f1, normalize  # noqa: E402,F401

SETTINGS = {"closed_book": None, "oracle": 0, "gold_4": 4, "gold_9": 9}


# ----------------------------------------------------------------------------- metrics (paper §10)

# ----------------------------------------------------------------------------- prompts

def passages_for(rec: dict, setting: str, index: int) -> list[str] | None:
    """The passages of one eval record for a setting. ctxs[0] is gold; the gold goes at position
    index % (k+1) among the first k distractors, so every position is covered across the set."""
    k = SETTINGS[setting]
    if k is None:
        return None
    gold = rec["ctxs"][0]["text"]
    ds = [c["text"] for c in rec["ctxs"][1:1 + k]]
    pos = index % (k + 1)
    return ds[:pos] + [gold] + ds[pos:]


def prompt_ids(tok: Tokenizer, question: str, passages: list[str] | None) -> list[int]:
    return tok.encode(tok.chat(user_content(passages or [], question)))


# ----------------------------------------------------------------------------- decoders

@torch.no_grad()
def greedy_arm(model: TinyLM, ids: list[int], eos: int, max_new: int = 6) -> list[int]:
    x = list(ids)
    out = []
    for _ in range(max_new):
        logits = model(torch.tensor([x]))[0, -1]
        t = int(logits.argmax())
        if t == eos:
            break
        out.append(t)
        x.append(t)
    return out


@torch.no_grad()
def mdm_decode(model: TinyLM, ids: list[int], mask_id: int, eos: int, gen: int = 4, shift: bool = False) -> list[int]:
    """One block of `gen` masks, `gen` steps. LLaDA (shift=False): low-confidence remasking, one token per
    step (paper §3.1, τ=0). Dream (shift=True): logits shifted right by one, entropy confidence, transfer
    floor(m·(1−s/t)) per step with t = linspace(1, 1e-3, steps+1), the rest at the last step (§3.2, τ=0)."""
    x = torch.tensor([list(ids) + [mask_id] * gen])
    steps = gen
    ts = torch.linspace(1, 1e-3, steps + 1)
    for i in range(steps):
        m = x[0] == mask_id
        nm = int(m.sum())
        if nm == 0:
            break
        logits = model(x)
        if shift:
            logits = shift_logits(logits)
        p = torch.softmax(logits[0].double(), dim=-1)
        conf, x0 = p.max(-1)
        if shift:
            n = nm if i == steps - 1 else int(nm * (1 - ts[i + 1] / ts[i]))
            conf = (p * torch.log(p + 1e-10)).sum(-1)  # negative entropy
        else:
            n = 1  # gen == steps, one block: floor(m/s) + remainder = 1 per step
        conf = torch.where(m, conf, torch.full_like(conf, float("-inf")))
        if n > 0:
            idx = torch.topk(conf, n).indices
            x[0, idx] = x0[idx]
    out = []
    for t in x[0, len(ids):].tolist():
        if t == eos:
            break
        out.append(t)
    return out


def generate(model: TinyLM, kind: str, tok: Tokenizer, ids: list[int]) -> list[int]:
    if kind == "arm":
        return greedy_arm(model, ids, tok.eos_id)
    return mdm_decode(model, ids, tok.mask_id, tok.eos_id, shift=(kind == "dream"))


def evaluate(model: TinyLM, kind: str, tok: Tokenizer, records: list[dict], settings=None) -> dict:
    """{setting: {n, accuracy, f1, exact_match}} on the records (values in [0, 1])."""
    model.eval()
    res = {}
    for s in settings or list(SETTINGS):
        acc = f = em = 0.0
        for i, r in enumerate(records):
            pred = tok.decode(generate(model, kind, tok, prompt_ids(tok, r["question"], passages_for(r, s, i))))
            acc += max(accuracy(pred, g) for g in r["answers"])
            f += max(f1(pred, g) for g in r["answers"])
            em += max(exact(pred, g) for g in r["answers"])
        n = len(records)
        res[s] = {"n": n, "accuracy": acc / n, "f1": f / n, "exact_match": em / n}
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


# ----------------------------------------------------------------------------- HF folder → TinyLM

def load_hf(model_dir: str) -> tuple[TinyLM, str, Tokenizer]:
    """Load a saved tiny model from its real on-disk format (proves the export round-trips)."""
    from hf_formats import read_safetensors
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    st, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    mt = cfg["model_type"]
    if mt == "llada":
        c = ModelConfig(vocab_size=cfg["vocab_size"], hidden=cfg["d_model"], layers=cfg["n_layers"],
                        heads=cfg["n_heads"], ffn=cfg["mlp_hidden_size"], rope_theta=cfg["rope_theta"],
                        rms_norm_eps=cfg["rms_norm_eps"], causal=False, qkv_bias=False,
                        tied=bool(cfg.get("weight_tying")))
        pre = "model.transformer."
        names = {"embed.weight": pre + "wte.weight", "final_norm.weight": pre + "ln_f.weight",
                 "lm_head.weight": pre + "ff_out.weight"}
        per = {"attn_norm.weight": "attn_norm.weight", "q.weight": "q_proj.weight", "k.weight": "k_proj.weight",
               "v.weight": "v_proj.weight", "o.weight": "attn_out.weight", "mlp_norm.weight": "ff_norm.weight",
               "gate.weight": "ff_proj.weight", "up.weight": "up_proj.weight", "down.weight": "ff_out.weight"}
        for i in range(c.layers):
            for a, b in per.items():
                names[f"layers.{i}.{a}"] = f"{pre}blocks.{i}.{b}"
        kind = "llada"
    else:
        bias = mt in ("qwen2", "Dream")
        c = ModelConfig(vocab_size=cfg["vocab_size"], hidden=cfg["hidden_size"], layers=cfg["num_hidden_layers"],
                        heads=cfg["num_attention_heads"], ffn=cfg["intermediate_size"], rope_theta=cfg["rope_theta"],
                        rms_norm_eps=cfg["rms_norm_eps"], causal=(mt != "Dream"), qkv_bias=bias,
                        tied=bool(cfg.get("tie_word_embeddings")))
        names = {"embed.weight": "model.embed_tokens.weight", "final_norm.weight": "model.norm.weight",
                 "lm_head.weight": "lm_head.weight"}
        per = {"attn_norm.weight": "input_layernorm.weight", "q.weight": "self_attn.q_proj.weight",
               "k.weight": "self_attn.k_proj.weight", "v.weight": "self_attn.v_proj.weight",
               "o.weight": "self_attn.o_proj.weight", "mlp_norm.weight": "post_attention_layernorm.weight",
               "gate.weight": "mlp.gate_proj.weight", "up.weight": "mlp.up_proj.weight",
               "down.weight": "mlp.down_proj.weight"}
        if bias:
            per.update({"q.bias": "self_attn.q_proj.bias", "k.bias": "self_attn.k_proj.bias",
                        "v.bias": "self_attn.v_proj.bias"})
        for i in range(c.layers):
            for a, b in per.items():
                names[f"layers.{i}.{a}"] = f"model.layers.{i}.{b}"
        kind = "dream" if mt == "Dream" else "arm"
    m = TinyLM(c)
    if c.tied:  # one tensor in the file; the module holds it under both names
        names["lm_head.weight"] = names["embed.weight"]
    sd = {a: torch.from_numpy(st[b]) for a, b in names.items()}
    missing = set(st) - set(names.values())
    if missing:
        raise ValueError(f"{model_dir}/model.safetensors: unexpected tensors {sorted(missing)[:3]}")
    m.load_state_dict(sd, strict=True)
    m.eval()
    tj = json.load(open(os.path.join(model_dir, "tokenizer.json")))
    vocab = tj["model"]["vocab"]
    tok = Tokenizer([w for w, _ in sorted(vocab.items(), key=lambda kv: kv[1])])
    if tok.vocab != vocab:
        raise ValueError(f"{model_dir}/tokenizer.json: vocabulary does not match the training tokenizer layout")
    return m, kind, tok


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=None)
    a = ap.parse_args()
    torch.set_num_threads(1)
    m, kind, tok = load_hf(a.model)
    recs = read_jsonl(a.data, a.limit)
    t0 = time.time()
    res = evaluate(m, kind, tok, recs)
    out = {"model": os.path.basename(os.path.normpath(a.model)), "data": os.path.basename(a.data),
           "evaluator": "training framework (torch, training/evaluate.py)",
           "decoder": {"arm": "greedy, max 6 new tokens, stop at <eos>",
                       "llada": "low-confidence remasking, 4 masks, 4 steps, one block, tau 0",
                       "dream": "shifted logits, entropy order, 4 masks, 4 steps, tau 0"}[kind],
           "results": res, "seconds": round(time.time() - t0, 1)}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".tmp", "w") as f:
        json.dump(out, f, indent=2)
    os.replace(a.out + ".tmp", a.out)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
