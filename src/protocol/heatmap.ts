/**
 * The kernel's generic labelled heatmap as it crosses to the frontend: its MIME type, the figure
 * spec (plain JSON) and the colormap names the spec may carry. `figures/heatmap.ts` builds and
 * validates the spec and turns it into a figure description, and the widget bundle compiles this
 * file as it is (it imports only protocol/ siblings), so the two sides read one declaration.
 */

import type { Colormap } from "./colormap.js";
// The colormap names (and their stops) are declared once, in colormap.ts.
export { COLORMAPS, type Colormap } from "./colormap.js";

/** The figure spec: plain JSON, safe to serialise into a notebook. */
export interface HeatmapSpec {
  kind: "heatmap";
  title: string;
  subtitle?: string;
  /** Axis title under the columns, e.g. "key". */
  xTitle?: string;
  /** Axis title beside the rows, e.g. "layer". */
  yTitle?: string;
  /** Title of the colour bar, e.g. "attention received". */
  valueLabel?: string;
  /** One label per column. */
  xLabels: string[];
  /** One label per row. */
  yLabels: string[];
  /** [row, column] = [yLabels.length][xLabels.length]; null marks a missing cell (NaN, ±Inf). */
  values: (number | null)[][];
  colormap: Colormap;
  /** Colour domain [low, high]; values outside are clamped. */
  domain: [number, number];
}
