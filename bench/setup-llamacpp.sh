#!/usr/bin/env bash
# Builds llama.cpp's diffusion runner (llama-diffusion-cli, examples/diffusion) and llama-bench from
# pinned sources, for the scale benchmark (bench/scale.ts). A bench-only set-up step: never part of
# `npm test` or CI.
#
# The sources come from a registry package rather than a git clone: the PyPI sdist of
# llama-cpp-python (pinned below) vendors llama.cpp under vendor/llama.cpp. Everything lands in
# .cache/llamacpp/ (git-ignored). A second run finds the stamp and does nothing.
#
#   bash bench/setup-llamacpp.sh            # JOBS=2 by default; JOBS=4 bash bench/setup-llamacpp.sh
set -euo pipefail

PIN="llama-cpp-python==0.3.36"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${ROOT}/.cache/llamacpp"
STAMP="${DIR}/stamp"
JOBS="${JOBS:-2}"
PYTHON="${PYTHON:-python3}"

# bumped whenever the cmake options below change, so that a second run rebuilds
FLAGS_VERSION="flags 2 (no AMX)"
if [[ -f "${STAMP}" && "$(head -n 1 "${STAMP}")" == "${PIN}" && "$(sed -n 2p "${STAMP}")" == "${FLAGS_VERSION}" \
      && -x "${DIR}/bin/llama-diffusion-cli" && -x "${DIR}/bin/llama-bench" ]]; then
  echo "llama.cpp already built (${PIN}): ${DIR}/bin"
  exit 0
fi

mkdir -p "${DIR}/sdist" "${DIR}/bin"
if ! ls "${DIR}/sdist/"llama_cpp_python-*.tar.gz >/dev/null 2>&1; then
  # --no-binary for this package only: the sdist, while pip's metadata step may take its build
  # back-ends (scikit-build-core) as wheels.
  "${PYTHON}" -m pip download "${PIN}" --no-deps --no-binary llama-cpp-python --dest "${DIR}/sdist"
fi
TARBALL="$(ls "${DIR}/sdist/"llama_cpp_python-*.tar.gz | head -n 1)"

SRC="${DIR}/src/vendor/llama.cpp"
if [[ ! -f "${DIR}/src/.unpacked" ]]; then
  rm -rf "${DIR}/src"
  mkdir -p "${DIR}/src"
  tar -xzf "${TARBALL}" -C "${DIR}/src" --strip-components=1
  touch "${DIR}/src/.unpacked"
fi
if [[ ! -f "${SRC}/CMakeLists.txt" || ! -d "${SRC}/examples/diffusion" ]]; then
  echo "setup-llamacpp: ${TARBALL} has no vendor/llama.cpp with examples/diffusion" >&2
  exit 1
fi

# CPU only, no curl (the benchmark opens a local file), static libs so the two binaries stand alone
# in bin/. The instruction sets are the CPU's own (from /proc/cpuinfo) but never AMX: with
# -march=native on a CPU that reports amx_tile/amx_int8, llama.cpp puts Q4_0 weights into its AMX
# buffers, and on the benchmark machine (a VM) the AMX matmul crashes (SIGSEGV in
# ggml_backend_amx_mul_mat) at the first step; without AMX it repacks them for AVX-512 VNNI instead.
has() { grep -m1 '^flags' /proc/cpuinfo | grep -qw "$1"; }
onoff() { if has "$1"; then echo ON; else echo OFF; fi; }
cmake -S "${SRC}" -B "${DIR}/build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF \
  -DGGML_SSE42="$(onoff sse4_2)" -DGGML_AVX="$(onoff avx)" -DGGML_AVX2="$(onoff avx2)" \
  -DGGML_FMA="$(onoff fma)" -DGGML_F16C="$(onoff f16c)" -DGGML_BMI2="$(onoff bmi2)" \
  -DGGML_AVX_VNNI="$(onoff avx_vnni)" -DGGML_AVX512="$(onoff avx512f)" \
  -DGGML_AVX512_VBMI="$(onoff avx512vbmi)" -DGGML_AVX512_VNNI="$(onoff avx512_vnni)" \
  -DGGML_AVX512_BF16="$(onoff avx512_bf16)" \
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
  -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_BUILD_EXAMPLES=ON \
  -DLLAMA_BUILD_TOOLS=ON
cmake --build "${DIR}/build" --config Release -j "${JOBS}" --target llama-diffusion-cli llama-bench

for b in llama-diffusion-cli llama-bench; do
  cp "${DIR}/build/bin/${b}" "${DIR}/bin/${b}"
done

# the stamp: the pin and the build flags' version, then the binary's version line
{
  echo "${PIN}"
  echo "${FLAGS_VERSION}"
  "${DIR}/bin/llama-bench" --version 2>&1 | head -n 2 || true
} > "${STAMP}"
echo "built: ${DIR}/bin (stamp ${STAMP})"
