#!/usr/bin/env bash
# The documented full training run of the four embedded tiny models (see training/README.md).
#
#   training/run_all.sh            # starts in the background, survives logout; returns at once
#   training/run_all.sh --wait     # same, but waits for both chains
#
# Two single-threaded chains side by side (the machine has 2 cores):
#   chain A: tiny-qwen → tiny-dream (initialised from tiny-qwen) → tiny-llama
#   chain B: tiny-llada (the longest budget)
# Logs: training/runs/<model>.log, per-run files in training/runs/<model>/, overall state in
# training/runs/run_all.status. Re-running the script resumes every unfinished model from its ckpt.pt
# and skips finished ones (summary.json present).
set -u
cd "$(dirname "$0")/.."
RUNS=training/runs
mkdir -p "$RUNS"
PY=/usr/bin/python3

run_model() {  # $1 = model name
  if [ -f "$RUNS/$1/summary.json" ]; then echo "$(date -u +%FT%TZ) $1 already done" >> "$RUNS/run_all.status"; return 0; fi
  echo "$(date -u +%FT%TZ) $1 start" >> "$RUNS/run_all.status"
  if nice -n 5 "$PY" training/train.py --model "$1" >> "$RUNS/$1.log" 2>&1; then
    echo "$(date -u +%FT%TZ) $1 done" >> "$RUNS/run_all.status"
  else
    echo "$(date -u +%FT%TZ) $1 FAILED (see $RUNS/$1.log)" >> "$RUNS/run_all.status"; return 1
  fi
}

if [ "${1:-}" = "--chain" ]; then
  shift
  for m in "$@"; do run_model "$m" || exit 1; done
  exit 0
fi

export OMP_NUM_THREADS=1
setsid nohup "$0" --chain tiny-qwen tiny-dream tiny-llama > "$RUNS/chain-a.out" 2>&1 < /dev/null &
A=$!
setsid nohup "$0" --chain tiny-llada > "$RUNS/chain-b.out" 2>&1 < /dev/null &
B=$!
echo "$A $B" > "$RUNS/run_all.pids"
echo "$(date -u +%FT%TZ) launched chain A (pid $A: tiny-qwen, tiny-dream, tiny-llama) and chain B (pid $B: tiny-llada)" >> "$RUNS/run_all.status"
echo "started: chain A pid $A, chain B pid $B; follow $RUNS/run_all.status and $RUNS/*.log"
if [ "${1:-}" = "--wait" ]; then wait; fi
