/**
 * Bootstrap intervals against independent facts: a constant sample has a zero-width interval; for
 * 0/1 scores the 95 % interval of the mean approaches the normal approximation p ± 1.96·√(p(1−p)/n)
 * (the analytic standard error, not our output); paired differences of identical runs are exactly
 * 0; pairing narrows the interval when questions vary a lot; results are seeded.
 */
import { describe, expect, it } from "vitest";
import { bootstrapMean, bootstrapPairedDiff } from "../../src/eval/bootstrap.js";
import { seeded } from "../support/engine-tiny.js";

describe("bootstrap intervals", () => {
  it("a constant sample gives a point interval", () => {
    expect(bootstrapMean([0.7, 0.7, 0.7, 0.7])).toMatchObject({ value: 0.7, lo: 0.7, hi: 0.7, n: 4 });
  });
  it("0/1 scores: close to the normal-approximation interval", () => {
    const r = seeded(5);
    const xs: number[] = Array.from({ length: 400 }, () => (r() < 0.3 ? 1 : 0));
    const p = xs.reduce((a, b) => a + b, 0) / xs.length;
    const half = 1.96 * Math.sqrt((p * (1 - p)) / xs.length);
    const ci = bootstrapMean(xs, { resamples: 4000, seed: 1 });
    expect(ci.value).toBeCloseTo(p, 12);
    expect(Math.abs(ci.lo - (p - half))).toBeLessThan(0.15 * half);
    expect(Math.abs(ci.hi - (p + half))).toBeLessThan(0.15 * half);
  });
  it("paired differences: identical runs give exactly 0; pairing is tighter than the unpaired spread", () => {
    const r = seeded(6);
    const base: number[] = Array.from({ length: 200 }, () => (r() < 0.5 ? 1 : 0));
    expect(bootstrapPairedDiff(base, base)).toMatchObject({ value: 0, lo: 0, hi: 0 });
    const worse = base.map((x, i) => (i % 10 === 0 ? 0 : x)); // drops ~5 % of the correct answers
    const d = bootstrapPairedDiff(worse, base, { seed: 2 });
    expect(d.value).toBeLessThan(0);
    expect(d.hi).toBeLessThanOrEqual(0);
    const a = bootstrapMean(worse, { seed: 2 });
    expect(d.hi - d.lo).toBeLessThan(a.hi - a.lo);
  });
  it("is seeded, and refuses empty, non-finite or unpaired input with typed errors", () => {
    const xs = [0.13, 0.92, 0.41, 0.77, 0.05, 0.66, 0.38, 0.21, 0.84, 0.59];
    expect(bootstrapMean(xs, { seed: 3 })).toEqual(bootstrapMean(xs, { seed: 3 }));
    expect(bootstrapMean(xs, { seed: 3 })).not.toEqual(bootstrapMean(xs, { seed: 4 }));
    expect(() => bootstrapMean([])).toThrow(/Nothing to bootstrap/);
    expect(() => bootstrapMean([1, NaN])).toThrow(/finite/);
    expect(() => bootstrapPairedDiff([1, 0], [1])).toThrow(/Paired/);
  });
});
