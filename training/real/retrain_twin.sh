#!/bin/sh
# Retrain the causal twin on exactly the MDM's steps and learning-rate schedule, so that the pair differs in
# its objective alone: same data, same steps, same rates. The published pair differed in two places
# (training/real/README.md, Recipe): the MDM's phase 3 was stopped by hand at step 451 of its 480-step cosine while the twin ran to 480,
# and in phase 4 the twin first read the MDM's step target (751) at its phase step 171. This script starts
# again from the twin as published at step 220 (the end of phase 2, identical for both) and replays the
# MDM's history: phase 3 with the cosine spanning to 480 but stopped at 451 (`--stop-at`), phase 4 with 600
# planned steps cut to 751 from step 652, where the MDM's run read its `target_steps` file (`--target-at`;
# test_real.py checks the rate there against the MDM's recorded one). A step's batch is a pure function of
# the seed and the step (phase 4: of its own step count), so the twin then sees the MDM's batches step for
# step. Resumable: run it again after an interruption (each train.py continues from its ckpt.pt).
#
#   sh training/real/retrain_twin.sh            # ≈ 15 min (phase 3) + ≈ 75 min (phase 4), one core
#   OUT=models/smollm2-135m-causal-world sh training/real/retrain_twin.sh   # … and publish it as the twin
#
# Without OUT the result is published to training/runs/twin-751 (not the model the notebooks read).
set -e
# The whole script is one { … } block ending in exit: the shell parses all of it before running any of it,
# so editing this file while a run is live cannot change what that run does (dash reads a script as it goes).
{
cd "$(dirname "$0")/../.."
: "${OPENBLAS_CORETYPE:=SkylakeX}"  # see run_both.sh
export OPENBLAS_CORETYPE
PY=/usr/bin/python3
R=training/runs
NAME=smollm2-135m-causal-world
OUT=${OUT:-$R/twin-751}
mkdir -p "$R"

# 1. the twin at step 220, from the commit that published it (phases 1 and 2 were identical for both models)
if [ ! -f "$R/twin-220/delta.safetensors" ]; then
  mkdir -p "$R/twin-220"
  git show "2954c61:models/$NAME/training.json" > "$R/twin-220/training.json"
  git show "2954c61:models/$NAME/delta.safetensors" > "$R/twin-220/delta.safetensors"
fi

# 2. phase 3 as the MDM ran it: cosine from 220 to 480, stopped at 451
$PY training/real/train.py --objective arm --run "$R/smol-arm-p3m" --init-from "$R/twin-220" \
  --steps 480 --stop-at 451 --eval-every 50 --val-n 16 \
  --lr 5e-4 --warmup 20 --schedule cosine --min-lr 2e-5 --oracle-share 0.5 >> "$R/smol-arm-p3m.log" 2>&1
$PY training/real/publish.py --run "$R/smol-arm-p3m" --name "$NAME" --out "$R/twin-451"

# 3. phase 4 as the MDM ran it: 600 phase steps planned, the target cut to 751 from step 652
$PY training/real/train.py --objective arm --run "$R/smol-arm-p4m" --init-from "$R/twin-451" \
  --phase-steps 600 --target-at 652:751 --val-n 16 \
  --lr 5e-4 --warmup 20 --schedule cosine --min-lr 2e-5 --oracle-share 0.5 --oracle-steps 0 --k-every 1 \
  --canvas 8-64 --long-share 0.3 --micro-batch 1 --eval-every 100 --val-gens 8,32 --val-extra-n 8 \
  --val-long-n 8 --val-long-steps 16 >> "$R/smol-arm-p4m.log" 2>&1
$PY training/real/publish.py --run "$R/smol-arm-p4m" --name "$NAME" --out "$OUT"
echo "retrained twin published to $OUT"
exit
}
