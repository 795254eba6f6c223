#!/usr/bin/env bash
# Semi-autoregressive decoding of the adapted MDM (LLaDA-style blocks), against its own preset.
#
# The published MDM (models/smollm2-135m-dream-world) is decoded by its preset: Dream's entropy order over
# 8 masks in 8 steps, one block. Most of its oracle errors are answers cut short by an early <|im_end|>
# (README.md, "What the numbers show"). Blocks of B tokens decode the answer left to right, one block of
# masks after the other, so no position is committed before every block left of it is complete. The LLaDA
# sampler runs the same engine logits (already aligned to positions for a Dream-style model) with
# low-confidence remasking; its one-block run separates the change of order from the change of blocks.
#
#   bash training/real/semi_ar.sh [n]     # first n held-out questions, oracle setting (default 100)
#
# Needs the merged checkpoint (bash scripts/setup.sh). Rows go to .cache/semi-ar/<config>.jsonl (rerun to
# resume); the summary lines (Acc / F1 / EM × 100) are printed and written to .cache/semi-ar/summary.tsv.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
N="${1:-100}"
MODEL=.cache/real-models/smollm2-135m-dream-world
DATA=models/world/eval-heldout.jsonl.gz
OUT=.cache/semi-ar
[[ -f "$MODEL/model.safetensors" ]] || { echo "semi_ar: $MODEL is missing: run bash scripts/setup.sh first" >&2; exit 1; }
mkdir -p "$OUT"
: > "$OUT/summary.tsv"
run() { # name, extra flags…
  local name="$1"
  shift
  echo "== $name: $*" >&2
  npx floatscope eval "$MODEL" --data "$DATA" --setting oracle --limit "$N" --batch-size 8 --threads 2 \
    --out "$OUT/$name.jsonl" "$@" | sed "s/^/$name\t/" | tee -a "$OUT/summary.tsv"
}
run dream-entropy-1block
run llada-lowconf-1block --sampler llada
run llada-lowconf-2blocks --sampler llada --block-length 4
run llada-lowconf-4blocks --sampler llada --block-length 2
run llada-lowconf-8blocks --sampler llada --block-length 1
# Error kinds per configuration: an answer cut short (the prediction is a proper prefix of a gold answer:
# an early end of turn) or another wrong answer.
/usr/bin/python3 - "$OUT" <<'PY' | tee "$OUT/errors.tsv"
import json, os, sys
out = sys.argv[1]
print("config\tn\tcorrect\tcut short\tother wrong")
for name in ["dream-entropy-1block", "llada-lowconf-1block", "llada-lowconf-2blocks", "llada-lowconf-4blocks", "llada-lowconf-8blocks"]:
    path = os.path.join(out, name + ".jsonl")
    if not os.path.exists(path):
        continue
    rows = [json.loads(l) for l in open(path) if l.strip()]
    rows = [r for r in rows if "accuracy" in r and r.get("error") is None]
    wrong = [r for r in rows if r["accuracy"] < 1]
    norm = lambda s: s.strip().lower()
    short = [r for r in wrong if norm(r["prediction"]) and any(norm(a).startswith(norm(r["prediction"])) for a in r["answers"])]
    print(f"{name}\t{len(rows)}\t{len(rows) - len(wrong)}\t{len(short)}\t{len(wrong) - len(short)}")
PY
