/**
 * Small statistics for the numbers notebooks report: the mean and a percentile-bootstrap 95 %
 * interval over samples (prompts, questions). Seeded, so a re-executed notebook reports the same
 * interval for the same samples.
 */

/** Arithmetic mean (NaN for no values). */
export function mean(values: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return values.length ? s / values.length : NaN;
}

/** mulberry32: a small seeded PRNG, uniform in [0, 1) (the bootstraps' resampling, here and in analysis/robustness). */
export function seededUniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface BootstrapOptions {
  /** Resamples (default 2000). */
  resamples?: number;
  /** Coverage (default 0.95). */
  level?: number;
  seed?: number;
  /** The statistic (default: the mean). */
  statistic?: (values: Float64Array) => number;
}

/**
 * Percentile bootstrap interval of a statistic over samples: resample the values with replacement,
 * recompute, take the (1 − level)/2 and (1 + level)/2 quantiles (linear interpolation).
 * Null when there are fewer than 2 values (no spread to resample).
 */
export function bootstrapCi(values: ArrayLike<number>, o: BootstrapOptions = {}): [number, number] | null {
  const n = values.length;
  if (n < 2) return null;
  const B = o.resamples ?? 2000;
  const level = o.level ?? 0.95;
  const stat = o.statistic ?? mean;
  const next = seededUniform(o.seed ?? 0);
  const draw = new Float64Array(n);
  const stats = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < n; i++) draw[i] = values[Math.floor(next() * n)];
    stats[b] = stat(draw);
  }
  stats.sort();
  const q = (p: number) => {
    const x = p * (B - 1);
    const i = Math.floor(x);
    return i + 1 < B ? stats[i] + (x - i) * (stats[i + 1] - stats[i]) : stats[i];
  };
  return [q((1 - level) / 2), q((1 + level) / 2)];
}
