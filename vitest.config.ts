import * as os from "node:os";
import * as path from "node:path";
import { defineConfig } from "vitest/config";

// One weight-cache folder per test run, removed at its end (test/support/weight-cache-dir.ts).
const WEIGHT_CACHE = path.join(os.tmpdir(), `floatscope-test-weights-${process.pid}`);
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
    env: { FLOATSCOPE_CACHE_DIR: WEIGHT_CACHE },
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
