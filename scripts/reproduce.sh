#!/usr/bin/env bash
# The main job: set up if needed, then execute the figure notebooks headless with the
# "TypeScript (floatscope)" kernel. Executed copies (with all outputs) go to notebooks/_executed/.
#
#   npm run reproduce                               # every notebooks/NN-*.ipynb, in order
#   npm run reproduce -- notebooks/00-smoke.ipynb   # just these
#   npm run reproduce -- --output-dir /tmp/out …    # elsewhere
#
# Notebooks get their inputs from the environment (the kernel inherits it), e.g.
# FLOATSCOPE_DATA=/path/to/nq-open-oracle.jsonl.gz. FLOATSCOPE_SKIP_SETUP=1 skips the setup check.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

[[ "${FLOATSCOPE_SKIP_SETUP:-0}" == 1 ]] || FLOATSCOPE_SETUP_QUIET=1 bash scripts/setup.sh

out_dir="notebooks/_executed"
notebooks=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --output-dir) out_dir="$2"; shift 2 ;;
    --output-dir=*) out_dir="${1#*=}"; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) notebooks+=("$1"); shift ;;
  esac
done
if [[ ${#notebooks[@]} -eq 0 ]]; then
  shopt -s nullglob
  notebooks=(notebooks/[0-9][0-9]-*.ipynb)
  [[ ${#notebooks[@]} -gt 0 ]] || { echo "[reproduce] no notebooks/NN-*.ipynb found" >&2; exit 1; }
fi

# Our kernelspec lives in .venv; put it first so a same-named kernel in ~/.local cannot shadow it.
export JUPYTER_PATH="$ROOT/.venv/share/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
export JUPYTER_PLATFORM_DIRS=1
echo "[reproduce] executing ${#notebooks[@]} notebook(s) with the floatscope kernel -> $out_dir/"
.venv/bin/python scripts/run-notebooks.py --output-dir "$out_dir" "${notebooks[@]}"
echo "[reproduce] done. Open the executed notebooks with: npm start  (then $out_dir/)"
