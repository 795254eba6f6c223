"""Self-checks of training/real that need neither the base model nor a long run (about a second):

    /usr/bin/python3 training/real/test_real.py

1. `unpermute_qk` inverts llama.cpp's q/k row permutation, written here from its definition (per head,
   rows in HF order [first half | second half] become interleaved pairs (h0, h1), (h2, h3), …).
2. The Dream decoder's transfer counts equal those of the upstream schedule recorded in
   test/fixtures/samplers/dream-schedule.json (torch, independent of this code).
3. A LoRA layer's merged weight gives the same output as the unmerged layer.
4. With a KV cache, causal decoding gives the same logits as the full forward pass (tiny random model).
5. Phase 4's canvas: the MDM's answer region is the answer + <|im_end|> padding to 8–64 slots
   (log-uniform), padding masked and predicted; the twin's loss covers answer + one <|im_end|>; the
   loss rows are the masked positions shifted by one; batches are reproducible and `--long-share 0`
   gives the earlier phases' batches; `--micro-batch` gives the whole batch's gradient.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.append(os.path.dirname(HERE))  # world.py; after HERE, so `import train` is training/real/train.py
import smol  # noqa: E402
import decode  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))


def test_unpermute() -> None:
    n_head, d, inp = 3, 8, 5
    hf = np.arange(n_head * d * inp, dtype=np.float32).reshape(n_head * d, inp)
    # llama.cpp order, from the definition: within each head, row 2j is HF row j, row 2j+1 is HF row j + d/2
    gg = np.empty_like(hf)
    for h in range(n_head):
        for j in range(d // 2):
            gg[h * d + 2 * j] = hf[h * d + j]
            gg[h * d + 2 * j + 1] = hf[h * d + j + d // 2]
    assert np.array_equal(smol.unpermute_qk(gg, n_head), hf), "unpermute_qk does not invert the GGUF row order"


def test_dream_counts() -> None:
    fx = json.load(open(os.path.join(REPO, "test", "fixtures", "samplers", "dream-schedule.json")))
    checked = 0
    for case in fx["cases"]:
        if case["eps"] != 1e-3 or case["masks"] != case["steps"]:
            continue
        ts = decode.dream_timesteps(case["steps"], case["eps"])
        assert np.allclose(ts.numpy(), case["timesteps"], atol=0), "timesteps differ"
        m, counts = case["masks"], []
        for i in range(case["steps"]):  # the same arithmetic as decode.dream_decode
            n = m if i == case["steps"] - 1 else int(torch.tensor(m, dtype=torch.float32) * (1 - ts[i + 1] / ts[i]))
            counts.append(n)
            m -= n
        assert counts == case["counts"], f"transfer counts {counts} != {case['counts']}"
        checked += 1
    assert checked > 0, "no fixture case checked"


def test_lora_merge() -> None:
    torch.manual_seed(0)
    lin = smol.LoRALinear(torch.randn(7, 5), rank=3, alpha=6.0)
    with torch.no_grad():
        lin.lora_B.normal_()
        x = torch.randn(4, 5)
        assert torch.allclose(lin(x), x @ lin.merged().t(), atol=1e-5), "merged LoRA weight differs"


def test_kv_cache() -> None:
    torch.manual_seed(0)
    hp = {"vocab_size": 50, "hidden": 16, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 24,
          "rope_theta": 1e4, "rms_norm_eps": 1e-5, "max_positions": 64}
    sd = {"model.embed_tokens.weight": torch.randn(50, 16), "model.norm.weight": torch.ones(16)}
    for i in range(2):
        p = f"model.layers.{i}."
        sd[p + "input_layernorm.weight"] = torch.ones(16)
        sd[p + "post_attention_layernorm.weight"] = torch.ones(16)
        for n, shape in (("q", (16, 16)), ("k", (8, 16)), ("v", (8, 16)), ("o", (16, 16)),
                         ("gate", (24, 16)), ("up", (24, 16)), ("down", (16, 24))):
            sd[p + smol.HF_LINEAR[n] + ".weight"] = torch.randn(*shape) * 0.3
    m = smol.SmolLM(sd, hp, causal=True).eval()
    ids = [3, 7, 1, 9, 4, 4, 2]
    with torch.no_grad():
        full = m(torch.tensor([ids]))[0]
        cache = [[] for _ in m.layers]
        first = m(torch.tensor([ids[:4]]), cache=cache)[0]
        rest = [m(torch.tensor([[t]]), cache=cache)[0, -1] for t in ids[4:]]
    got = torch.cat([first, torch.stack(rest)])
    assert torch.allclose(got, full, atol=1e-5), f"KV cache differs by {(got - full).abs().max():.2e}"


def _train():
    """training/real/train.py by path (decode.py puts training/ first on sys.path, where the tiny models'
    train.py lives)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("real_train", os.path.join(HERE, "train.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Args:
    """train.py's arguments as the phase-4 command sets them (only those make_batch / mdm_regions read)."""
    seed, batch, oracle_steps, k_every, k_top, oracle_share = 1234, 8, 40, 20, 4, 0.5
    canvas, long_share = "8-64", 0.0


class _Tok:
    """A stand-in tokenizer: one id per word (its length), so no base model is needed."""
    chat = staticmethod(smol.Tok.chat)

    @staticmethod
    def encode(text):
        return [len(w) for w in text.split()]


def test_canvas_length() -> None:
    import random
    train = _train()
    rng = random.Random(0)
    # the earlier phases' rule, unchanged: [n + 1, max(8, n + 1)]
    assert {train.canvas_length(rng, 3, None) for _ in range(400)} == set(range(4, 9))
    assert {train.canvas_length(rng, 9, None) for _ in range(50)} == {10}
    short = [train.canvas_length(rng, 3, (8, 64)) for _ in range(3000)]
    assert min(short) == 8 and max(short) == 64
    # log-uniform over [8, 64]: about a third in each octave (uniform would put 9/57 = 16 % at ≤ 16)
    for lo, hi in ((8, 16), (17, 32), (33, 64)):
        share = sum(lo <= x <= hi for x in short) / len(short)
        assert 0.27 < share < 0.40, (lo, hi, share)
    long = [train.canvas_length(rng, 50, (8, 64)) for _ in range(500)]
    assert min(long) == 51 and max(long) == 64, (min(long), max(long))
    assert {train.canvas_length(rng, 70, (8, 64)) for _ in range(20)} == {71}  # longer than the canvas: one <|im_end|>
    assert train.parse_canvas("8-64") == (8, 64) and train.parse_canvas(None) is None


def test_mdm_regions_pad_with_end_of_turn() -> None:
    train = _train()
    a = _Args()
    batch = [([1, 2, 3], [11, 12]), ([1, 2], list(range(20, 60)))]
    pad_masked = 0
    for step in range(30):
        for (p, ans), (p2, region, masked, t) in zip(batch, train.mdm_regions(batch, step, a)):
            assert p2 == p and region[:len(ans)] == ans
            assert all(x == smol.IM_END for x in region[len(ans):]) and len(region) > len(ans)
            assert 8 <= len(region) <= 64 and len(masked) == len(region) and any(masked) and 0.1 <= t <= 1
            pad_masked += sum(mk for mk in masked[len(ans):])
    assert pad_masked > 0  # the padding is part of the masked, predicted canvas


class _Stub(torch.nn.Module):
    """Records which rows a loss asks for and returns zero logits for them."""
    def forward(self, ids, key_pad=None, rows=None):
        self.rows, self.ids = rows, ids
        return torch.zeros(int(rows.sum()), 100, requires_grad=True)


def test_loss_rows() -> None:
    train = _train()
    a = _Args()
    batch = [([1, 2, 3], [11, 12]), ([1, 2], [30, 31, 32, 33])]
    st = _Stub()
    train.loss_arm(st, batch)
    assert int(st.rows.sum()) == (2 + 1) + (4 + 1)  # the twin: answer + one <|im_end|>, no padding
    assert st.rows[0].tolist() == [False, False, True, True, True, False, False]  # rows 2..4 predict 11, 12, <|im_end|>
    train.loss_mdm(st, batch, 5, a)
    regs = train.mdm_regions(batch, 5, a)
    assert int(st.rows.sum()) == sum(sum(mk) for _, _, mk, _ in regs)
    for b, (p, region, masked, _) in enumerate(regs):  # shifted: row len(p)+j−1 predicts region position j
        want = [False] * st.rows.shape[1]
        for j, mk in enumerate(masked):
            want[len(p) + j - 1] = mk
        assert st.rows[b].tolist() == want
        assert st.ids[b, len(p):len(p) + len(region)].tolist() == [smol.MASK_ID if mk else x for x, mk in zip(region, masked)]


def _tiny(causal: bool, mask_row: bool):
    """A 2-layer random SmolLM with LoRA (B non-zero, so every adapter gets a gradient)."""
    torch.manual_seed(0)
    hp = {"vocab_size": 50, "hidden": 16, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 24,
          "rope_theta": 1e4, "rms_norm_eps": 1e-5, "max_positions": 128}
    sd = {"model.embed_tokens.weight": torch.randn(50, 16), "model.norm.weight": torch.ones(16)}
    for i in range(2):
        p = f"model.layers.{i}."
        sd[p + "input_layernorm.weight"] = torch.ones(16)
        sd[p + "post_attention_layernorm.weight"] = torch.ones(16)
        for n, shape in (("q", (16, 16)), ("k", (8, 16)), ("v", (8, 16)), ("o", (16, 16)),
                         ("gate", (24, 16)), ("up", (24, 16)), ("down", (16, 24))):
            sd[p + smol.HF_LINEAR[n] + ".weight"] = torch.randn(*shape) * 0.3
    m = smol.SmolLM(sd, hp, causal=causal, rank=2, alpha=4.0, train_mask_row=mask_row)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, smol.LoRALinear):
                mod.lora_B.normal_(0, 0.1)
    return m


def _grads(m, fn) -> list[torch.Tensor]:
    for p in m.parameters():
        p.grad = None
    fn()
    return [p.grad.clone() for p in m.parameters() if p.requires_grad]


def test_micro_batch_same_gradient() -> None:
    """--micro-batch 1 adds up to the whole batch's gradient (prompts of different lengths, so the whole
    batch is padded and the micro-batches are not): both objectives."""
    train = _train()
    a = _Args()
    batch = [([1, 5, 6, 7, 8, 9, 10], [11, 12]), ([1, 20, 21], [30, 31, 32, 33, 34]), ([1, 3], [40])]
    m = _tiny(True, False)
    whole = _grads(m, lambda: train.loss_arm(m, batch)[0].backward())
    norm = sum(len(ans) + 1 for _, ans in batch)
    micro = _grads(m, lambda: [train.loss_arm(m, [ex], norm)[0].backward() for ex in batch])
    assert all(torch.allclose(g, h, atol=1e-6) for g, h in zip(whole, micro))
    m = _tiny(False, True)
    seqs = train.mdm_regions(batch, 3, a)
    whole = _grads(m, lambda: train.loss_mdm(m, batch, 3, a)[0].backward())
    micro = _grads(m, lambda: [train.loss_mdm_seqs(m, [sq], len(batch))[0].backward() for sq in seqs])
    assert all(torch.allclose(g, h, atol=1e-6) for g, h in zip(whole, micro))
    assert max(float(g.abs().max()) for g in whole) > 1e-4  # the gradient compared is not all zeros


def test_validation_paths_run() -> None:
    """The phase-4 validation code runs end to end on a tiny random model (not its numbers): short oracle
    at another canvas size, long answers with oracle passages; a reference answer scores recall 1."""
    from world import World, long_eval_records
    recs = long_eval_records(World(), "val", 2, 1234)
    tok = type("T", (_Tok,), {"eos_id": smol.IM_END, "mask_id": smol.MASK_ID,
                              "decode": staticmethod(lambda ids: " ".join(map(str, ids)))})
    for kind, m in (("dream", _tiny(False, True)), ("arm", _tiny(True, False))):
        r = decode.evaluate_long(m, kind, tok, recs, "oracle", gen=12, samples=1)
        assert r["n"] == 2 and r["gen"] == 12 and 0 <= r["recall"] <= 1 and len(r["samples"]) == 1
        s = decode.evaluate(m, kind, tok, recs, ["oracle"], gen=12)["oracle"]
        assert s["n"] == 2
    assert [c["isgold"] for c in recs[0]["ctxs"]][:recs[0]["gold_count"]] == [True] * recs[0]["gold_count"]
    assert len(decode.long_passages(recs[0], "oracle")) == recs[0]["gold_count"]
    assert len(decode.long_passages(recs[0], "full")) == recs[0]["gold_count"] + 4


def test_extra_validation_resume() -> None:
    """A run stopped inside a validation (the 32-slot row written, the long one not) redoes only the long one."""
    import tempfile
    train = _train()
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "eval-extra.csv"), "w") as f:
            f.write("step,task,gen,n,metric,value,seconds\n451,short_oracle,32,8,accuracy,1.0,339.9\n"
                    "400,long_oracle,64,8,recall,0.5,10\n")
        assert train._extra_done(d, 451) == {("short_oracle", 32)}
        assert train._extra_done(d, 400) == {("long_oracle", 64)}
        assert train._extra_done(d, 500) == set()


def test_batches_reproducible() -> None:
    """--long-share 0 draws exactly the earlier phases' examples (the qa stream alone); a positive share
    mixes in long-answer examples (≥ 3 facts, gold passages in the prompt) and leaves the other ones'
    stream untouched."""
    import random
    train = _train()
    from world import World
    w, a = World(), _Args()
    for step in (0, 45, 300):
        _, got = train.make_batch(w, _Tok, step, a)
        rng = random.Random(f"qa:{a.seed}:{step}")  # the pre-phase-4 make_batch, written out
        k = train.k_for_step(step, a)
        want = []
        for _ in range(a.batch):
            r = w.qa_example(rng, "train", k, fresh=True)
            want.append((decode.prompt_ids(_Tok, r["question"], [c["text"] for c in r["ctxs"]]), _Tok.encode(r["answers"][0])))
        assert got == want, step
    a.long_share = 0.3
    n_long = 0
    for step in range(20):
        _, b1 = train.make_batch(w, _Tok, step, a)
        assert b1 == train.make_batch(w, _Tok, step, a)[1]
        n_long += sum(len(ans) > 12 for _, ans in b1)  # short answers are 1–2 words, long ones ≥ 3 sentences
    assert 20 <= n_long <= 80, n_long  # 30 % of 160 = 48


def test_replayed_schedule() -> None:
    """`--target-at 652:751` replays the published MDM's phase-4 cut (its live `target_steps` file, read at
    step 652 of a 451 + 600 schedule) and `--stop-at` ends a run without moving the cosine's end. Values
    worked by hand from lr_at's definition: warm-up 20 to 5e-4, cosine to 2e-5 at the target."""
    import math
    import types
    train = _train()
    cuts = train.parse_cuts(["652:751"])
    assert cuts == [(652, 751)]
    assert train.step_target(651, 1051, cuts) == 1051 and train.step_target(652, 1051, cuts) == 751
    assert train.step_target(700, 1051, cuts, live=780) == 780  # a live file still wins
    a = types.SimpleNamespace(lr=5e-4, warmup=20, schedule="cosine", min_lr=2e-5)
    a.steps = train.step_target(651, 1051, cuts)
    # step 651 of a 600-step span: 200/600 of the way, cos(π/3) = 0.5 → 2e-5 + 4.8e-4 · 0.75 = 3.8e-4
    assert abs(train.lr_at(651, 451, a) - 3.8e-4) < 1e-12
    a.steps = train.step_target(652, 1051, cuts)
    # step 652 after the cut: 201/300, cos(0.67π) = −0.50904 → 2e-5 + 4.8e-4 · 0.24548 = 1.3783e-4
    # (the MDM's metrics.csv recorded 0.000138 there, rounded to 6 places)
    assert abs(train.lr_at(652, 451, a) - (2e-5 + 4.8e-4 * 0.5 * (1 + math.cos(math.pi * 201 / 300)))) < 1e-15
    assert abs(train.lr_at(652, 451, a) - 1.3783e-4) < 1e-8
    # phase 3 stopped at 451 of 480: the rate at step 450 is that of the 260-step span, 230/260 of the way
    a.steps = 480
    assert abs(train.lr_at(450, 220, a) - (2e-5 + 4.8e-4 * 0.5 * (1 + math.cos(math.pi * 230 / 260)))) < 1e-15
    for bad in (["652"], ["a:751"], ["652:-1"]):
        try:
            train.parse_cuts(bad)
        except SystemExit as e:
            assert "STEP:TARGET" in str(e)
        else:
            raise AssertionError(bad)


def test_publish_phases() -> None:
    """publish.phases: a continuation of a model that was published while that same continuation ran (so
    its training.json lists the continuation already) keeps only the earlier phases; --stop-at and
    --target-at are recorded with the steps run."""
    import importlib.util
    import tempfile
    spec = importlib.util.spec_from_file_location("real_publish", os.path.join(HERE, "publish.py"))
    pub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pub)
    base = {"lr": 5e-4, "warmup": 20, "schedule": "cosine", "min_lr": 2e-5, "oracle_share": 0.5}
    with tempfile.TemporaryDirectory(dir=REPO) as d:
        rel = os.path.relpath(d, REPO)
        with open(os.path.join(d, "training.json"), "w") as f:
            json.dump({"phases": [{"from_step": 0, **base}, {"from_step": 220, **base},
                                  {"from_step": 451, **base, "phase_steps": 600}]}, f)
        run = {**base, "start_step": 451, "phase_steps": 600, "init_from": rel, "target_at": ["652:751"]}
        ph = pub.phases(run, "", 751)
        assert [p["from_step"] for p in ph] == [0, 220, 451], ph
        assert ph[-1]["target_steps"] == 751 and ph[-1]["steps_run"] == 300 and ph[-1]["target_at"] == ["652:751"]
        run = {**base, "start_step": 220, "steps": 480, "stop_at": 451, "init_from": rel}
        ph = pub.phases(run, "", 451)
        assert [p["from_step"] for p in ph] == [0, 220], ph
        assert ph[-1]["stop_at"] == 451 and ph[-1]["steps"] == 480 and ph[-1]["steps_run"] == 231


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            fn()
            print("ok", name)
