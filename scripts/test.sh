#!/usr/bin/env bash
# Set up if needed (node_modules, build, .venv, kernelspec), then run every test once:
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
echo "vitest: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
# The fuzz suite's own line (test/fuzz/fuzz.test.ts), when it ran.
grep -E '^fuzz: [0-9]+ cases, [0-9]+ crashes' <<<"$plain" | tail -1 || true
exit "$rc"
