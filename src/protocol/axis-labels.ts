/**
 * Label thinning for position axes (token labels) and index axes (steps, layers, heads), shared by
 * the kernel's static images and the widget: which of `count` evenly spaced cells get a printed
 * label when the axis is `lengthPx` long and a label needs `minSpacingPx`. The cells left unlabelled
 * keep their full text on hover (the widget) or in a <title> (SVG).
 */
import { labelStride } from "./markup.js";

/**
 * Indices of the cells to label: every k-th cell (k the smallest step with k·cell ≥ minSpacingPx),
 * starting at 0, plus the `always` cells (e.g. the selected token, the first generated token) with
 * any regular label too close to one of them dropped. Ascending, no duplicates.
 */
export function thinLabels(count: number, lengthPx: number, minSpacingPx: number, always: number[] = []): number[] {
  if (count <= 0) return [];
  // the static figures' stride rule (markup.ts); a regular label closer than one stride to a forced one is dropped
  const every = labelStride(count, lengthPx, minSpacingPx);
  const must = [...new Set(always.filter((i) => Number.isInteger(i) && i >= 0 && i < count))];
  const out = new Set(must);
  for (let i = 0; i < count; i += every) if (must.every((m) => Math.abs(m - i) >= every || m === i)) out.add(i);
  return [...out].sort((a, b) => a - b);
}

/**
 * Tick positions on an index axis whose cells carry `values` (e.g. the kept step numbers 0, 2, 4…):
 * the cells whose value is a round number (multiple of 1, 2, 5 × 10^k) about `count` times over the
 * range, the first and last cell always included. Returns cell indices.
 */
export function indexTicks(values: number[], count = 6): number[] {
  const n = values.length;
  if (n === 0) return [];
  if (n <= count) return values.map((_, i) => i);
  const lo = values[0];
  const hi = values[n - 1];
  const raw = Math.abs(hi - lo) / Math.max(1, count - 1);
  const mag = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  const step = ([1, 2, 5, 10].find((f) => f * mag >= raw) ?? 10) * mag;
  const out = new Set<number>([0, n - 1]);
  for (let i = 0; i < n; i++) if (values[i] % step === 0) out.add(i);
  // Drop round ticks that crowd the forced last one (closer than half a step).
  return [...out]
    .sort((a, b) => a - b)
    .filter(
      (i) => i === 0 || i === n - 1 || (Math.abs(values[n - 1] - values[i]) >= step / 2 && Math.abs(values[i] - values[0]) >= step / 2),
    );
}
