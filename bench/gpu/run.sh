#!/usr/bin/env bash
# The GPU check, one command (docs/benchmarks.md, "GPU"): run from the repository root on the GPU machine.
#
#   bash bench/gpu/run.sh                 # LLaDA-8B shape (--all: and Dream-7B), T 256 and 1024; results in $OUT (or bench/out/gpu)
#   bash bench/gpu/run.sh --tiny          # the same steps at tiny shapes on CPU (a smoke test, works here)
#   GPU_USE_BUNDLE=1 bash bench/gpu/run.sh --tiny   # the same, the engine from bench/out/gpu-pack (pack.sh)
#
# 1. The PyTorch anchor (bench/gpu/anchor.py): random bf16 weights made on the device; plain forward
#    (eager and SDPA), eager output_attentions, the paper's per-layer re-forward; time and memory.
# 2. The ONNX engine on CUDA (bench/gpu/engine-step.ts), only where it can run: it needs Node.js ≥ 20
#    (on PATH with this checkout's node_modules, or the bundle bench/gpu/pack.sh writes to bench/out/gpu-pack,
#    carried along) and onnxruntime-node's CUDA provider (scripts/setup-cuda.sh, or the bundle's), whose CUDA 13
#    libraries are looked up in python3's nvidia/*/lib folders (PyTorch's) and LD_LIBRARY_PATH. Otherwise the
#    reason is written to $OUT/engine-blocked.txt and the script still succeeds with the anchor's numbers.
# 3. One table of both (bench/gpu/table.py) on stdout and in $OUT/table.md.
#
# Time: the whole script ends within GPU_BUDGET_S seconds (default 540; a device call is cut at 600): the anchor
# gets up to 40 % of it, the engine the rest, each under `timeout`, and what finished is kept (both write
# their JSON as they go).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-bench/out/gpu}"
mkdir -p "$OUT"
rm -f "$OUT/engine-blocked.txt" "$OUT/engine-step.json" "$OUT/anchor.json"
PY="${PYTHON:-python3}"
BUDGET_S="${GPU_BUDGET_S:-540}"
t0=$SECONDS
left() { echo $((BUDGET_S - (SECONDS - t0))); }
MODE=gpu
ALL=0
for a in "$@"; do
  case "$a" in
    --tiny) MODE=tiny ;;
    --all) ALL=1 ;;
    *) echo "[gpu] error: unknown option '$a' (expected --tiny or --all)" >&2; exit 2 ;;
  esac
done
if [[ $MODE == tiny ]]; then
  PY="${PYTHON:-/usr/bin/python3}"
  DEVICE=cpu; ANCHOR_ARGS=(--tiny --device cpu); T=16,32
  MODELS=(".cache/bench/gpu-tiny-llada:--layers 2 --width 64 --heads 4 --ffn 96 --vocab 128")
else
  DEVICE=cuda; ANCHOR_ARGS=(--device cuda); T=256,1024
  MODELS=("/tmp/floatscope-gpu/llada-8b:--preset llada-8b --dtype bf16 --shards 8")
  [[ $ALL == 1 ]] && MODELS+=("/tmp/floatscope-gpu/dream-7b:--preset dream-7b --dtype bf16 --shards 8")
  [[ $ALL == 1 ]] || ANCHOR_ARGS+=(--models LLaDA-8B)
fi
{ date -u; nvidia-smi 2>/dev/null || echo "no nvidia-smi"; "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available())" || echo "no torch in $PY"; } > "$OUT/machine.txt" 2>&1

echo "[gpu] PyTorch anchor" >&2
PYTHONUNBUFFERED=1 timeout $((BUDGET_S * 2 / 5)) "$PY" bench/gpu/anchor.py "${ANCHOR_ARGS[@]}" --T "$T" --out "$OUT/anchor.json" >"$OUT/anchor.md" ||
  echo "[gpu] the anchor stopped early (exit $?; its time share is $((BUDGET_S * 2 / 5)) s)" >&2

# --- can the engine run here? -----------------------------------------------------------------------------
blocked=""
ENGINE=()
BUNDLE=bench/out/gpu-pack
ORT_BIN=""
if [[ -f "$BUNDLE/node.tar.xz" && -f "$BUNDLE/project.tar.xz" ]] && { ! command -v node >/dev/null || [[ "${GPU_USE_BUNDLE:-0}" == 1 ]]; }; then
  # the bundle from bench/gpu/pack.sh, carried with the call (GPU_USE_BUNDLE=1 prefers it to a local Node)
  if ! (cd "$BUNDLE" && sha256sum --quiet -c SHA256SUMS >&2); then
    blocked="the carried GPU bundle ($BUNDLE) does not match its SHA256SUMS (an incomplete copy?)"
  else
    B=/tmp/floatscope-gpu/bundle
    rm -rf "$B" && mkdir -p "$B"
    for part in "$BUNDLE"/*.tar.xz; do
      # tar needs the xz program; Python's lzma is the fallback (python3 is there: it runs the anchor)
      tar -C "$B" -xJf "$part" 2>/dev/null || "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' "$part" "$B"
    done
    ORT_BIN="$B/project/node_modules/onnxruntime-node/bin/napi-v6/linux/x64"
    [[ -f "$B/provider/libonnxruntime_providers_cuda.so" ]] && cp "$B"/provider/*.so "$ORT_BIN/"
    ENGINE=("$B/node/bin/node" "$B/project/engine-step.mjs")
  fi
elif command -v node >/dev/null && [[ -d node_modules/onnxruntime-node ]]; then
  ORT_BIN="$(ls -d node_modules/onnxruntime-node/bin/napi-v*/linux/x64 2>/dev/null | head -n 1 || true)"
  ENGINE=(npx tsx bench/gpu/engine-step.ts)
elif ! command -v node >/dev/null; then
  blocked="no Node.js on this machine, and no GPU bundle was carried (bench/gpu/pack.sh writes one; docs/benchmarks.md, \"GPU\", says why it does not fit one device call)"
else
  blocked="node_modules is missing (run bash scripts/setup.sh where the registry is reachable)"
fi
if [[ -z "$blocked" && $DEVICE == cuda ]]; then
  # CUDA 13 + cuDNN 9 from PyTorch's wheels (nvidia/*/lib in python3's site-packages), ahead of what was set.
  nv="$("$PY" -c 'import glob, os, site; print(":".join(d for sp in site.getsitepackages() for d in sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib"))) if glob.glob(os.path.join(d, "lib*.so*"))))' 2>/dev/null || true)"
  export LD_LIBRARY_PATH="${nv}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >>"$OUT/machine.txt"
  prov="$ORT_BIN/libonnxruntime_providers_cuda.so"
  if [[ ! -f "$prov" ]]; then
    blocked="onnxruntime-node has no CUDA provider here (bash scripts/setup-cuda.sh installs it; the GPU bundle carries it when built without --no-provider)"
  else
    missing="$(LC_ALL=C ldd "$prov" 2>/dev/null | awk '/=> not found/ { print $1 }' | tr '\n' ' ')"
    echo "provider unresolved: ${missing:-none}" >>"$OUT/machine.txt"
    [[ -n "$missing" ]] && blocked="the CUDA provider cannot load here: ${missing% } not found (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
  fi
fi
if [[ -n "$blocked" ]]; then
  echo "$blocked" | tee "$OUT/engine-blocked.txt" >&2
else
  dirs=()
  for m in "${MODELS[@]}"; do
    dir="${m%%:*}"; read -r -a margs <<< "${m#*:}"
    echo "[gpu] checkpoint $dir ($(left) s left)" >&2
    "$PY" bench/make_model.py "$dir" "${margs[@]}" >&2
    dirs+=("$dir")
  done
  echo "[gpu] engine step on $DEVICE ($(left) s left)" >&2
  timeout "$(left)" "${ENGINE[@]}" --device "$DEVICE" --T "$T" --out "$OUT/engine-step.json" "${dirs[@]}" >&2 ||
    echo "[gpu] the engine step stopped early (exit $?); the table shows what finished" >&2
fi
"$PY" bench/gpu/table.py "$OUT" | tee "$OUT/table.md"
