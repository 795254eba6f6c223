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
import { SettingsError, keyword } from "../util/errors.js";
import { COLORMAPS, colorAt, isDiverging, lightness, type Colormap } from "./colormap.js";
import { el, formatValue, labelStride, num, svgDocument, text, truncate } from "./svg.js";

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

const MISSING_FILL = "#e0e0e0";
/** Colour quantisation: adjacent cells of the same level merge into one <rect> (smaller SVG). */
const LEVELS = 64;

/**
 * Render the spec as a standalone SVG string. Cells are at most 28 px and shrink to fit about
 * 560 × 420 px; labels are thinned out when they would overlap. All text is escaped.
 */
export function renderHeatmapSvg(spec: HeatmapSpec): string {
  const nx = spec.xLabels.length;
  const ny = spec.yLabels.length;
  const cw = Math.min(28, Math.max(2, Math.floor(560 / nx)));
  const ch = Math.min(28, Math.max(2, Math.floor(420 / ny)));
  const plotW = cw * nx;
  const plotH = ch * ny;

  const yLabelChars = Math.min(16, Math.max(...spec.yLabels.map((l) => Array.from(l).length)));
  const xLabelChars = Math.min(12, Math.max(...spec.xLabels.map((l) => Array.from(l).length)));
  const rotateX = xLabelChars * 6.2 > cw;
  const left = 10 + (spec.yTitle ? 16 : 0) + yLabelChars * 6.2 + 6;
  const top = 26 + (spec.subtitle ? 16 : 0);
  const xLabelBand = rotateX ? xLabelChars * 5.4 + 12 : 16; // rotated -60°: height ≈ chars · 6.2 px · sin 60°
  const bottom = xLabelBand + (spec.xTitle ? 18 : 0) + 8;
  const barX = left + plotW + 16;
  const barH = Math.max(plotH, 80);
  const width = barX + 12 + 8 + 56;
  const height = top + Math.max(plotH, barH) + bottom;

  const body: string[] = [];
  body.push(el("text", { x: 10, y: 18, "font-size": 14, "font-weight": 600 }, text(spec.title)));
  if (spec.subtitle) body.push(el("text", { x: 10, y: 34, fill: "#555" }, text(spec.subtitle)));

  // Cells, merged horizontally where the quantised colour repeats.
  const [lo, hi] = spec.domain;
  const level = (x: number | null): number => (x === null ? -1 : Math.round(((x - lo) / (hi - lo)) * (LEVELS - 1)));
  const cells: string[] = [];
  const tooltips = nx * ny <= 1024;
  for (let r = 0; r < ny; r++) {
    const row = spec.values[r];
    let c = 0;
    while (c < nx) {
      const lv = Math.min(LEVELS - 1, Math.max(-1, level(row[c])));
      let end = c + 1;
      if (!tooltips) while (end < nx && Math.min(LEVELS - 1, Math.max(-1, level(row[end]))) === lv) end++;
      const fill = lv < 0 ? MISSING_FILL : colorAt(spec.colormap, lv / (LEVELS - 1));
      const rect = { x: left + c * cw, y: top + r * ch, width: (end - c) * cw, height: ch, fill };
      if (tooltips) {
        const v = row[c];
        const tip = `${spec.yLabels[r]} · ${spec.xLabels[c]}: ${v === null ? "missing" : formatValue(v)}`;
        cells.push(el("rect", rect, el("title", {}, text(tip))));
      } else {
        cells.push(el("rect", rect));
      }
      c = end;
    }
  }
  body.push(el("g", { "shape-rendering": "crispEdges" }, ...cells));

  // Row labels (right-aligned against the grid), thinned when rows are short.
  const yStride = labelStride(ny, plotH, 12);
  const yText: string[] = [];
  for (let r = 0; r < ny; r += yStride) {
    const y = top + r * ch + ch / 2 + 4;
    yText.push(el("text", { x: left - 4, y, "text-anchor": "end" }, text(truncate(spec.yLabels[r], 16))));
  }
  body.push(el("g", { fill: "#333" }, ...yText));

  // Column labels: horizontal when they fit a cell, else rotated -60°.
  const xStride = labelStride(nx, plotW, rotateX ? 12 : xLabelChars * 6.2 + 4);
  const xText: string[] = [];
  for (let c = 0; c < nx; c += xStride) {
    const x = left + c * cw + cw / 2;
    const y = top + plotH + 12;
    const label = text(truncate(spec.xLabels[c], 12));
    xText.push(
      rotateX
        ? el("text", { x, y: y - 4, "text-anchor": "end", transform: `rotate(-60 ${num(x)} ${num(y - 4)})` }, label)
        : el("text", { x, y, "text-anchor": "middle" }, label),
    );
  }
  body.push(el("g", { fill: "#333" }, ...xText));

  if (spec.xTitle) {
    const y = top + plotH + xLabelBand + 14;
    body.push(el("text", { x: left + plotW / 2, y, "text-anchor": "middle", fill: "#555" }, text(spec.xTitle)));
  }
  if (spec.yTitle) {
    const x = 18;
    const y = top + plotH / 2;
    body.push(el("text", { x, y, "text-anchor": "middle", fill: "#555", transform: `rotate(-90 ${num(x)} ${num(y)})` }, text(spec.yTitle)));
  }
  body.push(colorBar(spec, barX, top, barH));
  return svgDocument(width, height, body, { title: spec.title });
}

/** Vertical colour bar: high at the top, with low / middle / high ticks. */
function colorBar(spec: HeatmapSpec, x: number, y: number, h: number): string {
  const id = `floatscope-cmap-${spec.colormap}`; // same map ⇒ same gradient, so duplicate ids are harmless
  const stops: string[] = [];
  for (let i = 0; i <= 8; i++) {
    stops.push(el("stop", { offset: `${(i / 8) * 100}%`, "stop-color": colorAt(spec.colormap, 1 - i / 8) }));
  }
  const [lo, hi] = spec.domain;
  const ticks = [hi, (lo + hi) / 2, lo].map((v, i) =>
    el("text", { x: x + 16, y: y + (i * h) / 2 + (i === 0 ? 9 : i === 2 ? 0 : 4), fill: "#333" }, text(formatValue(v))),
  );
  const parts = [
    el("defs", {}, el("linearGradient", { id, x1: 0, y1: 0, x2: 0, y2: 1 }, ...stops)),
    el("rect", { x, y, width: 12, height: h, fill: `url(#${id})`, stroke: "#999", "stroke-width": 0.5 }),
    ...ticks,
  ];
  if (spec.valueLabel) {
    const tx = x + 66;
    const ty = y + h / 2;
    parts.push(
      el(
        "text",
        { x: tx, y: ty, "text-anchor": "middle", fill: "#555", transform: `rotate(90 ${num(tx)} ${num(ty)})` },
        text(spec.valueLabel),
      ),
    );
  }
  return el("g", {}, ...parts);
}

/** Pick black or white for text drawn on a cell of colour `fill` (exported for other figures). */
export function textColorOn(fill: string): string {
  return lightness(fill) > 0.55 ? "#111" : "#fff";
}
