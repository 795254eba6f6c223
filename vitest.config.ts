import * as os from "node:os";
import * as path from "node:path";
import { defineConfig } from "vitest/config";

// One weight-cache folder per test run, removed at its end (test/support/weight-cache-dir.ts).
// One temp folder per test run too, removed at its end: tests' scratch folders (os.tmpdir()) and those of
// the processes they start land there, not loose in /tmp. vitest evaluates this file more than once in a
// process: the second time TMPDIR is already this run's folder, so keep it rather than nest another.
const inherited = process.env.TMPDIR;
const TEST_TMP = inherited?.includes("floatscope-test-tmp-") ? inherited : path.join(os.tmpdir(), `floatscope-test-tmp-${process.pid}`);
process.env.TMPDIR = TEST_TMP;
const WEIGHT_CACHE = process.env.FLOATSCOPE_CACHE_DIR?.includes("floatscope-test-weights-")
  ? process.env.FLOATSCOPE_CACHE_DIR
  : path.join(path.dirname(TEST_TMP), `floatscope-test-weights-${process.pid}`);
process.env.FLOATSCOPE_CACHE_DIR = WEIGHT_CACHE;

// Test tiers (README "Tests"): `vitest run` runs them all; `vitest run --project <tier>` one of them.
// integration = needs a second process, language or checkout (a real Jupyter kernel over ZMQ, Python + torch/numpy,
// a fresh clone set up with npm ci);
// notebooks = executes notebooks headless (or reads them); browser = JupyterLab in a headless browser.
const INTEGRATION = [
  "test/kernel/**/*.test.ts",
  "test/training/**/*.test.ts",
  "test/trace/python-reader.test.ts",
  "test/cli/fresh-clone.test.ts",
  "test/bench/**/*.test.ts",
];
const NOTEBOOKS = ["test/notebooks/**/*.test.ts"];
const BROWSER = ["test/widgets/browser/**/*.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: keep workers low so ORT sessions do not fight each other.
    maxWorkers: 2,
    pool: "forks",
    env: { FLOATSCOPE_CACHE_DIR: WEIGHT_CACHE, TMPDIR: TEST_TMP },
    globalSetup: ["test/support/weight-cache-dir.ts"],
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/**/*.test.ts"], exclude: ["**/node_modules/**", ...INTEGRATION, ...NOTEBOOKS, ...BROWSER] },
      },
      { extends: true, test: { name: "integration", include: INTEGRATION } },
      { extends: true, test: { name: "notebooks", include: NOTEBOOKS } },
      { extends: true, test: { name: "browser", include: BROWSER } },
    ],
  },
});
