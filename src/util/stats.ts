/**
 * Small statistics for the numbers notebooks report: the mean and a percentile-bootstrap 95 %
 * interval over samples (prompts, questions). Seeded, so a re-executed notebook reports the same
 * interval for the same samples.
 */
import { mulberry32 } from "./rng.js";

/** Arithmetic mean (NaN for no values). */
export function mean(values: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return values.length ? s / values.length : NaN;
}

/** The q-quantile of ascending values, linear between order statistics (numpy's default). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const h = (sorted.length - 1) * q;
  const i = Math.floor(h);
  return i + 1 < sorted.length ? sorted[i] + (h - i) * (sorted[i + 1] - sorted[i]) : sorted[i];
}

/** The one set of bootstrap settings (bootstrapCi here, analysis/robustness's curves). */
export interface BootstrapOptions {
  /** Resamples (default 2000). */
  resamples?: number;
  /** Coverage (default 0.95). */
  level?: number;
  /** Default 0. */
  seed?: number;
}

/**
 * The statistic over `resamples` resamples (with replacement) of `n` unit indices, in resampling
 * order. The one resampling loop: every bootstrap here draws the same indices for the same seed.
 */
export function resampledStatistics(n: number, stat: (idx: Int32Array) => number, o: BootstrapOptions = {}): Float64Array {
  const B = o.resamples ?? 2000;
  const next = mulberry32(o.seed ?? 0);
  const idx = new Int32Array(n);
  const stats = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < n; i++) idx[i] = Math.floor(next() * n);
    stats[b] = stat(idx);
  }
  return stats;
}

/**
 * Percentile bootstrap interval of a statistic over samples: resample the values with replacement,
 * recompute, take the (1 − level)/2 and (1 + level)/2 quantiles (linear interpolation).
 * Null when there are fewer than 2 values (no spread to resample).
 */
export function bootstrapCi(
  values: ArrayLike<number>,
  o: BootstrapOptions & {
    /** The statistic (default: the mean). */
    statistic?: (values: Float64Array) => number;
  } = {},
): [number, number] | null {
  const n = values.length;
  if (n < 2) return null;
  const level = o.level ?? 0.95;
  const stat = o.statistic ?? mean;
  const draw = new Float64Array(n);
  const stats = resampledStatistics(
    n,
    (idx) => {
      for (let i = 0; i < n; i++) draw[i] = values[idx[i]];
      return stat(draw);
    },
    o,
  ).sort();
  return [quantile(stats, (1 - level) / 2), quantile(stats, (1 + level) / 2)];
}
