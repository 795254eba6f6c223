import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { dreamOriginProbability, dreamTimesteps, dreamTransferCount, lladaTransferCounts } from "../../src/samplers/schedule.js";

interface Case {
  masks: number;
  steps: number;
  eps: number;
  timesteps: number[];
  counts: number[];
}
const golden = JSON.parse(fs.readFileSync(new URL("../fixtures/samplers/dream-schedule.json", import.meta.url), "utf8")) as {
  cases: Case[];
};

describe("LLaDA floor-plus-remainder schedule", () => {
  it("gives floor(m/s) per step and one more to the first m mod s steps", () => {
    expect(Array.from(lladaTransferCounts(10, 4))).toEqual([3, 3, 2, 2]);
    expect(Array.from(lladaTransferCounts(8, 8))).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(Array.from(lladaTransferCounts(7, 3))).toEqual([3, 2, 2]);
    expect(Array.from(lladaTransferCounts(2, 5))).toEqual([1, 1, 0, 0, 0]);
    for (const [m, s] of [
      [32, 32],
      [33, 8],
      [100, 7],
      [0, 3],
    ]) {
      expect(lladaTransferCounts(m, s).reduce((a, b) => a + b, 0)).toBe(m);
    }
  });
});

describe("Dream linspace schedule (golden: torch 1.13)", () => {
  it("transfer counts per step equal torch's int(m·(1 − s/t)) run, everything at the last step", () => {
    for (const c of golden.cases) {
      const t = dreamTimesteps(c.steps, c.eps);
      let m = c.masks;
      const counts: number[] = [];
      for (let i = 0; i < c.steps; i++) {
        const n = dreamTransferCount(m, i, t);
        counts.push(n);
        m -= n;
      }
      expect(counts, `m ${c.masks}, steps ${c.steps}, eps ${c.eps}`).toEqual(c.counts);
      expect(m).toBe(0);
    }
  });

  it("timesteps equal torch's float32 linspace (exactly below 16 values, within 1 ulp above)", () => {
    for (const c of golden.cases) {
      const t = dreamTimesteps(c.steps, c.eps);
      expect(t.length).toBe(c.steps + 1);
      expect(t[0]).toBe(1);
      expect(t[c.steps]).toBe(Math.fround(c.eps));
      for (let i = 0; i <= c.steps; i++) {
        if (c.steps + 1 < 16) expect(t[i]).toBe(c.timesteps[i]);
        else expect(Math.abs(t[i] - c.timesteps[i])).toBeLessThanOrEqual(1.2e-7);
      }
    }
  });

  it("steps == masks: step 0 transfers nothing and the last step takes the rest (32/32 → 0, 1 × 30, 2)", () => {
    const c = golden.cases.find((x) => x.masks === 32 && x.steps === 32 && x.eps === 1e-3)!;
    expect(c.counts[0]).toBe(0);
    expect(c.counts[31]).toBe(2);
  });

  it("origin's transfer probability is 1 − s/t and 1 at the last step", () => {
    const t = dreamTimesteps(4, 1e-3);
    expect(dreamOriginProbability(0, t)).toBeCloseTo(1 - t[1] / t[0], 6);
    expect(dreamOriginProbability(3, t)).toBe(1);
  });
});
