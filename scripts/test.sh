#!/usr/bin/env bash
# Set up if needed (system packages, node_modules, build, .venv, kernelspec), lint, format-check and type-check, then
# run every test once: vitest runs unit tests, the kernel integration test (real kernel over ZMQ), the
# notebook tests (execute notebooks headless through scripts/reproduce.sh) and the browser tests.
#
#   npm test                      # everything
#   npm test -- test/display      # extra arguments go to vitest
#
# System packages some test tiers need (Chromium, Debian's torch/numpy, git; scripts/lib/system-deps.sh)
# are installed with apt-get when we are root or have passwordless sudo; otherwise the run stops
# with the one command to run. FLOATSCOPE_ALLOW_SKIPS=1 runs anyway without those tiers. Every
# skipped test is listed, by tier, at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
t0=$SECONDS

# --- system packages ----------------------------------------------------------------------------
# shellcheck source=lib/system-deps.sh
source scripts/lib/system-deps.sh
system_missing
if [[ ${#SYSTEM_MISSING[@]} -gt 0 ]]; then
  if ! system_install; then
    printf '[test] missing system packages for some test tiers:\n' >&2
    printf '[test]   %s\n' "${SYSTEM_WHY[@]}" >&2
    if [[ "${FLOATSCOPE_ALLOW_SKIPS:-0}" == 1 ]]; then
      echo "[test] FLOATSCOPE_ALLOW_SKIPS=1: running without them (their tests will be listed as skipped)" >&2
    else
      echo "[test] stop. Install them with:" >&2
      echo "[test]   $SYSTEM_INSTALL_CMD" >&2
      echo "[test] (or run FLOATSCOPE_ALLOW_SKIPS=1 npm test to run the other tiers)" >&2
      exit 1
    fi
  fi
fi

bash scripts/setup.sh
mkdir -p .cache
# Static checks first (fast, and they name the file and line): ESLint over src, test, bench, scripts
# and widgets; tsc over src, test, bench and scripts (the build alone compiles only src).
static_failed=()
echo "[test] npm run lint"
npm run --silent lint || static_failed+=("lint (npm run lint)")
echo "[test] npm run format:check"
npm run --silent format:check || static_failed+=("formatting (npm run format:check; npm run format rewrites)")
echo "[test] npm run typecheck"
npm run --silent typecheck || static_failed+=("typecheck (npm run typecheck)")
echo "[test] vitest run $*"
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest-report.json "$@" 2>&1 | tee .cache/vitest-last.log
rc=${PIPESTATUS[0]}
set -e
# One plain summary line (vitest's own is coloured and split over two lines).
plain="$(sed -e 's/\x1b\[[0-9;]*m//g' .cache/vitest-last.log)"
passed="$(grep -E '^ +Tests ' <<<"$plain" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)"
failed="$(grep -E '^ +Tests ' <<<"$plain" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || echo 0)"
skipped="$(grep -E '^ +Tests ' <<<"$plain" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+' || echo 0)"
echo "[test] finished in $((SECONDS - t0)) s"
node scripts/lib/skip-summary.cjs .cache/vitest-report.json
if [[ -f .cache/setup/build-errors ]]; then
  echo "[test] FAILED: the library build (tsc) reported type errors; see the setup output above"
  rc=1
fi
for what in "${static_failed[@]}"; do
  echo "[test] FAILED: $what"
  rc=1
done
echo "vitest: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
# The fuzz suite's own line (test/fuzz/fuzz.test.ts), when it ran.
grep -E '^fuzz: [0-9]+ cases, [0-9]+ crashes' <<<"$plain" | tail -1 || true
# The hostile-string suites' lines (test/fuzz/hostile-*.test.ts, the browser's hostile-names test), when they ran.
grep -E '^hostile-[a-z-]+: ' <<<"$plain" | sort -u || true
exit "$rc"
