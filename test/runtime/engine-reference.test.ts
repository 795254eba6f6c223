/**
 * The engine against its own past: every notebook's decoding on the embedded tiny models gives the
 * same tokens as the reference commit and probe values within 1e-5 of it (test/fixtures/engine-
 * reference.json, written by scripts/capture-engine-reference.ts on that commit; the runs are in
 * test/support/engine-reference.ts). Engine work (chunking, fused attention, fewer copies, no mask
 * work when nothing is masked) must keep this green; a deliberate change of results means capturing
 * the fixture again on the new reference commit and saying why in its message.
 */
import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { FIXTURE, REFERENCE_CASES, compareTraces, type ReferenceFile, type TraceSummary } from "../support/engine-reference.js";

const ref = JSON.parse(fs.readFileSync(FIXTURE, "utf8")) as ReferenceFile;

describe("engine reference: same tokens and probes as the reference commit", () => {
  it("the fixture names its commit and holds every case", () => {
    expect(ref.format).toBe("floatscope-engine-reference");
    expect(ref.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(ref.cases.map((c) => c.name)).toEqual(REFERENCE_CASES.map((c) => c.name));
    for (const c of ref.cases) expect(c.traces.length).toBeGreaterThan(0);
  });

  it("the comparison catches a moved token and a moved probe value", () => {
    const t = ref.cases[0].traces[0];
    expect(compareTraces(t, t)).toEqual([]);
    const moved: TraceSummary = structuredClone(t);
    moved.generated[0] += 1;
    expect(compareTraces(t, moved).join("\n")).toMatch(/generated tokens differ/);
    const name = Object.keys(t.probes)[0];
    const nudged: TraceSummary = structuredClone(t);
    nudged.probes[name].samples[0][2] += 2e-5;
    expect(compareTraces(t, nudged).join("\n")).toMatch(/value at pass/);
  });

  for (const c of REFERENCE_CASES) {
    it(c.name, { timeout: 600_000 }, async () => {
      const want = ref.cases.find((r) => r.name === c.name)!;
      const got = await c.run();
      expect(got.map((t) => t.model)).toEqual(want.traces.map((t) => t.model));
      const errs = want.traces.flatMap((t, i) => compareTraces(t, got[i]).map((e) => `trace ${i}: ${e}`));
      expect(errs.slice(0, 20)).toEqual([]);
    });
  }
});
