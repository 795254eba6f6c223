#!/bin/sh
# After run_both.sh: for each run, wait until its training process has exited, publish its delta, evaluate
# it on the held-out questions, and (after the causal twin's evaluation) measure the attention sink.
# Background; logs training/runs/finish-*.log; pids in training/runs/finish.pids. SUFFIX: as for run_both.sh.
set -e
cd "$(dirname "$0")/../.."
: "${OPENBLAS_CORETYPE:=SkylakeX}"
export OPENBLAS_CORETYPE
PY="nice -n 19 /usr/bin/python3"
MDM_N=${MDM_N:-"oracle=40 closed_book=10 gold_4=16"}
ARM_N=${ARM_N:-"oracle=150 closed_book=40 gold_4=60 gold_9=30"}
wait_run() {  # $1 = objective: until no train.py of that run is alive
  while pgrep -f "train.py --objective $1 " > /dev/null; do sleep 20; done
}
: > training/runs/finish.pids
( wait_run mdm
  $PY training/real/publish.py --run "training/runs/smol-mdm$SUFFIX" --name smollm2-135m-dream-world
  $PY training/real/eval_qa.py --delta models/smollm2-135m-dream-world/delta.safetensors --n $MDM_N \
      --out models/smollm2-135m-dream-world/eval-torch.json
) >> training/runs/finish-mdm.log 2>&1 &
echo $! >> training/runs/finish.pids
( wait_run arm
  $PY training/real/publish.py --run "training/runs/smol-arm$SUFFIX" --name smollm2-135m-causal-world
  $PY training/real/eval_qa.py --delta models/smollm2-135m-causal-world/delta.safetensors --n $ARM_N \
      --out models/smollm2-135m-causal-world/eval-torch.json
  while [ ! -f models/smollm2-135m-dream-world/delta.safetensors ]; do sleep 20; done
  $PY training/real/attention.py --mdm models/smollm2-135m-dream-world/delta.safetensors \
      --arm models/smollm2-135m-causal-world/delta.safetensors --n 4 --out training/real/attention.json
) >> training/runs/finish-arm.log 2>&1 &
echo $! >> training/runs/finish.pids
cat training/runs/finish.pids
