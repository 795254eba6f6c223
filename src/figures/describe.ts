/**
 * Small helpers the figure modules share while building a `FigureDescription`: grids to JSON
 * cells, a number axis with round ticks, warnings and subsampling notes. Nothing here draws.
 */
import type { FigureDescription, NumberAxis } from "../protocol/figure.js";
import { niceTicks, paradigmStyle } from "../protocol/scales.js";
import type { ExportName } from "../protocol/export-names.js";

/** Round to 4 significant digits (JSON stays short; colours cannot show more). NaN/±Inf → null. */
export function cell(v: number): number | null {
  return Number.isFinite(v) ? Number(v.toPrecision(4)) : null;
}

/** A flat JSON copy of `values` (row-major), missing → null. */
export function cells(values: ArrayLike<number>): (number | null)[] {
  return Array.from(values, cell);
}

/** Finite [min, max] of values (and of `extra`), [0, 1] when none. */
export function extent(values: ArrayLike<number | null>): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || !Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return lo > hi ? [0, 1] : [lo, hi];
}

/**
 * A y axis over `values` with round ticks; `zero` includes 0 (rates, shares), the axis ends on
 * whole ticks so the top gridline is a round value too.
 */
export function valueAxis(title: string, values: ArrayLike<number | null>, zero = true): NumberAxis {
  let [lo, hi] = extent(values);
  if (zero) lo = Math.min(0, lo);
  if (!(hi > lo)) hi = lo + 1;
  const ticks = niceTicks(lo, hi, 5);
  return { title, domain: [ticks[0], ticks[ticks.length - 1]], ticks };
}

/** An x axis over integer positions (layers, gold positions): every one when few, round ones when many. */
export function positionAxis(title: string, xs: number[], tickLabels?: string[]): NumberAxis {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const ticks =
    xs.length <= 16 && !tickLabels
      ? [...new Set(xs)].sort((a, b) => a - b)
      : tickLabels
        ? xs
        : niceTicks(lo, hi, 8, true).filter(Number.isInteger);
  // one position (a single layer): centred, not on the left edge
  return { title, domain: hi > lo ? [lo, hi] : [lo - 1, hi + 1], ticks, ...(tickLabels ? { tickLabels } : {}) };
}

/** The fields every description has; `text` is its one-line text/plain. */
export function describe(
  figure: string,
  parts: Pick<FigureDescription, "title" | "panels" | "text"> &
    Partial<Pick<FigureDescription, "subtitle" | "legend" | "notes" | "warnings" | "columns">> & { exportName?: Partial<ExportName> },
): FigureDescription {
  return {
    kind: "figure",
    version: 1,
    figure,
    title: parts.title,
    subtitle: parts.subtitle ?? [],
    panels: parts.panels,
    columns: parts.columns ?? parts.panels.length,
    legend: parts.legend ?? [],
    notes: parts.notes ?? [],
    warnings: [...(parts.warnings ?? [])],
    exportName: { figure, ...parts.exportName },
    text: parts.text,
  };
}

/** Marker shapes in series order (besides colour and dash, so lines stay apart in greyscale print). */
export const MARKERS = ["circle", "square", "triangle", "diamond"] as const;

/**
 * Dash and marker of each series from its model's paradigm (protocol/scales.ts `paradigmStyle`): the
 * k-th ARM and the k-th MDM of a figure take their paradigm's k-th marker, so ARM and MDM lines never
 * share a line style or a marker.
 */
export function paradigmStyles(paradigms: ("arm" | "mdm")[]): ReturnType<typeof paradigmStyle>[] {
  const seen = { arm: 0, mdm: 0 };
  return paradigms.map((p) => paradigmStyle(p, seen[p]++));
}
