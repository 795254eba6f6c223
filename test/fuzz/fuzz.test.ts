/**
 * The fuzz suite: seeded mutations of traces, checkpoints (safetensors), QA data and results files,
 * fed to our parsers and to the CLI (targets.ts). It fails on any crash (a non-typed exception), hang
 * (a case past the per-case limit), stack trace in CLI output, or silent acceptance (a mutation that
 * must be detected, accepted), and prints one summary line:
 *
 *   fuzz: N cases, 0 crashes, 0 hangs, 0 stack traces, 0 silent acceptances
 *
 * Cases run in a worker thread that is killed and restarted after a hang. Reproduce one case with
 * FUZZ_ONLY=<target>:<index> (and FUZZ_SEED=<seed> when the failing run used another seed).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, expect, it } from "vitest";
import { summarize, summaryLine, type CaseOutcome } from "./harness.js";
import { TARGETS } from "./targets.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20260107);
const ONLY = process.env.FUZZ_ONLY;
/** Per-case limit: generous for two shared cores; a healthy case takes milliseconds. */
const CASE_LIMIT_MS = 10_000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-fuzz-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function caseAt(k: number): { target: string; index: number } {
  let base = 0;
  for (const t of TARGETS) {
    if (k < base + t.count) return { target: t.name, index: k - base };
    base += t.count;
  }
  return { target: "?", index: k };
}

interface RunOptions {
  limitMs: number;
  selfTest?: boolean;
}

/** Run every case from `from`, restarting the worker after a hang; resolves with all outcomes. */
function runFrom(from: number, outcomes: CaseOutcome[], o: RunOptions = { limitMs: CASE_LIMIT_MS }): Promise<void> {
  const limit = o.limitMs;
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./boot.mjs", import.meta.url), {
      workerData: {
        entry: new URL("./worker.ts", import.meta.url).href,
        seed: SEED,
        from,
        dir,
        only: o.selfTest ? undefined : ONLY,
        selfTest: o.selfTest,
      },
    });
    let current: { k: number; at: number } | undefined;
    let settled = false;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(watch);
      f();
    };
    const watch = setInterval(() => {
      if (!current || Date.now() - current.at < limit) return;
      const { k } = current;
      const { target, index } = o.selfTest ? { target: "self-test", index: k } : caseAt(k);
      outcomes.push({ target, index, verdict: "hang", what: `(killed after ${limit} ms)` });
      current = undefined;
      finish(
        () =>
          void worker
            .terminate()
            .then(() => runFrom(k + 1, outcomes, o))
            .then(resolve, reject),
      );
    }, 100);
    worker.on("message", (m: { type: string; k: number; outcome?: CaseOutcome }) => {
      if (m.type === "start") current = { k: m.k, at: Date.now() };
      else if (m.type === "done") {
        current = undefined;
        outcomes.push(m.outcome!);
      } else if (m.type === "end") finish(() => void worker.terminate().then(() => resolve()));
    });
    worker.on("error", (e) => finish(() => reject(e)));
    worker.on("exit", (code) => finish(() => (code === 0 ? resolve() : reject(new Error(`fuzz worker exited with code ${code}`)))));
  });
}

it("the harness counts each failure kind (a hang is killed and the run goes on)", async () => {
  const outcomes: CaseOutcome[] = [];
  await runFrom(0, outcomes, { limitMs: 1500, selfTest: true });
  expect(outcomes.map((o) => o.verdict)).toEqual(["accepted", "hang", "crash", "silent acceptance", "stack trace"]);
  expect(summaryLine(summarize(outcomes))).toBe("fuzz: 5 cases, 1 crashes, 1 hangs, 1 stack traces, 1 silent acceptances");
}, 60_000);

it("fuzz: no crashes, hangs, stack traces or silent acceptances", async () => {
  const outcomes: CaseOutcome[] = [];
  await runFrom(0, outcomes);
  const s = summarize(outcomes);
  const bad = outcomes.filter((o) => o.verdict !== "accepted" && o.verdict !== "refused");
  // One line per kind of failure (first case shown, with how many more), so a report stays readable.
  const groups = new Map<string, CaseOutcome[]>();
  for (const o of bad) {
    const key = `${o.verdict}|${o.target}|${o.what.replace(/\d+/g, "#")}`;
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  for (const [, [o, ...more]] of [...groups].slice(0, 40)) {
    console.log(
      `fuzz ${o.verdict}: ${o.target}:${o.index} — ${o.what}${more.length ? ` (+${more.length} like it)` : ""}${o.detail ? `\n    ${o.detail.replace(/\n/g, "\n    ")}` : ""}`,
    );
  }
  const perTarget = TARGETS.map((t) => {
    const mine = outcomes.filter((o) => o.target === t.name);
    return `${t.name} ${mine.length} (${mine.filter((o) => o.verdict === "refused").length} refused)`;
  });
  console.log(`fuzz targets (seed ${SEED}): ${perTarget.join(", ")}`);
  console.log(summaryLine(s));
  if (!ONLY) expect(s.cases).toBe(TARGETS.reduce((a, t) => a + t.count, 0));
  expect({ crashes: s.crashes, hangs: s.hangs, stackTraces: s.stackTraces, silentAcceptances: s.silentAcceptances }).toEqual({
    crashes: 0,
    hangs: 0,
    stackTraces: 0,
    silentAcceptances: 0,
  });
}, 180_000);
