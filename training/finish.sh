#!/usr/bin/env bash
# Publish each tiny model as soon as its training run finishes (training/publish.py: copy into models/,
# torch cross-check, engine evaluation, parity fixture, card). Does not commit.
#   training/finish.sh [models…]      # default: all four; runs in the foreground until all are published
# Progress lines go to training/runs/run_all.status; output to training/runs/publish-<model>.log.
set -u
cd "$(dirname "$0")/.."
RUNS=training/runs
PENDING=("$@")
[ ${#PENDING[@]} -eq 0 ] && PENDING=(tiny-qwen tiny-dream tiny-llama tiny-llada)
while [ ${#PENDING[@]} -gt 0 ]; do
  LEFT=()
  for m in "${PENDING[@]}"; do
    if [ ! -f "$RUNS/$m/summary.json" ]; then LEFT+=("$m"); continue; fi
    echo "$(date -u +%FT%TZ) publish $m start" >> "$RUNS/run_all.status"
    if nice -n 10 /usr/bin/python3 training/publish.py --model "$m" > "$RUNS/publish-$m.log" 2>&1; then
      echo "$(date -u +%FT%TZ) publish $m done" >> "$RUNS/run_all.status"
    else
      echo "$(date -u +%FT%TZ) publish $m FAILED (see $RUNS/publish-$m.log)" >> "$RUNS/run_all.status"
    fi
  done
  PENDING=("${LEFT[@]+"${LEFT[@]}"}")
  [ ${#PENDING[@]} -gt 0 ] && sleep 30
done
