#!/usr/bin/env bash
# Set up if needed (node_modules, build, .venv, kernelspec), lint and type-check, then run every test once:
# vitest runs unit tests, the kernel integration test (real kernel over ZMQ) and the notebook
# test (executes notebooks/00-smoke.ipynb headless through scripts/reproduce.sh and reads the
# saved .ipynb).
#
#   npm test                      # everything
#   npm test -- test/display      # extra arguments go to vitest
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
t0=$SECONDS

bash scripts/setup.sh
# Static checks first (fast, and they name the file and line): ESLint over src, test, bench, scripts
# and widgets; tsc over src, test, bench and scripts (the build alone compiles only src).
static_failed=()
echo "[test] npm run lint"
npm run --silent lint || static_failed+=("lint (npm run lint)")
echo "[test] npm run typecheck"
npm run --silent typecheck || static_failed+=("typecheck (npm run typecheck)")
echo "[test] vitest run $*"
set +e
npx vitest run "$@" 2>&1 | tee .cache/vitest-last.log
rc=${PIPESTATUS[0]}
set -e
# One plain summary line (vitest's own is coloured and split over two lines).
plain="$(sed -e 's/\x1b\[[0-9;]*m//g' .cache/vitest-last.log)"
passed="$(grep -E '^ +Tests ' <<<"$plain" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)"
failed="$(grep -E '^ +Tests ' <<<"$plain" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || echo 0)"
skipped="$(grep -E '^ +Tests ' <<<"$plain" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+' || echo 0)"
echo "[test] finished in $((SECONDS - t0)) s"
if [[ -f .cache/setup/build-errors ]]; then
  echo "[test] FAILED: the library build (tsc) reported type errors; see the setup output above"
  rc=1
fi
for what in "${static_failed[@]}"; do
  echo "[test] FAILED: $what"
  rc=1
done
echo "vitest: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
exit "$rc"
