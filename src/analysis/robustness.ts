/**
 * Robustness of QA accuracy (the paper's Fig. 6): accuracy against the number of distractors and
 * against the gold passage's position, per model, with percentile-bootstrap 95 % intervals over
 * questions; and the two one-number summaries the claims table uses.
 *
 * Input: per-question rows of a merged grid (src/grid/merge.ts): `model`, `id` (the question), `k`,
 * `goldIndex` (0-based) and `accuracy` (0/1; null or a row with `error` is left out).
 *
 * Summaries (points, ×100), each with a paired bootstrap over questions (one resample of question
 * ids is used for every x, so the differences keep their pairing):
 *   distractor drop   accuracy at the smallest k minus accuracy at the largest k;
 *   position spread   best minus worst accuracy over the gold positions at one k.
 * A smaller drop or spread is "more robust". With tens of questions the intervals are wide: the
 * claims table calls a difference whose interval covers zero inconclusive.
 */
import type { DistractorSpec } from "./figure-data.js";
import { SettingsError } from "../util/errors.js";
import { quantile, resampledStatistics, type BootstrapOptions } from "../util/stats.js";

export interface QaRow {
  model: string;
  id: string;
  k: number | null;
  goldIndex: number | null;
  accuracy: number | null;
  error?: string | null;
}

export interface Interval {
  mean: number;
  lo: number;
  hi: number;
  n: number;
}

/**
 * Percentile-bootstrap interval of `stat` over `n` units: the statistic on the data, and the
 * (1−level)/2 and (1+level)/2 quantiles of the statistic over resamples of unit indices.
 */
export function bootstrap(n: number, stat: (idx: ArrayLike<number>) => number, o: BootstrapOptions = {}): Interval {
  const level = o.level ?? 0.95;
  if (!Number.isInteger(n) || n < 1)
    throw new SettingsError("Bootstrap needs data", { field: "n", expected: "at least one unit", found: String(n) });
  if (!(level > 0 && level < 1))
    throw new SettingsError("Bad bootstrap level", { field: "level", expected: "in (0, 1)", found: String(level) });
  const all = Int32Array.from({ length: n }, (_, i) => i);
  const mean = stat(all);
  // A resample whose statistic is undefined (e.g. no unit of a group drawn) carries no information.
  const stats = [...resampledStatistics(n, stat, o)].filter(Number.isFinite).sort((a, b) => a - b);
  return { mean, lo: quantile(stats, (1 - level) / 2), hi: quantile(stats, (1 + level) / 2), n };
}

/** Mean of 0/1 (or any) values with its bootstrap interval. */
export function bootstrapMean(values: readonly number[], o: BootstrapOptions = {}): Interval {
  return bootstrap(
    values.length,
    (idx) => {
      let s = 0;
      for (let i = 0; i < idx.length; i++) s += values[idx[i]];
      return s / idx.length;
    },
    o,
  );
}

export type RobustnessAxis = "k" | "goldIndex";

export interface CurvePoint extends Interval {
  x: number;
}

export interface AccuracyCurve {
  model: string;
  axis: RobustnessAxis;
  /** Accuracy (%) per x with its 95 % interval, x ascending. */
  points: CurvePoint[];
}

function usable(r: QaRow): boolean {
  return (r.error === undefined || r.error === null) && typeof r.accuracy === "number" && Number.isFinite(r.accuracy);
}

/** Question → x → accuracy, for one model's rows along one axis. */
function table(rows: readonly QaRow[], axis: RobustnessAxis): Map<number, Map<string, number>> {
  const byX = new Map<number, Map<string, number>>();
  for (const r of rows) {
    const x = r[axis];
    if (x === null || x === undefined || !usable(r)) continue;
    let m = byX.get(x);
    if (!m) byX.set(x, (m = new Map()));
    m.set(r.id, r.accuracy!);
  }
  return byX;
}

/**
 * Accuracy (%) against k or the gold index, one curve per model (in first-seen order), with a
 * bootstrap 95 % interval per point. Pass the rows of one sweep (e.g. only the position sweep's k).
 */
export function accuracyCurves(rows: readonly QaRow[], axis: RobustnessAxis, o: BootstrapOptions = {}): AccuracyCurve[] {
  const models = [...new Set(rows.map((r) => r.model))];
  return models.map((model) => {
    const byX = table(
      rows.filter((r) => r.model === model),
      axis,
    );
    const xs = [...byX.keys()].sort((a, b) => a - b);
    const points = xs.map((x) => {
      const iv = bootstrapMean([...byX.get(x)!.values()], o);
      return { x, mean: 100 * iv.mean, lo: 100 * iv.lo, hi: 100 * iv.hi, n: iv.n };
    });
    return { model, axis, points };
  });
}

/** Paired statistic over the questions present at every x of one model. */
function paired(
  rows: readonly QaRow[],
  axis: RobustnessAxis,
  stat: (accByX: number[]) => number,
  o: BootstrapOptions,
): Interval & { xs: number[] } {
  const byX = table(rows, axis);
  const xs = [...byX.keys()].sort((a, b) => a - b);
  if (xs.length < 2)
    throw new SettingsError("A robustness summary needs at least two settings", {
      field: axis,
      expected: "rows at ≥ 2 values",
      found: xs.join(", ") || "none",
    });
  const ids = [...byX.get(xs[0])!.keys()].filter((id) => xs.every((x) => byX.get(x)!.has(id)));
  if (ids.length === 0)
    throw new SettingsError("No question was answered at every setting", { field: axis, expected: "the same questions at every x" });
  const acc = ids.map((id) => xs.map((x) => byX.get(x)!.get(id)!));
  const iv = bootstrap(
    ids.length,
    (idx) => {
      const means = xs.map((_, j) => {
        let s = 0;
        for (let i = 0; i < idx.length; i++) s += acc[idx[i]][j];
        return (100 * s) / idx.length;
      });
      return stat(means);
    },
    o,
  );
  return { ...iv, xs };
}

/** Accuracy at the smallest k minus at the largest (points), paired over questions. */
export function distractorDrop(rows: readonly QaRow[], o: BootstrapOptions = {}): Interval & { xs: number[] } {
  return paired(rows, "k", (m) => m[0] - m[m.length - 1], o);
}

/** Best minus worst accuracy over gold positions (points), paired over questions. Rows of one k. */
export function positionSpread(rows: readonly QaRow[], o: BootstrapOptions = {}): Interval & { xs: number[] } {
  const ks = new Set(rows.filter(usable).map((r) => r.k));
  if (ks.size > 1)
    throw new SettingsError("Position spread is over one k", {
      field: "k",
      expected: "rows of one distractor count",
      found: [...ks].join(", "),
    });
  return paired(rows, "goldIndex", (m) => Math.max(...m) - Math.min(...m), o);
}

/** Curves → the distractor-sweep figure payload (src/figures), bands = the 95 % intervals. */
export function curvesPayload(curves: readonly AccuracyCurve[], o: { title?: string; xTitle: string; oneBased?: boolean }): DistractorSpec {
  const xs = [...new Set(curves.flatMap((c) => c.points.map((p) => p.x)))].sort((a, b) => a - b);
  const shift = o.oneBased ? 1 : 0;
  const at = (c: AccuracyCurve, x: number, f: (p: CurvePoint) => number) => {
    const p = c.points.find((q) => q.x === x);
    return p ? f(p) : NaN;
  };
  return {
    kind: "distractor",
    title: o.title,
    warnings: [],
    metric: "Accuracy (%)",
    xTitle: o.xTitle,
    positions: xs.map((x) => x + shift),
    series: curves.map((c) => ({
      model: c.model,
      values: xs.map((x) => at(c, x, (p) => p.mean)),
      lo: xs.map((x) => at(c, x, (p) => p.lo)),
      hi: xs.map((x) => at(c, x, (p) => p.hi)),
    })),
  };
}
