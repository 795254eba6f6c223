"""Adapt SmolLM2-135M-Instruct on the synthetic world QA with LoRA: a Dream-style masked diffusion model
(`--objective mdm`) or its causal twin (`--objective arm`). Both see exactly the same examples per step
(a pure function of seed and step), the same LoRA rank, optimiser and budget; only the objective differs.

    OPENBLAS_CORETYPE=SkylakeX nice -n 19 /usr/bin/python3 training/real/train.py --objective mdm \
        --run training/runs/smol-mdm --steps 300

Resumable: the run folder holds ckpt.pt (delta, optimiser, step; written every `--ckpt-minutes` and at
each validation), metrics.csv (loss per step), eval.csv (validation oracle accuracy), delta-best.safetensors
(the best validation delta so far) and run.json (the arguments). Running the same command again continues.

Recipe (see training/real/README.md): QA examples about fresh people (training/world.py), the gold passage
among k distractors shared by the batch; k = 0 for the first `--oracle-steps`, then k ~ U{0..k_max} with
k_max growing by one every `--k-every` steps up to `--k-top` (oracle first). Loss on the answer only.
- arm: causal attention, next-token cross-entropy on answer + `<|im_end|>`.
- mdm: bidirectional attention; the answer region (answer + `<|im_end|>` padding to a random length in
  [len+1, 8]) is masked with ratio t ~ U(0.1, 1) per example (at least one token) with the mask token; the
  prediction for position i comes from output row i−1 (Dream's shift, so the base's next-token head is
  reused); loss = Σ cross-entropy over masked tokens / t / region length, averaged over the batch.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import smol  # noqa: E402
import decode  # noqa: E402
from world import World, eval_records, long_eval_records  # noqa: E402
from hf_formats import write_safetensors  # noqa: E402

GEN_MAX = decode.GEN


def key(name: str, step: int, a) -> str:
    """Seed string of a per-step stream. With `--phase-steps` the index is the continuation's own step
    count (its first step is 0) and the string carries `phase`, so two continuations that start from
    different published steps (the MDM stopped at 451, the twin at 480) still see identical batches and
    masks step for step. Without it: the earlier phases' strings, unchanged."""
    return f"{name}:{a.seed}:phase:{step}" if getattr(a, "phase_steps", 0) else f"{name}:{a.seed}:{step}"


def k_for_step(step: int, a) -> int:
    if step < a.oracle_steps:
        return 0
    kmax = min(a.k_top, 1 + (step - a.oracle_steps) // a.k_every)
    rng = random.Random(key("k", step, a))
    if a.oracle_share > 0 and rng.random() < a.oracle_share:
        return 0  # keep the oracle setting in the mix once distractors arrive
    return rng.randint(0, kmax)


def lr_at(step: int, start: int, a) -> float:
    """Learning rate of `step` in a run (or continuation) that began at `start`: linear warm-up over
    `--warmup` steps from `start` (a continuation warms up again: its AdamW moments restart at zero), then
    constant or cosine-decayed to `--min-lr` at `--steps`."""
    lr = a.lr * min(1.0, (step - start + 1) / a.warmup)
    if a.schedule == "cosine":
        span = max(1, a.steps - start)
        frac = min(1.0, (step - start) / span)
        lr = a.min_lr + (lr - a.min_lr) * 0.5 * (1 + math.cos(math.pi * frac))
    return lr


def parse_cuts(specs: list[str]) -> list[tuple[int, int]]:
    """`--target-at STEP:TARGET` values → [(step, target)] sorted by step."""
    out = []
    for c in specs:
        at, _, to = c.partition(":")
        if not (at.isdigit() and to.isdigit()):
            raise SystemExit(f"--target-at {c!r}: expected STEP:TARGET, two whole numbers (e.g. 652:751)")
        out.append((int(at), int(to)))
    return sorted(out)


def step_target(step: int, steps: int, cuts: list[tuple[int, int]], live: int | None = None) -> int:
    """The step target in force at `step` (the end of the cosine in `lr_at`): the last replayed cut whose
    step has been reached, else `steps`; a live `<run>/target_steps` file (`live`) overrides both. A cut read
    at step s changes the rate of step s itself, as the live file does (read at the top of the step)."""
    for at, to in cuts:
        if step >= at:
            steps = to
    return live if live is not None else steps


def make_batch(world: World, tok, step: int, a):
    """Examples for one step: (prompt ids, answer ids) × batch, identical for both objectives. With
    `--long-share` s > 0, each example is a long-answer one (World.long_example, the same k distractors)
    with probability s, decided by its own seeded stream, so short examples are drawn from the `qa` stream
    exactly as before and `--long-share 0` reproduces the earlier phases' batches."""
    k = k_for_step(step, a)
    rng = random.Random(key("qa", step, a))
    lrng = random.Random(key("long", step, a))
    out = []
    for _ in range(a.batch):
        if a.long_share > 0 and lrng.random() < a.long_share:
            r = world.long_example(lrng, "train", k, fresh=True)
        else:
            r = world.qa_example(rng, "train", k, fresh=True)
        ids = decode.prompt_ids(tok, r["question"], [c["text"] for c in r["ctxs"]])
        out.append((ids, tok.encode(r["answers"][0])))
    return k, out


def parse_canvas(text: str | None) -> tuple[int, int] | None:
    """`--canvas 8-64` → (8, 64); None keeps the earlier phases' rule (length in [answer + 1, 8])."""
    if not text:
        return None
    lo, hi = (int(x) for x in text.split("-"))
    if not 1 <= lo <= hi:
        raise SystemExit(f"--canvas {text}: expected LO-HI with 1 <= LO <= HI")
    return lo, hi


def canvas_length(rng: random.Random, n_answer: int, canvas: tuple[int, int] | None) -> int:
    """Length of the MDM's answer region (answer + end-of-turn padding) for an answer of n_answer tokens.
    Without a canvas: uniform in [n+1, max(8, n+1)] (phases 1–3). With (lo, hi): log-uniform over
    [max(lo, n+1), max(hi, n+1)], rounded — as LLaDA's SFT pads answers with EOS to the batch length, the
    padding is part of what is masked and predicted, so the model learns to end an answer anywhere in a
    canvas of any size. Log-uniform, so that a short answer sees canvases of 8–16, 16–32 and 32–64 slots
    equally often (the decoders run at 8, 32 and 64); a long answer (30–63 tokens) gets what is left up to 64.
    An answer longer than hi − 1 gets exactly one end-of-turn."""
    if canvas is None:
        return rng.randint(n_answer + 1, max(GEN_MAX, n_answer + 1))
    lo, hi = max(canvas[0], n_answer + 1), max(canvas[1], n_answer + 1)
    return min(hi, max(lo, round(math.exp(rng.uniform(math.log(lo), math.log(hi))))))


def loss_arm(m, batch, norm: int | None = None) -> tuple[torch.Tensor, int]:
    """Next-token cross-entropy on answer + <|im_end|>: the mean over the batch's target tokens, or, with
    `norm`, their sum / norm (micro-batches: norm = the whole batch's target count, so the summed
    gradients equal the whole batch's)."""
    seqs = [p + ans + [smol.IM_END] for p, ans in batch]
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), smol.IM_END)
    pad = torch.ones(len(seqs), T, dtype=torch.bool)
    rows = torch.zeros(len(seqs), T, dtype=torch.bool)
    tgt = []
    for b, ((p, ans), s) in enumerate(zip(batch, seqs)):
        ids[b, :len(s)] = torch.tensor(s)
        pad[b, :len(s)] = False
        rows[b, len(p) - 1:len(s) - 1] = True  # row j predicts token j+1
        tgt += s[len(p):]
    logits = m(ids, key_pad=pad, rows=rows)
    if norm:
        return F.cross_entropy(logits, torch.tensor(tgt), reduction="sum") / norm, T * len(seqs)
    return F.cross_entropy(logits, torch.tensor(tgt)), T * len(seqs)


def mdm_regions(batch, step: int, a) -> list[tuple[list[int], list[int], list[bool], float]]:
    """Per example: (prompt, answer region = answer + end-of-turn padding, masked flags, t). The region's
    length is `canvas_length`; t ~ U(0.1, 1); every region token (padding included) is masked with
    probability t, at least one."""
    rng = random.Random(key("mask", step, a))
    canvas = parse_canvas(getattr(a, "canvas", None))
    seqs = []
    for p, ans in batch:
        L = canvas_length(rng, len(ans), canvas)
        region = ans + [smol.IM_END] * (L - len(ans))
        t = rng.uniform(0.1, 1.0)
        masked = [rng.random() < t for _ in region]
        if not any(masked):
            masked[rng.randrange(L)] = True
        seqs.append((p, region, masked, t))
    return seqs


def loss_mdm(m, batch, step: int, a) -> tuple[torch.Tensor, int]:
    return loss_mdm_seqs(m, mdm_regions(batch, step, a), len(batch))


def loss_mdm_seqs(m, seqs, n_batch: int) -> tuple[torch.Tensor, int]:
    """Σ over `seqs` of (Σ CE over masked tokens / t / region length), / n_batch (the whole batch's size,
    so that micro-batches' gradients add up to the batch's)."""
    T = max(len(p) + len(r) for p, r, _, _ in seqs)
    ids = torch.full((len(seqs), T), smol.IM_END)
    pad = torch.ones(len(seqs), T, dtype=torch.bool)
    rows = torch.zeros(len(seqs), T, dtype=torch.bool)
    tgt, wts = [], []
    for b, (p, region, masked, t) in enumerate(seqs):
        noisy = [smol.MASK_ID if mk else tk for tk, mk in zip(region, masked)]
        s = p + noisy
        ids[b, :len(s)] = torch.tensor(s)
        pad[b, :len(s)] = False
        for j, mk in enumerate(masked):
            if mk:
                rows[b, len(p) + j - 1] = True  # shifted: row i−1 predicts position i
        # rows are gathered in row-major order, so targets follow position order within each example
        tgt += [tk for tk, mk in zip(region, masked) if mk]
        wts += [1.0 / (t * len(region))] * sum(masked)
    logits = m(ids, key_pad=pad, rows=rows)
    ce = F.cross_entropy(logits, torch.tensor(tgt), reduction="none")
    return (ce * torch.tensor(wts)).sum() / n_batch, T * len(seqs)


def save_delta(m, path: str, meta: dict) -> int:
    d = {k: v.float().numpy() for k, v in m.delta_state().items()}
    write_safetensors(path, d, dtype="bf16", metadata={k: str(v) for k, v in meta.items()})
    return os.path.getsize(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objective", choices=["mdm", "arm"], required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--schedule", choices=["constant", "cosine"], default="constant")
    ap.add_argument("--min-lr", type=float, default=0.0, help="cosine schedule: the rate at --steps")
    ap.add_argument("--oracle-share", type=float, default=0.0,
                    help="after the oracle steps, the share of steps with k = 0 drawn first (0: k ~ U{0..k_max} only)")
    ap.add_argument("--phase-steps", type=int, default=0, metavar="N",
                    help="a continuation of N steps from wherever it starts (overrides --steps: target = start + N); "
                         "its batches, masks and curriculum are indexed by its own step count, so both objectives "
                         "get the same data even when their published models stopped at different steps")
    ap.add_argument("--canvas", default=None, metavar="LO-HI",
                    help="MDM: pad each answer with <|im_end|> to a canvas of LO–HI slots (log-uniform; e.g. 8-64); "
                         "default: the earlier phases' [answer + 1, 8]. The twin's loss always covers answer + one <|im_end|>")
    ap.add_argument("--long-share", type=float, default=0.0,
                    help="share of long-answer examples (World.long_example) in each batch, drawn per example")
    ap.add_argument("--val-gens", default="8", help="MDM: canvas sizes of the short validation (comma list; "
                    "the first is eval.csv's val_oracle_accuracy, the others go to eval-extra.csv)")
    ap.add_argument("--val-extra-n", type=int, default=0,
                    help="questions for the other --val-gens canvases (default --val-n; each costs up to N forward passes "
                         "of the MDM without a cache, so a 32-slot question costs 4× an 8-slot one)")
    ap.add_argument("--val-long-n", type=int, default=0,
                    help="also validate long answers (oracle, 64 slots) on this many val people → eval-extra.csv")
    ap.add_argument("--micro-batch", type=int, default=0, metavar="N",
                    help="forward/backward N examples at a time and add the gradients (the batch's gradient up to "
                         "float summation order; no padding to the batch's longest prompt; memory ÷ batch/N). 0: whole batch")
    ap.add_argument("--val-long-steps", type=int, default=64,
                    help="MDM: denoising steps of the long validation's 64 masks (16: four tokens a step, a quarter "
                         "of the cost of 64; a learning-curve proxy, the cards use 64 in 64). eval-extra.csv task "
                         "long_oracle (64 steps) or long_oracle_<n>steps")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--alpha", type=float, default=32.0)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--oracle-steps", type=int, default=40)
    ap.add_argument("--k-every", type=int, default=20)
    ap.add_argument("--k-top", type=int, default=4)
    ap.add_argument("--eval-every", type=int, default=40)
    ap.add_argument("--val-n", type=int, default=20)
    ap.add_argument("--ckpt-minutes", type=float, default=4.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--stop-at", type=int, default=0, metavar="STEP",
                    help="end the run at this global step without changing the schedule (the cosine still spans to "
                         "--steps), as a run stopped by hand: replays the MDM's phase 3, stopped at 451 of 480")
    ap.add_argument("--target-at", action="append", default=[], metavar="STEP:TARGET",
                    help="from global step STEP on, the step target is TARGET (the cosine re-spans), as when a live "
                         "run read <run>/target_steps at STEP: replays a recorded cut (repeatable)")
    ap.add_argument("--init-from", default=None, metavar="MODEL_DIR",
                    help="start a new run folder from a published model (models/<name>: delta.safetensors + "
                         "training.json): its delta, step, tokens and curves; the optimiser state starts fresh")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    os.makedirs(a.run, exist_ok=True)
    mdm = a.objective == "mdm"
    m, tok, _ = smol.build(causal=not mdm, rank=a.rank, alpha=a.alpha, train_mask_row=mdm)
    params = [p for p in m.parameters() if p.requires_grad]
    n_params = sum(p.numel() for p in params)
    opt = torch.optim.AdamW(params, lr=a.lr, betas=(0.9, 0.95), weight_decay=0.0)
    world = World()
    val = eval_records(world, "val", a.val_n, world.seed, n_distractors=0)
    val_long = long_eval_records(world, "val", a.val_long_n, world.seed) if a.val_long_n else []
    gens = [int(g) for g in a.val_gens.split(",")] if mdm else [decode.GEN]
    long_task = "long_oracle" if not mdm or a.val_long_steps == 64 else f"long_oracle_{a.val_long_steps}steps"
    ck = os.path.join(a.run, "ckpt.pt")
    step, tokens, best, start = 0, 0, -1.0, 0
    if os.path.exists(ck):
        st = torch.load(ck)
        m.load_delta(st["delta"])
        opt.load_state_dict(st["opt"])
        step, tokens, best = st["step"], st["tokens"], st["best"]
        start = st.get("start", 0)
        print(f"resumed at step {step}", flush=True)
        for name in ("metrics.csv", "eval.csv", "eval-extra.csv"):  # drop rows written after the checkpoint
            path = os.path.join(a.run, name)
            if os.path.exists(path):
                with open(path) as f:
                    lines = f.read().splitlines()
                keep = [lines[0]] + [ln for ln in lines[1:] if int(ln.split(",")[0]) <= step]
                with open(path, "w") as f:
                    f.write("\n".join(keep) + "\n")
    elif a.init_from:
        step, tokens = init_from(m, a)
        start = step
        print(f"continuing {a.init_from} from step {step} (fresh optimiser state)", flush=True)
    if a.phase_steps:
        a.steps = start + a.phase_steps
    with open(os.path.join(a.run, "run.json"), "w") as f:
        json.dump({**vars(a), "start_step": start, "trainable_params": n_params, "blas_core": smol.blas_core(),
                   "mask_id": smol.MASK_ID if mdm else None}, f, indent=2)
    print(f"{a.objective}: {n_params} trainable parameters, OpenBLAS core {smol.blas_core()}", flush=True)

    def checkpoint():
        torch.save({"delta": m.delta_state(), "opt": opt.state_dict(), "step": step, "tokens": tokens,
                    "best": best, "start": start}, ck + ".tmp")
        os.replace(ck + ".tmp", ck)

    def append(name, row, header):
        path = os.path.join(a.run, name)
        new = not os.path.exists(path)
        with open(path, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(header)
            w.writerow(row)

    def extra_eval(at: int):
        """eval-extra.csv: the short oracle at the other canvas sizes of --val-gens, and the long answers'
        fact recall/precision (oracle passages, 64 slots). Rows after a resumed checkpoint are dropped
        with eval.csv's (same step rule)."""
        hdr = ["step", "task", "gen", "n", "metric", "value", "seconds"]
        done = _extra_done(a.run, at)  # a run interrupted inside this validation redoes only what is missing
        for g in gens[1:]:
            if ("short_oracle", g) in done:
                continue
            t1 = time.time()
            r = decode.evaluate(m, kind, tok, val[: a.val_extra_n or a.val_n], ["oracle"], gen=g)["oracle"]
            append("eval-extra.csv", [at, "short_oracle", g, r["n"], "accuracy", round(r["accuracy"], 4),
                                      round(time.time() - t1, 1)], hdr)
            print(f"step {at}: val oracle at {g} slots {r['accuracy']:.3f}", flush=True)
        if val_long and (long_task, 64) not in done:
            t1 = time.time()
            r = decode.evaluate_long(m, kind, tok, val_long, "oracle", 64, steps=a.val_long_steps if mdm else None)
            for k in ("recall", "precision"):
                append("eval-extra.csv", [at, long_task, 64, len(val_long), k, round(r[k], 4),
                                          round(time.time() - t1, 1)], hdr)
            print(f"step {at}: val long recall {r['recall']:.3f} precision {r['precision']:.3f}", flush=True)

    def _extra_missing(at: int) -> bool:
        want = {("short_oracle", g) for g in gens[1:]} | ({(long_task, 64)} if val_long else set())
        return bool(want - _extra_done(a.run, at))

    last_ck = time.time()
    kind = "dream" if mdm else "arm"
    target = os.path.join(a.run, "target_steps")  # write a number here to change --steps of a live run
    cuts = parse_cuts(a.target_at)
    while step < a.steps and not (a.stop_at and step >= a.stop_at):
        live = int(open(target).read().strip() or a.steps) if os.path.exists(target) else None
        a.steps = step_target(step, a.steps, cuts, live)
        if step >= a.steps:
            break
        # a phase (--phase-steps) validates at its own multiples of --eval-every, its first step included,
        # so both objectives are measured after the same number of phase steps
        due = (step - start if a.phase_steps else step) % a.eval_every == 0
        if due and not _evaluated(a.run, step):
            t0 = time.time()
            acc = decode.evaluate(m, kind, tok, val, ["oracle"], gen=gens[0])["oracle"]["accuracy"]
            append("eval.csv", [step, tokens, round(acc, 4), a.val_n, round(time.time() - t0, 1)],
                   ["step", "tokens", "val_oracle_accuracy", "n", "seconds"])
            print(f"step {step}: val oracle {acc:.3f} (n={a.val_n}, {time.time() - t0:.0f} s)", flush=True)
            if acc >= best:
                best = acc
                save_delta(m, os.path.join(a.run, "delta-best.safetensors"),
                           {"objective": a.objective, "step": step, "val_oracle": acc, "rank": a.rank,
                            "alpha": a.alpha})
            checkpoint()
        # separately: a continuation's first step is in eval.csv already (the published curve), not here
        if due and _extra_missing(step):
            extra_eval(step)
            checkpoint()
        m.train()
        t0 = time.time()
        lr = lr_at(step, start, a)
        for g in opt.param_groups:
            g["lr"] = lr
        ds = step - start if a.phase_steps else step  # the data index (see `key`)
        k, batch = make_batch(world, tok, ds, a)
        opt.zero_grad(set_to_none=True)
        if a.micro_batch:  # the same gradient, a few examples at a time (memory: T² attention per layer)
            mb = a.micro_batch
            if mdm:
                seqs = mdm_regions(batch, ds, a)
                chunks = [lambda c=seqs[i:i + mb]: loss_mdm_seqs(m, c, len(batch)) for i in range(0, len(seqs), mb)]
            else:
                norm = sum(len(ans) + 1 for _, ans in batch)
                chunks = [lambda c=batch[i:i + mb]: loss_arm(m, c, norm) for i in range(0, len(batch), mb)]
            total, ntok = 0.0, 0
            for run_chunk in chunks:  # each chunk's graph is freed by its backward before the next is built
                part, nt = run_chunk()
                part.backward()
                total, ntok = total + part.item(), ntok + nt
            loss = torch.tensor(total)
        else:
            loss, ntok = loss_mdm(m, batch, ds, a) if mdm else loss_arm(m, batch)
            loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        step += 1
        tokens += ntok
        append("metrics.csv", [step, round(loss.item(), 5), k, ntok, round(time.time() - t0, 2), round(lr, 6)],
               ["step", "loss", "k", "tokens", "seconds", "lr"])
        if step % 5 == 0:
            print(f"step {step} loss {loss.item():.3f} k {k} {time.time() - t0:.1f} s/step", flush=True)
        if time.time() - last_ck > a.ckpt_minutes * 60:
            checkpoint()
            last_ck = time.time()
    if not _evaluated(a.run, step):
        acc = decode.evaluate(m, kind, tok, val, ["oracle"], gen=gens[0])["oracle"]["accuracy"]
        append("eval.csv", [step, tokens, round(acc, 4), a.val_n, 0], ["step", "tokens", "val_oracle_accuracy", "n", "seconds"])
        if acc >= best:
            best = acc
            save_delta(m, os.path.join(a.run, "delta-best.safetensors"),
                       {"objective": a.objective, "step": step, "val_oracle": acc, "rank": a.rank, "alpha": a.alpha})
    if _extra_missing(step):
        extra_eval(step)
    checkpoint()
    save_delta(m, os.path.join(a.run, "delta-last.safetensors"),
               {"objective": a.objective, "step": step, "rank": a.rank, "alpha": a.alpha})
    print("done", flush=True)


def init_from(m, a) -> tuple[int, int]:
    """Continue a published run whose run folder is gone: load its delta and write its recorded curves into
    the new run folder, so that `publish.py` later reports the whole history. Adam's moments were not
    published, so they restart at zero here, and `lr_at` warms up again from this step over `--warmup` steps
    (`--warmup 1`: none); run.json records `init_from` and `start_step` so publish.py can list the phases.
    The lr column written for the earlier rows is the first phase's rule, not their recorded rates."""
    sys.path.insert(0, HERE)
    from merge import load_delta  # noqa: E402

    info = json.load(open(os.path.join(a.init_from, "training.json")))
    if info["objective"] != a.objective:
        raise SystemExit(f"{a.init_from}: objective {info['objective']}, expected {a.objective}")
    d, dmeta = load_delta(os.path.join(a.init_from, "delta.safetensors"))
    if int(dmeta["rank"]) != a.rank or float(dmeta["alpha"]) != a.alpha:
        raise SystemExit(f"{a.init_from}: rank/alpha {dmeta['rank']}/{dmeta['alpha']}, expected {a.rank}/{a.alpha}")
    m.load_delta(d)
    step, tokens = int(info["steps"]), int(info["tokens"])
    per_step = round(info["train_seconds"] / max(1, step), 2)
    with open(os.path.join(a.run, "metrics.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "loss", "k", "tokens", "seconds", "lr"])
        for s, loss, k in info["loss_curve"]:
            w.writerow([s, loss, k, round(tokens / step), per_step, round(info["lr"] * min(1.0, s / info["warmup"]), 6)])
    with open(os.path.join(a.run, "eval.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "tokens", "val_oracle_accuracy", "n", "seconds"])
        for s, acc, n in info.get("val_curve", []):
            w.writerow([s, "", acc, n, 0])
    return step, tokens


def _extra_done(run: str, step: int) -> set:
    """(task, canvas) pairs of eval-extra.csv already measured at `step`."""
    path = os.path.join(run, "eval-extra.csv")
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {(r["task"], int(r["gen"])) for r in csv.DictReader(f) if r["step"] == str(step)}


def _evaluated(run: str, step: int, name: str = "eval.csv") -> bool:
    path = os.path.join(run, name)
    if not os.path.exists(path):
        return False
    with open(path) as f:
        return any(r.get("step") == str(step) for r in csv.DictReader(f))


if __name__ == "__main__":
    main()
