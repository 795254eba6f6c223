/**
 * The figure description: ONE plain-JSON object per figure that says everything a reader sees —
 * data, axes and their labels, colour scales, marks, the legend, the title and the analysis'
 * warnings. `src/figures/<kind>.ts` builds it from an analysis result; `draw.ts` turns it into
 * SVG, and both the kernel (static image, `save()`) and the JupyterLab widget (which compiles
 * this folder as it is) call that one renderer. So the widget and the saved image cannot disagree
 * on a colour, a domain or a label: neither side chooses them.
 *
 * JSON-safe on purpose (numbers, strings, null for a missing cell): it travels to the widget as
 * the `MIME_FIGURE` output without any encoding step.
 */
import type { ColourScale } from "./scales.js";
import type { ExportName } from "./export-names.js";
// Its MIME type, MIME_FIGURE, is declared with the others in payloads.ts.

/** Axis of categories (token positions, layers, heads, regions): one label per cell. */
export interface CategoryAxis {
  title: string;
  /** One per cell; thinned to what fits when drawn, the full text stays on hover. */
  labels: string[];
}

/** A numeric axis with round tick values. */
export interface NumberAxis {
  title: string;
  domain: [number, number];
  ticks: number[];
  /** Text of each tick (default: the number); e.g. band names under bar positions. */
  tickLabels?: string[];
}

/** A [rows × cols] heatmap with its own colour bar. */
export interface HeatPanel {
  type: "heat";
  title?: string;
  rows: number;
  cols: number;
  /** Row-major [rows · cols]; null = missing cell (drawn light grey, "missing" on hover). */
  values: (number | null)[];
  scale: ColourScale;
  /** The quantity the colour bar measures, e.g. "attention received". */
  valueLabel: string;
  x: CategoryAxis;
  y: CategoryAxis;
  /** Cells drawn in a mark colour instead of their value (drift: anchors); the legend names it. */
  cellMarks?: { cells: number[]; colour: string };
  /** Columns ticked under the panel (QK: floating keys); the legend names them. */
  columnMarks?: { columns: number[]; colour: string };
  /** Print each cell's value in the cell (small matrices such as the region rollout). */
  cellText?: boolean;
}

export interface LineSeries {
  name: string;
  colour: string;
  /** SVG stroke-dasharray; solid when absent (ARMs solid, MDMs dashed). */
  dash?: string;
  marker: "circle" | "square" | "triangle" | "diamond";
  x: number[];
  y: (number | null)[];
  /** Optional band (mean ± std, a confidence interval). */
  lo?: (number | null)[];
  hi?: (number | null)[];
}

export interface LinePanel {
  type: "lines";
  title?: string;
  x: NumberAxis;
  y: NumberAxis;
  series: LineSeries[];
}

/** Stacked bars: one bar per x category, one stack layer per entry. */
export interface BarPanel {
  type: "bars";
  title?: string;
  x: CategoryAxis;
  y: NumberAxis;
  stacks: { name: string; colour: string; values: number[] }[];
}

export type Panel = HeatPanel | LinePanel | BarPanel;

/** One legend entry: what a colour or mark means. */
export interface LegendEntry {
  label: string;
  colour: string;
  mark: "line" | "swatch" | "outline" | "tick";
  dash?: string;
  /** A "line" entry's marker, drawn on the line sample (the series' marker). */
  marker?: LineSeries["marker"];
}

export interface FigureDescription {
  kind: "figure";
  version: 1;
  /** Which figure module built it ("absorption", "qk", …): the registry key. */
  figure: string;
  /** Short, so it fits; the rule and the conditions go in `subtitle`. */
  title: string;
  subtitle: string[];
  panels: Panel[];
  /** Panels per row at most (they wrap to fewer when the cell is narrow). */
  columns: number;
  legend: LegendEntry[];
  /** Notes drawn under the figure: what marks mean, what was subsampled. */
  notes: string[];
  /** The analysis' warnings, drawn in the figure (static and widget alike). */
  warnings: string[];
  /** What an exported file is named after (model, figure, layer, step). */
  exportName: ExportName;
  /** One line for text/plain. */
  text: string;
}
