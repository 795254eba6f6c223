/**
 * Percentile-bootstrap 95 % intervals for QA scores: the mean of per-question scores, and the
 * paired difference of two runs over the same questions (an intervention against the plain run),
 * which is much tighter than two separate intervals because each question is its own control.
 * Seeded (the one RNG, samplers/rng.ts), so a notebook's intervals reproduce.
 */
import { Rng } from "../samplers/rng.js";
import { SettingsError } from "../util/errors.js";

export interface BootstrapOptions {
  /** Resamples (default 2000). */
  resamples?: number;
  /** Coverage (default 0.95). */
  level?: number;
  seed?: number;
}

export interface Interval {
  /** The statistic on the sample itself. */
  value: number;
  lo: number;
  hi: number;
  n: number;
}

function check(values: readonly number[], field: string): void {
  if (values.length === 0) throw new SettingsError("Nothing to bootstrap", { field, expected: "at least one value", found: "[]" });
  const i = values.findIndex((v) => !Number.isFinite(v));
  if (i >= 0) throw new SettingsError("Bootstrap values must be finite", { field: `${field}[${i}]`, expected: "a finite number", found: String(values[i]) });
}

/** Empirical quantile with linear interpolation between order statistics (numpy's default). */
function quantile(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

function resampleMeans(n: number, stat: (idx: Uint32Array) => number, o: BootstrapOptions): Float64Array {
  const B = o.resamples ?? 2000;
  if (!Number.isInteger(B) || B < 10) throw new SettingsError("Bad resample count", { field: "resamples", expected: "an integer ≥ 10", found: String(B) });
  const rng = new Rng(o.seed ?? 0);
  const idx = new Uint32Array(n);
  const out = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < n; i++) idx[i] = Math.floor(rng.uniform() * n);
    out[b] = stat(idx);
  }
  return out.sort();
}

function interval(value: number, draws: Float64Array, n: number, level: number): Interval {
  if (!(level > 0 && level < 1)) throw new SettingsError("Bad level", { field: "level", expected: "a number in (0, 1)", found: String(level) });
  const a = (1 - level) / 2;
  return { value, lo: quantile(draws, a), hi: quantile(draws, 1 - a), n };
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/** Mean of `values` with a percentile-bootstrap interval. */
export function bootstrapMean(values: readonly number[], o: BootstrapOptions = {}): Interval {
  check(values, "values");
  const n = values.length;
  const draws = resampleMeans(n, (idx) => {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[idx[i]];
    return s / n;
  }, o);
  return interval(mean(values), draws, n, o.level ?? 0.95);
}

/** mean(a) − mean(b) over paired samples (a[i] and b[i] from the same question), resampling pairs. */
export function bootstrapPairedDiff(a: readonly number[], b: readonly number[], o: BootstrapOptions = {}): Interval {
  check(a, "a");
  check(b, "b");
  if (a.length !== b.length) throw new SettingsError("Paired samples differ in length", { field: "b", expected: `${a.length} values (one per question of a)`, found: String(b.length) });
  const d = a.map((x, i) => x - b[i]);
  return bootstrapMean(d, o);
}
