/**
 * Long table of per-example results → distractor-sweep payload (a metric against the gold
 * document's position, lost-in-the-middle layout; one line per model with a ± band).
 *
 * Rows are plain objects or an arquero table (anything with `objects()`); the default columns are
 * `model`, `goldPosition` (1-based) and the metric column you name, e.g. `correct` (0/1) or
 * `goldShare`. Per (model, position): the mean, and a band of ± one standard error (default),
 * ± one population std, or none.
 *
 * @example
 *   show(distractorPayload(results, { y: "correct", metric: "Accuracy (%)", scale: 100 }));
 */
import { SettingsError, keyword } from "../util/errors.js";
import type { DistractorSpec } from "../analysis/figure-data.js";

export interface DistractorOptions {
  /** Column holding the per-example value. */
  y: string;
  /** Axis title, e.g. "Accuracy (%)". Default: the column name. */
  metric?: string;
  /** Column with the 1-based gold position. Default "goldPosition". */
  x?: string;
  /** Column naming the series. Default "model". */
  series?: string;
  /** Band around the mean. Default "se" (standard error of the mean). */
  band?: "se" | "std" | "none";
  /** Multiply values (e.g. 100 for 0/1 → %). Default 1. */
  scale?: number;
  title?: string;
  /** x-axis title (default "Gold document position"). */
  xTitle?: string;
}

type Rows = Iterable<Record<string, unknown>> | { objects(): Record<string, unknown>[] };

function rowsOf(input: Rows): Record<string, unknown>[] {
  if (input && typeof (input as { objects?: unknown }).objects === "function")
    return (input as { objects(): Record<string, unknown>[] }).objects();
  if (input && typeof (input as Iterable<unknown>)[Symbol.iterator] === "function")
    return [...(input as Iterable<Record<string, unknown>>)];
  throw new SettingsError("distractorPayload needs rows", {
    field: "rows",
    expected: "an array of objects or an arquero table",
    found: typeof input,
  });
}

export function distractorPayload(input: Rows, opts: DistractorOptions): DistractorSpec {
  const x = opts.x ?? "goldPosition";
  const seriesCol = opts.series ?? "model";
  const band = keyword(opts.band ?? "se", ["se", "std", "none"] as const, { field: "band" });
  const scale = opts.scale ?? 1;
  const rows = rowsOf(input);
  if (rows.length === 0) throw new SettingsError("no rows to plot", { field: "rows", expected: "at least one row", found: "0 rows" });
  for (const col of [x, seriesCol, opts.y]) {
    if (!(col in rows[0])) {
      throw new SettingsError(`column ${JSON.stringify(col)} not found`, {
        field: col,
        expected: `one of ${Object.keys(rows[0]).join(", ")}`,
        found: "missing",
      });
    }
  }
  // model → position → values
  const groups = new Map<string, Map<number, number[]>>();
  const positions = new Set<number>();
  rows.forEach((r, i) => {
    const pos = Number(r[x]);
    const v = Number(r[opts.y]);
    if (!Number.isInteger(pos))
      throw new SettingsError("gold position must be an integer", {
        field: `${x} (row ${i})`,
        expected: "1-based integer",
        found: String(r[x]),
      });
    if (!Number.isFinite(v)) return; // missing metric (e.g. failed generation): left out of the mean
    const name = String(r[seriesCol]);
    if (!groups.has(name)) groups.set(name, new Map());
    const g = groups.get(name)!;
    if (!g.has(pos)) g.set(pos, []);
    g.get(pos)!.push(v * scale);
    positions.add(pos);
  });
  const xs = [...positions].sort((a, b) => a - b);
  const series = [...groups].map(([model, g]) => {
    const values: number[] = [];
    const lo: number[] = [];
    const hi: number[] = [];
    for (const p of xs) {
      const v = g.get(p) ?? [];
      const n = v.length;
      const mean = n ? v.reduce((a, b) => a + b, 0) / n : NaN;
      const sd = n ? Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / n) : NaN;
      const half =
        band === "std"
          ? sd
          : band === "se"
            ? n > 1
              ? Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) / Math.sqrt(n)
              : 0
            : 0;
      values.push(mean);
      lo.push(mean - half);
      hi.push(mean + half);
    }
    return band === "none" ? { model, values } : { model, values, lo, hi };
  });
  return {
    kind: "distractor",
    title: opts.title,
    warnings: [],
    metric: opts.metric ?? opts.y,
    ...(opts.xTitle !== undefined ? { xTitle: opts.xTitle } : {}),
    positions: xs,
    series,
  };
}
