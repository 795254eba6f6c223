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

if [[ -f "${STAMP}" && "$(head -n 1 "${STAMP}")" == "${PIN}" \
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

rm -rf "${DIR}/src"
mkdir -p "${DIR}/src"
tar -xzf "${TARBALL}" -C "${DIR}/src" --strip-components=1
SRC="${DIR}/src/vendor/llama.cpp"
if [[ ! -f "${SRC}/CMakeLists.txt" || ! -d "${SRC}/examples/diffusion" ]]; then
  echo "setup-llamacpp: ${TARBALL} has no vendor/llama.cpp with examples/diffusion" >&2
  exit 1
fi

# CPU only, native instructions, no curl (the benchmark opens a local file), static libs so the two
# binaries stand alone in bin/.
cmake -S "${SRC}" -B "${DIR}/build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=ON \
  -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_BUILD_EXAMPLES=ON \
  -DLLAMA_BUILD_TOOLS=ON
cmake --build "${DIR}/build" --config Release -j "${JOBS}" --target llama-diffusion-cli llama-bench

for b in llama-diffusion-cli llama-bench; do
  cp "${DIR}/build/bin/${b}" "${DIR}/bin/${b}"
done

# the stamp: the pin, then the vendored llama.cpp's build number and commit when the sdist records them
{
  echo "${PIN}"
  "${DIR}/bin/llama-bench" --version 2>&1 | head -n 2 || true
} > "${STAMP}"
echo "built: ${DIR}/bin (stamp ${STAMP})"
