#!/bin/sh
# Train the Dream-style MDM and its causal twin side by side (one thread each, lowest priority), in the
# background; run it again to resume. Stop: kill -- -<pid> for each pid in training/runs/smol.pids.
# OPENBLAS_CORETYPE: Debian's OpenBLAS 0.3.21 can mis-detect virtual CPUs; name the real family
# (SkylakeX for AVX-512 Xeons and Zen 4 EPYCs, Haswell for AVX2-only ones; check /proc/cpuinfo).
set -e
cd "$(dirname "$0")/../.."
STEPS=${STEPS:-90}
: "${OPENBLAS_CORETYPE:=SkylakeX}"
export OPENBLAS_CORETYPE
mkdir -p training/runs
: > training/runs/smol.pids
for obj in mdm arm; do
  setsid nice -n 19 /usr/bin/python3 training/real/train.py --objective "$obj" --run "training/runs/smol-$obj" \
    --steps "$STEPS" --eval-every 50 --val-n 16 >> "training/runs/smol-$obj.log" 2>&1 &
  echo $! >> training/runs/smol.pids
done
cat training/runs/smol.pids
