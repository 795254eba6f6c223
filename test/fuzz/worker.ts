/**
 * Runs fuzz cases in a worker thread, so the supervisor (fuzz.test.ts) can kill a case that hangs in
 * synchronous code. Case k (a global index over TARGETS in order) is posted as "start" before it runs
 * and "done" with its verdict after; the supervisor restarts the worker at k + 1 after a hang.
 */
import { parentPort, workerData } from "node:worker_threads";
import { caseSeed, judge, Rng, type FuzzTarget } from "./harness.js";
import { setDir, TARGETS } from "./targets.js";

const { seed, from, dir, only, selfTest } = workerData as { seed: number; from: number; dir: string; only?: string; selfTest?: boolean };
setDir(dir);
const port = parentPort!;

/** The harness's own check: one case of each verdict, so a broken counter cannot pass silently. */
const SELF_TEST: FuzzTarget[] = [
  {
    name: "self-test",
    count: 5,
    async setup() {},
    make(_rng, i) {
      const cases = [
        { what: "accepted", expect: "any" as const, run: () => ({}) },
        {
          what: "spins forever",
          expect: "any" as const,
          run: () => {
            for (;;) {
              /* a hang the supervisor must kill */
            }
          },
        },
        {
          what: "throws a TypeError",
          expect: "any" as const,
          run: () => {
            throw new TypeError("boom");
          },
        },
        { what: "accepts what it must reject", expect: "reject" as const, run: () => ({}) },
        {
          what: "prints a stack frame",
          expect: "any" as const,
          run: () => ({ output: "Error: x\n    at f (/a/b.js:1:2)\n", exitCode: 1 }),
        },
      ];
      return cases[i];
    },
  },
];

let k = 0;
for (const t of selfTest ? SELF_TEST : TARGETS) {
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
