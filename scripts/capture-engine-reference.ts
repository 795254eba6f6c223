/**
 * Capture the engine's reference runs (test/support/engine-reference.ts) into
 * test/fixtures/engine-reference.json, naming the commit they were produced on:
 *
 *   npx tsx scripts/capture-engine-reference.ts [--only <case-name prefix>]
 *
 * Run it on a clean checkout of the commit whose behaviour is the reference (the fixture records
 * `git rev-parse HEAD` and whether the work tree had changes under src/). test/runtime/engine-reference.test.ts
 * then decodes the same runs with the engine as it is and compares tokens (exact) and probe values (1e-5).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { parseArgs } from "node:util";
import { FIXTURE, REFERENCE_CASES, type ReferenceFile } from "../test/support/engine-reference.js";

const { values } = parseArgs({ options: { only: { type: "string" } } });
const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" }).trim();
const commit = git("rev-parse", "HEAD");
const dirty = git("status", "--porcelain", "--", "src").length > 0;
const out: ReferenceFile = {
  format: "floatscope-engine-reference",
  version: 1,
  commit: dirty ? `${commit} (with uncommitted changes under src/)` : commit,
  produced: new Date().toISOString(),
  note: "written by scripts/capture-engine-reference.ts; compared by test/runtime/engine-reference.test.ts",
  cases: [],
};
for (const c of REFERENCE_CASES) {
  if (values.only && !c.name.startsWith(values.only)) continue;
  const t0 = Date.now();
  const traces = await c.run();
  out.cases.push({ name: c.name, traces });
  console.log(`${c.name}: ${traces.length} traces (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}
// 10 significant digits: exact for the f32 samples' purpose (tolerance 1e-5) and keeps the file small
const round = (_k: string, v: unknown) => (typeof v === "number" && !Number.isInteger(v) ? Number(v.toPrecision(10)) : v);
fs.writeFileSync(FIXTURE, JSON.stringify(out, round) + "\n");
console.log(`wrote ${FIXTURE} (${(fs.statSync(FIXTURE).size / 1024).toFixed(0)} KiB) at ${out.commit}`);
