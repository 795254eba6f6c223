#!/usr/bin/env bash
# The GPU bundle: everything bench/gpu/run.sh needs to run the engine on a CUDA machine that has no Node.js
# (the lent GPU machine has CUDA 13, cuDNN 9 and PyTorch, but no Node and no network), and whether it fits one
# device call. Writes, under the git-ignored bench/out/gpu-pack/:
#
#   node.tar.xz      a Node.js binary (this machine's `node`)
#   project.tar.xz   bench/gpu/engine-step.ts bundled with the library (esbuild) + onnxruntime-node's JS and
#                    CPU core library (libonnxruntime.so.1, binding)
#   provider.tar.xz  onnxruntime-node's CUDA provider (libonnxruntime_providers_{cuda,shared}.so), from
#                    .cache/cuda-ep (bash scripts/setup-cuda.sh --provider-only fetches it, 247 MB)
#   sizes.md         each part's size, raw and xz-compressed, against what one device call can carry
#
#   bash bench/gpu/pack.sh            # then, if sizes.md says it fits: carry bench/out/gpu-pack on the device call
#   bash bench/gpu/pack.sh --no-provider   # the other parts only (no 247 MB download needed)
#   GPU_PACK_XZ_LEVEL=1 bash bench/gpu/pack.sh   # faster, larger archives (default 6)
#
# A device call carries at most 64 MiB *including the repository's tracked and untracked-not-ignored files*,
# so the room left for carried files is 64 MiB minus the working tree, which this script measures too.
# bench/gpu/run.sh unpacks the three archives when they are there (docs/benchmarks.md, "GPU").
set -euo pipefail
cd "$(dirname "$0")/../.."
say() { printf '[gpu-pack] %s\n' "$*" >&2; }
die() { printf '[gpu-pack] error: %s\n' "$*" >&2; exit 1; }

WITH_PROVIDER=1
case "${1:-}" in
  "") ;;
  --no-provider) WITH_PROVIDER=0 ;;
  *) die "unknown option '$1' (expected --no-provider or nothing)" ;;
esac

OUTDIR=bench/out/gpu-pack
LEVEL="${GPU_PACK_XZ_LEVEL:-6}"
[[ "$LEVEL" =~ ^[0-9]$ ]] || die "GPU_PACK_XZ_LEVEL must be one digit, 0 to 9 (got '$LEVEL')"
STAGE="$OUTDIR/stage"
command -v node >/dev/null || die "node not found (the bundle copies this machine's Node binary)"
command -v xz >/dev/null || die "xz not found (apt-get install xz-utils)"
[[ -x node_modules/.bin/esbuild ]] || die "node_modules/.bin/esbuild is missing; run bash scripts/setup.sh first"
ORT_DIR="$(node -e 'const p = require("path"); process.stdout.write(p.dirname(require.resolve("onnxruntime-node/package.json", { paths: [process.argv[1]] })))' "$PWD/src" 2>/dev/null)" ||
  die "onnxruntime-node is not installed; run bash scripts/setup.sh first"
# onnxruntime-common's "exports" hide its package.json: walk up from its entry point instead.
COMMON_DIR="$(node -e 'const p = require("path"), fs = require("fs"); let d = p.dirname(require.resolve("onnxruntime-common", { paths: [process.argv[1]] })); while (!(fs.existsSync(p.join(d, "package.json")) && JSON.parse(fs.readFileSync(p.join(d, "package.json"), "utf8")).name === "onnxruntime-common")) d = p.dirname(d); process.stdout.write(d)' "$ORT_DIR" 2>/dev/null)" ||
  die "onnxruntime-common (onnxruntime-node's dependency) is not installed; run bash scripts/setup.sh first"
ORT_VERSION="$(node -p 'require(process.argv[1]).version' "$ORT_DIR/package.json")"
PROVIDER_SRC=".cache/cuda-ep/onnxruntime-$ORT_VERSION/provider"
if [[ $WITH_PROVIDER == 1 && ! -f "$PROVIDER_SRC/libonnxruntime_providers_cuda.so" ]]; then
  die "no CUDA provider in $PROVIDER_SRC; run bash scripts/setup-cuda.sh --provider-only first (247 MB download), or pass --no-provider"
fi

rm -rf "$STAGE" "$OUTDIR"/*.tar.xz "$OUTDIR/sizes.md"
mkdir -p "$STAGE/node/bin" "$STAGE/project/node_modules/onnxruntime-node/bin/napi-v6/linux" "$STAGE/project/node_modules/onnxruntime-common" "$STAGE/provider"

# --- Node ---------------------------------------------------------------------------------------------
cp "$(readlink -f "$(command -v node)")" "$STAGE/node/bin/node"
node --version >"$STAGE/node/VERSION"

# --- the project: one ES module (library + bench script), onnxruntime-node kept external (native binding) --
# `require` for the bundled CommonJS dependencies; import.meta.url then resolves onnxruntime-node next to the bundle.
node_modules/.bin/esbuild bench/gpu/engine-step.ts --bundle --platform=node --format=esm --target=node20 \
  --external:onnxruntime-node --log-level=warning --outfile="$STAGE/project/engine-step.mjs" \
  --banner:js="import { createRequire as __fsRequire } from 'node:module'; const require = __fsRequire(import.meta.url);"
cp "$ORT_DIR/package.json" "$STAGE/project/node_modules/onnxruntime-node/"
cp -r "$ORT_DIR/dist" "$STAGE/project/node_modules/onnxruntime-node/"
cp -r "$ORT_DIR/bin/napi-v6/linux/x64" "$STAGE/project/node_modules/onnxruntime-node/bin/napi-v6/linux/"
rm -f "$STAGE/project/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_"*
cp "$COMMON_DIR/package.json" "$STAGE/project/node_modules/onnxruntime-common/"
cp -r "$COMMON_DIR/dist" "$STAGE/project/node_modules/onnxruntime-common/"
find "$STAGE/project/node_modules" -name '*.map' -delete

# --- the CUDA provider, unmodified (run.sh points LD_LIBRARY_PATH at the machine's CUDA 13 libraries) -------
if [[ $WITH_PROVIDER == 1 ]]; then
  cp "$PROVIDER_SRC/libonnxruntime_providers_cuda.so" "$PROVIDER_SRC/libonnxruntime_providers_shared.so" "$STAGE/provider/"
fi

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
rows=()
total=0
for part in node project provider; do
  [[ $part == provider && $WITH_PROVIDER == 0 ]] && continue
  say "compressing $part (xz -$LEVEL)"
  raw="$(du -sb "$STAGE/$part" | cut -f1)"
  tar -C "$STAGE" -cf - "$part" | xz "-$LEVEL" -T0 >"$OUTDIR/$part.tar.xz"
  packed="$(stat -c %s "$OUTDIR/$part.tar.xz")"
  total=$((total + packed))
  rows+=("| $part | $(mib "$raw") | $(mib "$packed") |")
done
(cd "$OUTDIR" && sha256sum ./*.tar.xz >SHA256SUMS)
rm -rf "$STAGE" # 400 MB unpacked; the archives are the bundle

# What a device call would carry besides the bundle: tracked + untracked-not-ignored files.
tree="$( { git ls-files -z; git ls-files -z --others --exclude-standard; } | du -cb --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)"
limit=$((64 * 1048576))
room=$((limit - tree))
{
  echo "GPU bundle for onnxruntime-node $ORT_VERSION, Node $(node --version), $(date -u +%Y-%m-%d) (bench/gpu/pack.sh)"
  echo
  echo "| part | raw MiB | xz -$LEVEL MiB |"
  echo "|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo "| **bundle** |  | **$(mib "$total")** |"
  echo
  echo "One device call carries 64 MiB in all; the working tree takes $(mib "$tree") MiB of it, leaving $(mib "$room") MiB."
  if ((total <= room)); then
    echo "The bundle fits: carry bench/out/gpu-pack (docs/benchmarks.md, \"GPU\")."
  else
    echo "The bundle does not fit: $(mib "$total") MiB against $(mib "$room") MiB, over by $(mib $((total - room))) MiB."
  fi
} | tee "$OUTDIR/sizes.md"
