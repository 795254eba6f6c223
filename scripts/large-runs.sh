#!/bin/sh
# The large runs behind the committed findings (findings/) and the real-base models' cards, one after another.
# Every step resumes where it stopped: after an interruption, run the script again (a finished step costs a
# few seconds: its rows are all there). Hours of CPU on 2 cores, so run it in the background:
#
#   nohup sh scripts/large-runs.sh > large-runs.log 2>&1 &
#   RUNS="claims cards" sh scripts/large-runs.sh              # only some steps, in the order given
#   FLOATSCOPE_NQ=/path/to/nq-open-oracle.jsonl.gz sh scripts/large-runs.sh   # the NQ step needs the data file
#   REUSE=1 RUNS="claims claims-rest" sh scripts/large-runs.sh   # after retraining one model: decode only its rows
#
# Steps (RUNS, default "claims claims-rest claims-rest-real cards frontier nq"):
#   claims    findings/claims.grid.json (every tier, n = 100 per model: sink, absorption, drift, token types)
#             through the evaluation grid → runs/claims/ → findings/claims.findings.json (docs/claims.md)
#   claims-rest  findings/claims-rest.grid.json (tiny and real-base tiers, n = 100 per model: RAG gain, drop over
#             distractors, spread over gold positions, angle share, retrieval heads) → runs/claims-rest/ →
#             findings/claims-rest.findings.json
#   claims-rest-real  findings/claims-rest-real.grid.json (the real tier's ARM, n = 100: angle share, retrieval
#             scores, closed-book and gold among 4) → runs/claims-rest-real/ → findings/claims-rest-real.findings.json
#   cards     the real-base pair's engine evaluation at the cards' n (npm run eval:real) → models/*/README.md
#   frontier  scripts/measure-frontier.ts at n = 100 per setting → findings/frontier.findings.json
#             (FRONTIER_FAMILIES=dream: the MDM's rows only, no findings file)
#   nq        scripts/measure-nq.ts at n = 300 → findings/nq-table1.findings.json (skipped without FLOATSCOPE_NQ;
#             the real-base pair first, then every tier; NQ_TIERS=real decodes one tier's rows only)
# Each step's invocation appends its provenance (commit at its start, machine, wall time, load, decode seconds per
# model) to findings/runs.jsonl (scripts/record-run.mjs): a "started" line as it begins and a "finished" line at its
# end (or when a signal stops it); a resumed step adds lines per invocation.
# then CLAIMS.md (committed, at the repository's root) from the findings files in findings/ alone: the verdicts of
# the large runs (notebook 10 writes notebooks/_executed/CLAIMS.md from the notebooks' own small runs).
#
# `ulimit -v`: the processes stay inside 40 GB of address space (tsx's WebAssembly reserves far more than it
# uses and fails to start under 20 GB; the 135M models need about 2 GB of memory).
set -e
# The whole script is one { … } block ending in exit: the shell parses all of it before running any of it,
# so editing this file while a run is live cannot change what that run does (dash reads a script as it goes).
{
cd "$(dirname "$0")/.."
RUNS=${RUNS:-"claims claims-rest claims-rest-real cards frontier nq"}
ulimit -v 40000000 2>/dev/null || true
say() { printf '[large-runs %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

bash scripts/setup.sh # the real tiers, with the committed deltas merged (a second run checks stamps only)
mkdir -p findings runs
for run in $RUNS; do
  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  t0=$(date +%s)
  commit0=$(git rev-parse HEAD 2>/dev/null || true)
  state0=unknown
  [ -n "$commit0" ] && { [ -z "$(git status --porcelain --untracked-files=no)" ] && state0=clean || state0=dirty; }
  say "$run: start (load $load0)"
  # the start line first, so an invocation killed before its end still leaves a line; a stop by a signal records
  # its end with a note
  RECORD_PHASE=start node scripts/record-run.mjs "$run" "$t0" "$load0" "$commit0" "$state0"
  trap 'RECORD_NOTE="stopped by a signal before the end of the step" node scripts/record-run.mjs "$run" "$t0" "$load0" "$commit0" "$state0" "runs/$run"; exit 130' INT TERM HUP
  case "$run" in
    claims | claims-rest | claims-rest-real)
      # REUSE=1 after a model of the grid changed: the old run moves to runs/<step>.previous and its rows of the
      # unchanged models are copied (`eval --reuse`), so only the changed model decodes
      reuse=""
      if [ -n "${REUSE:-}" ]; then
        [ -d "runs/$run.previous" ] || { [ ! -d "runs/$run" ] || mv "runs/$run" "runs/$run.previous"; }
        [ ! -d "runs/$run.previous" ] || reuse="--reuse runs/$run.previous"
      fi
      npx floatscope eval --grid "findings/$run.grid.json" --out "runs/$run" $reuse
      npx floatscope merge "runs/$run" --out "runs/$run/merged.jsonl" --findings "findings/$run.findings.json"
      ;;
    cards)
      npm run eval:real -- --threads 2 --batch-size 8 \
        --n oracle=300,oracle@32=300,long_oracle@64=100,gold_4=60,gold_9=30,closed_book=30
      ;;
    frontier)
      # FRONTIER_FAMILIES=dream decodes the MDM's rows only and writes no findings file (the twin's come later)
      if [ -n "${FRONTIER_FAMILIES:-}" ]; then
        npx tsx scripts/measure-frontier.ts --n 100 --families "$FRONTIER_FAMILIES"
      else
        npx tsx scripts/measure-frontier.ts --n 100 --out findings/frontier.findings.json
      fi
      ;;
    nq)
      if [ -z "${FLOATSCOPE_NQ:-}" ]; then
        say "nq: skipped (set FLOATSCOPE_NQ to the path of nq-open-oracle.jsonl.gz; README, \"Data\")"
        continue
      fi
      # the real-base pair first (the tier that decides the claim; the MDM is most of it), then every tier (the
      # real ARM; the pair's rows resume). NQ_TIERS=real (or real-base) decodes only that tier's rows and writes no
      # findings file, e.g. while a retrained model waits to be published
      if [ -n "${NQ_TIERS:-}" ]; then
        npx tsx scripts/measure-nq.ts --n 300 --threads 2 --tiers "$NQ_TIERS" --path "$FLOATSCOPE_NQ"
      else
        npx tsx scripts/measure-nq.ts --n 300 --threads 2 --tiers real-base --path "$FLOATSCOPE_NQ" --out findings/nq-table1.findings.json
        npx tsx scripts/measure-nq.ts --n 300 --threads 2 --path "$FLOATSCOPE_NQ" --out findings/nq-table1.findings.json
      fi
      ;;
    *)
      say "unknown step \"$run\" (claims, claims-rest, claims-rest-real, cards, frontier, nq)" >&2
      exit 2
      ;;
  esac
  # provenance: commit, machine, wall time of this invocation, decode seconds per model of a grid's rows
  node scripts/record-run.mjs "$run" "$t0" "$load0" "$commit0" "$state0" "runs/$run"
  trap - INT TERM HUP
  say "$run: done"
done
npx tsx scripts/render-claims.ts findings --out CLAIMS.md
say "CLAIMS.md rendered from findings/"
exit
}
