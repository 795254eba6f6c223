/**
 * vitest globalSetup: the engine's weight cache (src/graph/build/weight-cache.ts) goes to a folder of
 * this run's own, removed when the run ends, so tests neither reuse a cache from an earlier run (a
 * hit would hide a broken write) nor leave hundreds of MB in the user's temp folder. The same for the
 * run's temp folder (TMPDIR, which os.tmpdir() reads): the scratch folders tests make there are removed
 * with it. Both folders are chosen in vitest.config.ts, which every worker and CLI child inherits.
 */
import * as fs from "node:fs";

export default function setup(): () => void {
  const ours = (dir: string | undefined, marker: string): dir is string => !!dir && dir.includes(marker);
  const dirs = [
    [process.env.FLOATSCOPE_CACHE_DIR, "floatscope-test-weights-"],
    [process.env.TMPDIR, "floatscope-test-tmp-"],
  ].flatMap(([dir, marker]) => (ours(dir, marker as string) ? [dir] : []));
  for (const dir of dirs) fs.mkdirSync(dir, { recursive: true });
  return () => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  };
}
