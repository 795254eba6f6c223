"""Does the base's first-token sink survive the switch to bidirectional attention?

For a few held-out oracle prompts, the share of attention that lands on position 0 (`<|im_start|>`),
averaged over heads and query positions, per layer, for:
- base (causal): SmolLM2-135M-Instruct as shipped, on the prompt;
- base (bidirectional): the same weights with the causal mask removed, prompt + 8 masks (no training);
- adapted MDM: base + delta, bidirectional, prompt + 8 masks, at every step of the Dream decoder
  (the canvas changes as tokens are written), so drift of the anchor across steps is visible;
- causal twin: base + its delta, on the prompt.
Also, per layer, the key position receiving the most attention (the anchor) and, for the MDM, whether it
moves across denoising steps. Uniform attention over T keys would give 1/T (causal: the mean of 1/(i+1)).

    /usr/bin/python3 training/real/attention.py --mdm DELTA --arm DELTA --n 4 --out training/real/attention.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import smol  # noqa: E402
import decode  # noqa: E402
from merge import adapted  # noqa: E402
from decode import read_jsonl  # noqa: E402


@torch.no_grad()
def profile(m, ids: list[int]) -> dict:
    """Per layer: mean attention on key 0, and the key with the largest mean received attention."""
    _, attns = m(torch.tensor([ids]), want_attn=True)
    share0, anchor, anchor_share = [], [], []
    for a in attns:  # [1, H, T, T]
        recv = a[0].mean(0).mean(0)  # mean over heads, then queries → attention received per key
        share0.append(round(float(recv[0]), 4))
        j = int(recv.argmax())
        anchor.append(j)
        anchor_share.append(round(float(recv[j]), 4))
    return {"share_pos0": share0, "anchor": anchor, "anchor_share": anchor_share, "T": len(ids)}


@torch.no_grad()
def mdm_steps(m, ids: list[int], gen: int = decode.GEN) -> list[dict]:
    """Profiles of the canvas at each Dream step (same schedule as decode.dream_decode)."""
    x = list(ids) + [smol.MASK_ID] * gen
    ts = decode.dream_timesteps(gen)
    out = []
    for i in range(gen):
        masked = [p for p, t in enumerate(x) if t == smol.MASK_ID]
        if not masked:
            break
        pr = profile(m, x)
        pr["step"] = i
        out.append(pr)
        logits = m(torch.tensor([x]))[0]
        p = torch.softmax(logits[[q - 1 for q in masked]].double(), -1)
        conf = (p * torch.log(p.clamp_min(1e-300))).sum(-1)
        tok = p.argmax(-1)
        n = len(masked) if i == gen - 1 else int(torch.tensor(len(masked), dtype=torch.float32) * (1 - ts[i + 1] / ts[i]))
        if n > 0:
            for j in torch.topk(conf, n).indices.tolist():
                x[masked[j]] = int(tok[j])
    return out


def mean_layers(profiles: list[dict]) -> list[float]:
    L = len(profiles[0]["share_pos0"])
    return [round(sum(p["share_pos0"][l] for p in profiles) / len(profiles), 3) for l in range(L)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mdm", required=True, help="MDM delta (safetensors)")
    ap.add_argument("--arm", required=True, help="causal twin delta (safetensors)")
    ap.add_argument("--data", default="models/world/eval-heldout.jsonl.gz")
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    recs = read_jsonl(a.data, a.n)
    mdm, tok, _, mmeta = adapted(a.mdm)
    arm, _, _, ameta = adapted(a.arm)
    base_c = smol.build(causal=True)[0].eval()
    base_b = smol.build(causal=False)[0].eval()
    prompts = [decode.prompt_ids(tok, r["question"], decode.passages_for(r, "oracle", i)) for i, r in enumerate(recs)]
    res = {"n_prompts": len(prompts), "prompt": "held-out oracle questions (models/world/eval-heldout.jsonl.gz)",
           "mdm_delta_step": mmeta.get("step"), "arm_delta_step": ameta.get("step"), "models": {}}
    runs = {"base_causal": [profile(base_c, p) for p in prompts],
            "base_bidirectional": [profile(base_b, p + [smol.MASK_ID] * decode.GEN) for p in prompts],
            "causal_twin": [profile(arm, p) for p in prompts]}
    steps = [mdm_steps(mdm, p) for p in prompts]
    runs["mdm_step0"] = [s[0] for s in steps]
    runs["mdm_last_step"] = [s[-1] for s in steps]
    canvases = {"base_causal": prompts, "causal_twin": prompts,
                "base_bidirectional": [p + [smol.MASK_ID] * decode.GEN for p in prompts],
                "mdm_step0": [p + [smol.MASK_ID] * decode.GEN for p in prompts], "mdm_last_step": None}
    for name, prof in runs.items():
        L = len(prof[0]["anchor"])
        ent = {"share_pos0_per_layer": mean_layers(prof),
               "anchor_per_layer": [p["anchor"] for p in prof],
               "anchor_share_per_layer": [round(sum(p["anchor_share"][l] for p in prof) / len(prof), 3) for l in range(L)],
               "T": [p["T"] for p in prof]}
        if canvases.get(name):  # the anchor's token, first prompt (tokens as the tokenizer spells them)
            ids0 = canvases[name][0]
            ent["anchor_token_prompt0"] = [tok.tk.id_to_token(ids0[j]) for j in prof[0]["anchor"]]
        res["models"][name] = ent
    # Anchor drift across the MDM's denoising steps: per prompt and layer, the distinct anchor positions.
    drift = []
    for s in steps:
        L = len(s[0]["anchor"])
        drift.append([sorted({st["anchor"][l] for st in s}) for l in range(L)])
    res["mdm_anchor_positions_across_steps"] = drift
    res["mdm_layers_with_moving_anchor"] = [sum(1 for d in pr if len(d) > 1) for pr in drift]
    res["mdm_steps_profiles"] = [[{"step": st["step"], "share_pos0": st["share_pos0"], "anchor": st["anchor"]}
                                  for st in s] for s in steps]
    with open(a.out + ".tmp", "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    os.replace(a.out + ".tmp", a.out)
    for name, v in res["models"].items():
        print(name, " ".join(f"{x:.2f}" for x in v["share_pos0_per_layer"]))
    print("MDM layers whose anchor moves across steps (per prompt):", res["mdm_layers_with_moving_anchor"])


if __name__ == "__main__":
    main()
