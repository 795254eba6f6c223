import { describe, expect, it } from "vitest";
import { bootstrapCi, mean } from "../../src/util/stats.js";

describe("bootstrapCi", () => {
  it("matches the binomial interval for a 0/1 sample (normal approximation: p ± 1.96·√(p(1−p)/n))", () => {
    const xs = Array.from({ length: 100 }, (_, i) => i % 2);
    const [lo, hi] = bootstrapCi(xs, { resamples: 4000 })!;
    const half = 1.96 * Math.sqrt((0.5 * 0.5) / 100);
    expect(lo).toBeGreaterThan(0.5 - half - 0.02);
    expect(lo).toBeLessThan(0.5 - half + 0.02);
    expect(hi).toBeGreaterThan(0.5 + half - 0.02);
    expect(hi).toBeLessThan(0.5 + half + 0.02);
  });

  it("is a point for constant samples, null below two samples, and the same for the same seed", () => {
    expect(bootstrapCi([3, 3, 3])).toEqual([3, 3]);
    expect(bootstrapCi([1])).toBeNull();
    const xs = [1, 5, 2, 8, 3];
    expect(bootstrapCi(xs, { seed: 7 })).toEqual(bootstrapCi(xs, { seed: 7 }));
    const [lo, hi] = bootstrapCi(xs)!;
    expect(lo).toBeLessThanOrEqual(mean(xs));
    expect(hi).toBeGreaterThanOrEqual(mean(xs));
    expect(lo).toBeGreaterThanOrEqual(1);
    expect(hi).toBeLessThanOrEqual(8);
  });
});
