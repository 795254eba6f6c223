/**
 * A generic labelled heatmap: the figure spec (plain JSON, what a widget renders) and its static
 * SVG fallback (what GitHub, nbviewer and nbconvert show).
 *
 * Used for any [row, column] matrix: attention received per [layer, key], a [query, key]
 * pattern, absorption rate per [layer, head]. Analyses build the numbers; `heatmap()` validates
 * them once and turns them into a spec; `display/show()` turns the spec into a MIME bundle.
 *
 * @example
 *   show(heatmap({ title: "attention received", yTitle: "layer", xTitle: "key",
 *                  yLabels: ["0", "1"], xLabels: tokens, values: [row0, row1] }));
 */
import type { HeatmapSpec } from "../protocol/heatmap.js";
import { displayLabels } from "../protocol/token-text.js";
import { SettingsError, keyword } from "../util/errors.js";
import { COLORMAPS, isDiverging, type Colormap } from "./colormap.js";
import { formatValue } from "./svg.js";
import type { FigureDescription } from "../protocol/figure.js";
import { drawFigure } from "../protocol/draw.js";
import { describe } from "./describe.js";
import { pngRaster } from "./raster.js";

// The spec is the kernel ↔ widget contract, declared once in protocol/ (the widget bundle compiles it too).
export type { HeatmapSpec } from "../protocol/heatmap.js";

/** What `heatmap()` accepts: rows may be typed arrays, labels may be numbers. */
export interface HeatmapInput {
  title: string;
  subtitle?: string;
  xTitle?: string;
  yTitle?: string;
  valueLabel?: string;
  xLabels: ArrayLike<string | number>;
  yLabels: ArrayLike<string | number>;
  /** [row, column]; NaN, ±Infinity and null become missing cells. */
  values: ArrayLike<ArrayLike<number | null>>;
  /** Default "viridis". */
  colormap?: Colormap;
  /** Default: [min, max] of the finite values (symmetric around 0 for diverging maps). */
  domain?: [number, number];
}

const FILE = "heatmap";

/** Validate the input once and build the spec. Bad input → SettingsError naming the field. */
export function heatmap(input: HeatmapInput): HeatmapSpec {
  if (input === null || typeof input !== "object") {
    throw new SettingsError("heatmap() needs an options object", { file: FILE, expected: "object", found: typeof input });
  }
  const title = optionalString(input.title, "title") ?? fail("title", "a string", input.title);
  const xLabels = labels(input.xLabels, "xLabels");
  const yLabels = labels(input.yLabels, "yLabels");
  const values = matrix(input.values, yLabels.length, xLabels.length);
  const colormap = keyword(input.colormap ?? "viridis", COLORMAPS, { field: "colormap", file: FILE });
  const domain = input.domain === undefined ? autoDomain(values, colormap) : checkDomain(input.domain);
  const spec: HeatmapSpec = { kind: "heatmap", title, xLabels, yLabels, values, colormap, domain };
  for (const key of ["subtitle", "xTitle", "yTitle", "valueLabel"] as const) {
    const v = optionalString(input[key], key);
    if (v !== undefined) spec[key] = v;
  }
  return spec;
}

function fail(field: string, expected: string, found: unknown): never {
  throw new SettingsError(`Invalid heatmap ${field}`, { file: FILE, field, expected, found: short(found) });
}

function short(v: unknown): string {
  if (v === undefined) return "undefined";
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v);
  if (typeof v === "number" || typeof v === "boolean" || v === null) return String(v);
  if (ArrayBuffer.isView(v) || Array.isArray(v)) return `${v.constructor.name}(${(v as ArrayLike<unknown>).length})`;
  return typeof v;
}

function optionalString(v: unknown, field: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string") fail(field, "a string", v);
  return v;
}

function labels(v: unknown, field: string): string[] {
  if (v === null || typeof v !== "object" || typeof (v as ArrayLike<unknown>).length !== "number") {
    fail(field, "an array of strings or numbers", v);
  }
  const a = v as ArrayLike<unknown>;
  if (a.length === 0) fail(field, "at least one label", v);
  const out: string[] = [];
  for (let i = 0; i < a.length; i++) {
    const l = a[i];
    if (typeof l !== "string" && typeof l !== "number") fail(`${field}[${i}]`, "a string or number", l);
    out.push(String(l));
  }
  return out;
}

/** Round to float32 precision (7 significant digits): JSON stays short and values stay exact enough. */
function round7(v: number): number {
  return Number(v.toPrecision(7));
}

function matrix(v: unknown, rows: number, cols: number): (number | null)[][] {
  const a = v as ArrayLike<ArrayLike<unknown>>;
  if (a === null || typeof a !== "object" || typeof a.length !== "number") fail("values", "an array of rows", v);
  if (a.length !== rows) fail("values", `${rows} rows (one per yLabel)`, `${a.length} rows`);
  const out: (number | null)[][] = [];
  for (let r = 0; r < rows; r++) {
    const row = a[r];
    if (row === null || typeof row !== "object" || typeof row.length !== "number") {
      fail(`values[${r}]`, "an array or typed array", row);
    }
    if (row.length !== cols) fail(`values[${r}]`, `${cols} columns (one per xLabel)`, `${row.length} columns`);
    const outRow: (number | null)[] = new Array(cols);
    for (let c = 0; c < cols; c++) {
      const x = row[c];
      if (x === null || (typeof x === "number" && !Number.isFinite(x))) outRow[c] = null;
      else if (typeof x === "number") outRow[c] = round7(x);
      else fail(`values[${r}][${c}]`, "a number or null", x);
    }
    out.push(outRow);
  }
  return out;
}

function autoDomain(values: (number | null)[][], colormap: Colormap): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of values) {
    for (const x of row) {
      if (x === null) continue;
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
  }
  if (lo === Infinity) return [0, 1]; // every cell missing
  if (isDiverging(colormap)) {
    const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    return [-m, m];
  }
  return lo === hi ? [lo - 0.5, hi + 0.5] : [lo, hi];
}

function checkDomain(d: unknown): [number, number] {
  if (!Array.isArray(d) || d.length !== 2 || !d.every((x) => typeof x === "number" && Number.isFinite(x)) || d[0] >= d[1]) {
    fail("domain", "[low, high] with finite low < high", d);
  }
  return [d[0], d[1]];
}

/** One-line summary for `text/plain`. */
export function describeHeatmap(spec: HeatmapSpec): string {
  let missing = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of spec.values) {
    for (const x of row) {
      if (x === null) missing++;
      else {
        lo = Math.min(lo, x);
        hi = Math.max(hi, x);
      }
    }
  }
  const rows = `${spec.yLabels.length} rows${spec.yTitle ? ` (${spec.yTitle})` : ""}`;
  const cols = `${spec.xLabels.length} columns${spec.xTitle ? ` (${spec.xTitle})` : ""}`;
  const range = lo === Infinity ? "no finite values" : `values ${formatValue(lo)} … ${formatValue(hi)}`;
  const miss = missing ? `, ${missing} missing` : "";
  return `Heatmap ${JSON.stringify(spec.title)}: ${rows} × ${cols}, ${range}${miss}, colormap ${spec.colormap}`;
}

/** The generic heatmap as a figure description (what the widget and the static image draw). */
export function heatmapFigure(spec: HeatmapSpec): FigureDescription {
  return describe("heatmap", {
    title: spec.title,
    subtitle: spec.subtitle ? [spec.subtitle] : [],
    panels: [
      {
        type: "heat",
        rows: spec.yLabels.length,
        cols: spec.xLabels.length,
        values: spec.values.flat(),
        scale: { colormap: spec.colormap, domain: spec.domain, diverging: isDiverging(spec.colormap) },
        valueLabel: spec.valueLabel ?? "value",
        x: { title: spec.xTitle ?? "", labels: displayLabels(spec.xLabels) },
        y: { title: spec.yTitle ?? "", labels: displayLabels(spec.yLabels) },
      },
    ],
    columns: 1,
    text: describeHeatmap(spec),
  });
}

/** The spec as a standalone SVG string (the same drawing the widget shows). All text is escaped. */
export function renderHeatmapSvg(spec: HeatmapSpec): string {
  return drawFigure(heatmapFigure(spec), { raster: pngRaster });
}
