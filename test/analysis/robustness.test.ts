import { describe, expect, it } from "vitest";
import {
  accuracyCurves,
  bootstrap,
  bootstrapMean,
  curvesPayload,
  distractorDrop,
  positionSpread,
  type QaRow,
} from "../../src/analysis/robustness.js";
import { quantile } from "../../src/util/stats.js";
import { SettingsError } from "../../src/util/errors.js";

describe("bootstrap intervals", () => {
  it("quantile interpolates linearly between order statistics (numpy's default)", () => {
    // numpy.quantile([1, 2, 4, 8], [0.025, 0.5, 0.975]) = [1.075, 3.0, 7.7]
    expect(quantile([1, 2, 4, 8], 0.025)).toBeCloseTo(1.075, 12);
    expect(quantile([1, 2, 4, 8], 0.5)).toBeCloseTo(3, 12);
    expect(quantile([1, 2, 4, 8], 0.975)).toBeCloseTo(7.7, 12);
  });
  it("the interval of a 0/1 mean matches the normal approximation p ± 1.96·√(p(1−p)/n) at large n", () => {
    const n = 2000,
      p = 0.3;
    const v = Array.from({ length: n }, (_, i) => (i < p * n ? 1 : 0));
    const iv = bootstrapMean(v, { resamples: 4000, seed: 3 });
    const half = 1.96 * Math.sqrt((p * (1 - p)) / n); // 0.0201
    expect(iv.mean).toBe(p);
    expect(iv.lo).toBeCloseTo(p - half, 2);
    expect(iv.hi).toBeCloseTo(p + half, 2);
  });
  it("is the same for the same seed, and covers the data's statistic", () => {
    const v = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1];
    expect(bootstrapMean(v, { seed: 5 })).toEqual(bootstrapMean(v, { seed: 5 }));
    const iv = bootstrapMean(v);
    expect(iv.lo).toBeLessThanOrEqual(0.6);
    expect(iv.hi).toBeGreaterThanOrEqual(0.6);
    // All values equal: a zero-width interval.
    expect(bootstrapMean([1, 1, 1])).toMatchObject({ mean: 1, lo: 1, hi: 1, n: 3 });
    expect(() => bootstrap(0, () => 0)).toThrow(SettingsError);
  });
});

// Model A: 4 questions, right at k = 0 on all, at k = 2 on q0 only; model B: always right.
const rows: QaRow[] = [];
for (const q of [0, 1, 2, 3]) {
  rows.push({ model: "A", id: `q${q}`, k: 0, goldIndex: 0, accuracy: 1 });
  rows.push({ model: "A", id: `q${q}`, k: 2, goldIndex: 1, accuracy: q === 0 ? 1 : 0 });
  rows.push({ model: "B", id: `q${q}`, k: 0, goldIndex: 0, accuracy: 1 });
  rows.push({ model: "B", id: `q${q}`, k: 2, goldIndex: 1, accuracy: 1 });
}

describe("robustness curves and summaries", () => {
  it("accuracy per k and per model, in percent", () => {
    const curves = accuracyCurves(rows, "k");
    expect(curves.map((c) => c.model)).toEqual(["A", "B"]);
    expect(curves[0].points.map((p) => [p.x, p.mean, p.n])).toEqual([
      [0, 100, 4],
      [2, 25, 4],
    ]);
    expect(curves[1].points.map((p) => p.mean)).toEqual([100, 100]);
    const pay = curvesPayload(curves, { xTitle: "Number of distractors" });
    expect(pay.positions).toEqual([0, 2]);
    expect(pay.series[0].values).toEqual([100, 25]);
    expect(pay.xTitle).toBe("Number of distractors");
    expect(curvesPayload(accuracyCurves(rows, "goldIndex"), { xTitle: "Gold position", oneBased: true }).positions).toEqual([1, 2]);
  });
  it("distractor drop = acc(k min) − acc(k max), paired; failed rows are left out", () => {
    const a = distractorDrop(rows.filter((r) => r.model === "A"));
    expect(a.mean).toBe(75);
    expect(a.xs).toEqual([0, 2]);
    // Paired resampling: every resample of 4 questions has drop ∈ {0, 25, 50, 75, 100} and q0 is the only "kept" one.
    expect(a.lo).toBeGreaterThanOrEqual(0);
    expect(a.hi).toBeLessThanOrEqual(100);
    expect(distractorDrop(rows.filter((r) => r.model === "B"))).toMatchObject({ mean: 0, lo: 0, hi: 0 });
    const withError = [...rows.filter((r) => r.model === "B"), { model: "B", id: "q9", k: 2, goldIndex: 0, accuracy: null, error: "boom" }];
    expect(distractorDrop(withError).n).toBe(4);
  });
  it("position spread is over one k only", () => {
    const sweep: QaRow[] = [0, 1, 2].flatMap((g) =>
      ["a", "b"].map((id) => ({ model: "A", id, k: 2, goldIndex: g, accuracy: g === 1 ? 0 : 1 })),
    );
    expect(positionSpread(sweep).mean).toBe(100);
    expect(() => positionSpread(rows.filter((r) => r.model === "A"))).toThrow(/one k/);
  });
});
