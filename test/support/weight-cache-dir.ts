/**
 * vitest globalSetup: the engine's weight cache (src/graph/build/weight-cache.ts) goes to a folder of
 * this run's own, removed when the run ends, so tests neither reuse a cache from an earlier run (a
 * hit would hide a broken write) nor leave hundreds of MB in the user's temp folder. The folder is
 * chosen in vitest.config.ts (`FLOATSCOPE_CACHE_DIR`), which every worker and CLI child inherits.
 */
import * as fs from "node:fs";

export default function setup(): () => void {
  const dir = process.env.FLOATSCOPE_CACHE_DIR;
  if (dir) fs.mkdirSync(dir, { recursive: true });
  return () => {
    if (dir && dir.includes("floatscope-test-weights-")) fs.rmSync(dir, { recursive: true, force: true });
  };
}
