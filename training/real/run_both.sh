#!/bin/sh
# Train the Dream-style MDM and its causal twin side by side (one thread each, lowest priority), in the
# background; run it again to resume. Stop: kill -- -<pid> for each pid in training/runs/smol.pids.
# OPENBLAS_CORETYPE: Debian's OpenBLAS 0.3.21 can mis-detect virtual CPUs; name the real family
# (SkylakeX for AVX-512 Xeons and Zen 4 EPYCs, Haswell for AVX2-only ones; check /proc/cpuinfo).
#   STEPS   the step target (default 90)
#   SUFFIX  run folders training/runs/smol-{mdm,arm}$SUFFIX (default none)
#   INIT    continue the published models (models/smollm2-135m-{dream,causal}-world) in fresh run folders
#   ARGS    more train.py arguments, the same for both objectives (e.g. "--schedule cosine --lr 5e-4")
set -e
cd "$(dirname "$0")/../.."
STEPS=${STEPS:-90}
: "${OPENBLAS_CORETYPE:=SkylakeX}"
export OPENBLAS_CORETYPE
mkdir -p training/runs
: > training/runs/smol.pids
for obj in mdm arm; do
  init=""
  if [ -n "$INIT" ]; then
    if [ "$obj" = mdm ]; then init="--init-from models/smollm2-135m-dream-world"; else init="--init-from models/smollm2-135m-causal-world"; fi
  fi
  # shellcheck disable=SC2086
  setsid nice -n 19 /usr/bin/python3 training/real/train.py --objective "$obj" --run "training/runs/smol-$obj$SUFFIX" \
    --steps "$STEPS" --eval-every 50 --val-n 16 $init $ARGS >> "training/runs/smol-$obj$SUFFIX.log" 2>&1 &
  echo $! >> training/runs/smol.pids
done
cat training/runs/smol.pids
