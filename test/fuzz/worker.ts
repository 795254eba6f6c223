/**
 * Runs fuzz cases in a worker thread, so the supervisor (fuzz.test.ts) can kill a case that hangs in
 * synchronous code. Case k (a global index over TARGETS in order) is posted as "start" before it runs
 * and "done" with its verdict after; the supervisor restarts the worker at k + 1 after a hang.
 */
import { parentPort, workerData } from "node:worker_threads";
import { caseSeed, judge, Rng } from "./harness.js";
import { setDir, TARGETS } from "./targets.js";

const { seed, from, dir, only } = workerData as { seed: number; from: number; dir: string; only?: string };
setDir(dir);
const port = parentPort!;
let k = 0;
for (const t of TARGETS) {
  if (k + t.count <= from || (only && !only.startsWith(`${t.name}:`) && only !== t.name)) {
    k += t.count;
    continue;
  }
  await t.setup(dir);
  for (let i = 0; i < t.count; i++, k++) {
    if (k < from) continue;
    if (only && only.includes(":") && only !== `${t.name}:${i}`) continue;
    port.postMessage({ type: "start", k });
    const c = t.make(new Rng(caseSeed(seed, t.name, i)), i);
    const outcome = await judge(t.name, i, c);
    port.postMessage({ type: "done", k, outcome });
  }
}
port.postMessage({ type: "end" });
