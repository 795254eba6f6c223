#!/usr/bin/env bash
# The GPU check, one script (docs/benchmarks.md "GPU"): run from the repository root on the GPU machine.
#
#   bash bench/gpu/run.sh                 # LLaDA-8B and Dream-7B shapes, T 256 and 1024, results in $OUT (or bench/out/gpu)
#   bash bench/gpu/run.sh --tiny          # the same steps at tiny shapes on CPU (a smoke test, works here)
#
# 1. The PyTorch anchor (bench/gpu/anchor.py): random bf16 weights made on the device; plain forward
#    (eager and SDPA), eager output_attentions, the paper's per-layer re-forward; time and memory.
# 2. The ONNX engine on CUDA (bench/gpu/engine-step.ts), only where it can run: it needs Node ≥ 20 and
#    onnxruntime-node's CUDA provider libraries for this CUDA; otherwise the reason is written to
#    $OUT/engine-blocked.txt and the script still succeeds with the anchor's numbers.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-bench/out/gpu}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
if [[ "${1:-}" == "--tiny" ]]; then
  PY="${PYTHON:-/usr/bin/python3}"
  DEVICE=cpu; ANCHOR_ARGS=(--tiny --device cpu); T=16,32
  MODELS=(".cache/bench/gpu-tiny-llada:--layers 2 --width 64 --heads 4 --ffn 96 --vocab 128")
else
  DEVICE=cuda; ANCHOR_ARGS=(--device cuda); T=256,1024
  MODELS=("/tmp/floatscope-gpu/llada-8b:--preset llada-8b --dtype bf16 --shards 8"
          "/tmp/floatscope-gpu/dream-7b:--preset dream-7b --dtype bf16 --shards 8")
fi
{ date -u; nvidia-smi 2>/dev/null || echo "no nvidia-smi"; "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available())"; } > "$OUT/machine.txt" 2>&1
echo "[gpu] PyTorch anchor" >&2
"$PY" bench/gpu/anchor.py "${ANCHOR_ARGS[@]}" --T "$T" --out "$OUT/anchor.json" | tee "$OUT/anchor.md"

blocked=""
if ! command -v node >/dev/null; then
  blocked="no Node.js on this machine (the engine is a Node library; a Node ≥ 20 binary is ~100 MB, over the 64 MiB carried per call)"
elif [[ "$DEVICE" == cuda ]] && ! ls node_modules/onnxruntime-node/bin/napi-v*/linux/x64/libonnxruntime_providers_cuda.so >/dev/null 2>&1; then
  blocked="onnxruntime-node has no CUDA provider library here (its install script downloads the CUDA 12 build; see docs/benchmarks.md)"
elif [[ ! -d node_modules ]]; then
  blocked="node_modules is missing (npm ci needs the registry, which this machine cannot reach)"
fi
if [[ -n "$blocked" ]]; then
  echo "$blocked" | tee "$OUT/engine-blocked.txt" >&2
  exit 0
fi
dirs=()
for m in "${MODELS[@]}"; do
  dir="${m%%:*}"; read -r -a margs <<< "${m#*:}"
  echo "[gpu] checkpoint $dir" >&2
  "$PY" bench/make_model.py "$dir" "${margs[@]}" >&2
  dirs+=("$dir")
done
echo "[gpu] engine step on $DEVICE" >&2
npx tsx bench/gpu/engine-step.ts --device "$DEVICE" --T "$T" --out "$OUT/engine-step.json" "${dirs[@]}"
