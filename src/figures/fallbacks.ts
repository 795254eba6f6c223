/**
 * Static fallbacks drawn in the kernel for the widget views: what GitHub,
 * nbviewer and HTML export show where the JupyterLab renderer is absent.
 *
 * - `heatPanelRaster`: one dense heatmap (QK score / cos / norm, temporal drift) as a PNG — N² cells are
 *   too many for SVG rects above ~100 tokens, a deflated PNG stays small; framed.ts puts axes around it;
 * - `linesSvg`: line charts with optional ± bands (absorption per layer, distractor sweeps), as SVG
 *   so they stay vector for papers. All text is escaped through svg.ts.
 */
import { colorAt, type Colormap } from "./colormap.js";
import { encodePng } from "./png.js";
import { niceTicks } from "../protocol/scales.js";
import { el, fitTitle, formatValue, num, svgDocument, text } from "./svg.js";

export interface HeatPanel {
  /** [rows, cols] row-major; NaN = missing (light grey). */
  values: ArrayLike<number>;
  rows: number;
  cols: number;
  colormap: Colormap;
  /** Colour domain [low, high] (outside: clamped); default the panel's own min..max. */
  domain?: [number, number];
  /** Cells to paint in the mark colour (e.g. anchors), flat indices. */
  highlight?: ArrayLike<number>;
}

const MISSING: [number, number, number] = [235, 235, 235];
const HIGHLIGHT: [number, number, number] = [255, 127, 14];

function lut(name: Colormap): Uint8Array {
  const t = new Uint8Array(256 * 3);
  for (let k = 0; k < 256; k++) {
    const hex = colorAt(name, k / 255);
    for (let c = 0; c < 3; c++) t[k * 3 + c] = parseInt(hex.slice(1 + 2 * c, 3 + 2 * c), 16);
  }
  return t;
}

/** One panel's cells as a PNG, each cell a whole number of pixels (about `target` px a side). */
export interface PanelRaster {
  png: Buffer;
  width: number;
  height: number;
  /** Value range the colours span (NaN cells excluded). */
  min: number;
  max: number;
}

/** Draw one panel's cells, each sx × sy pixels; returns its value range. */
function paint(p: HeatPanel, sx: number, sy: number, put: (x: number, y: number, c: ArrayLike<number>) => void) {
  const table = lut(p.colormap);
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < p.rows * p.cols; i++) {
    const v = p.values[i];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (p.domain) [min, max] = p.domain;
  const span = max > min ? max - min : 1;
  const hi = new Set(Array.from(p.highlight ?? []));
  for (let r = 0; r < p.rows; r++) {
    for (let c = 0; c < p.cols; c++) {
      const i = r * p.cols + c;
      const v = p.values[i];
      let col: ArrayLike<number>;
      if (hi.has(i)) col = HIGHLIGHT;
      else if (Number.isNaN(v)) col = MISSING;
      else {
        const k = Math.max(0, Math.min(255, Math.round(((v - min) / span) * 255))) * 3;
        col = table.subarray(k, k + 3);
      }
      for (let dy = 0; dy < sy; dy++) for (let dx = 0; dx < sx; dx++) put(c * sx + dx, r * sy + dy, col);
    }
  }
  return { min, max };
}

/** One panel as a PNG for framed.ts (marks and labels are drawn by the frame, not into the raster). */
export function heatPanelRaster(p: HeatPanel, target = 240): PanelRaster {
  const sx = Math.max(1, Math.floor(target / p.cols));
  const sy = Math.max(1, Math.floor(target / p.rows));
  const width = p.cols * sx;
  const height = p.rows * sy;
  const rgb = new Uint8Array(width * height * 3).fill(255);
  const put = (x: number, y: number, c: ArrayLike<number>) => {
    const o = (y * width + x) * 3;
    rgb[o] = c[0];
    rgb[o + 1] = c[1];
    rgb[o + 2] = c[2];
  };
  const { min, max } = paint(p, sx, sy, put);
  return { png: encodePng(width, height, rgb), width, height, min, max };
}

export interface LineSeries {
  name: string;
  color: string;
  x: number[];
  y: number[];
  lo?: number[];
  hi?: number[];
  /** SVG stroke-dasharray (e.g. "6 4" for MDMs); solid when absent. */
  dash?: string;
}

/**
 * A line chart with ± bands and a legend, as a standalone SVG document: a short title, optional
 * subtitle lines under it (each cut to the width), y ticks at round values.
 */
export function linesSvg(opts: { title: string; subtitle?: string[]; xTitle: string; yTitle: string; series: LineSeries[] }): string {
  const W = 560;
  const sub = opts.subtitle ?? [];
  const m = { l: 56, r: 150, t: 30 + 14 * sub.length, b: 44 };
  const H = 310 + m.t;
  const xs = opts.series.flatMap((s) => s.x);
  const ys = opts.series.flatMap((s) => [...s.y, ...(s.lo ?? []), ...(s.hi ?? [])]).filter(Number.isFinite);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  let y0 = Math.min(0, ...ys);
  let y1 = Math.max(...ys);
  if (!(y1 > y0)) [y0, y1] = [y0 - 1, y0 + 1];
  // The axis spans whole ticks, so the top gridline is a round value too.
  const yticks = niceTicks(y0, y1, 5);
  [y0, y1] = [Math.min(y0, yticks[0]), Math.max(y1, yticks[yticks.length - 1])];
  const px = (x: number) => m.l + ((x - x0) / (x1 > x0 ? x1 - x0 : 1)) * (W - m.l - m.r);
  const py = (y: number) => H - m.b - ((y - y0) / (y1 - y0)) * (H - m.t - m.b);
  const body: string[] = [];
  body.push(el("rect", { width: W, height: H, fill: "#fff" }));
  body.push(el("text", { x: m.l, y: 18, "font-size": 13, "font-weight": 600 }, text(fitTitle(opts.title, W - m.l - 8, 13))));
  sub.forEach((line, i) => body.push(el("text", { x: m.l, y: 33 + 14 * i, fill: "#555" }, text(fitTitle(line, W - m.l - 8, 11)))));
  for (const y of yticks) {
    body.push(el("line", { x1: m.l, x2: W - m.r, y1: py(y), y2: py(y), stroke: "#eee" }));
    body.push(el("text", { x: m.l - 4, y: py(y) + 4, "text-anchor": "end" }, text(formatValue(y))));
  }
  const xticks = Array.from(new Set(xs)).sort((a, b) => a - b);
  const stride = Math.max(1, Math.ceil(xticks.length / 10));
  xticks.forEach((x, i) => {
    if (i % stride === 0) body.push(el("text", { x: px(x), y: H - m.b + 14, "text-anchor": "middle" }, text(String(x))));
  });
  body.push(el("text", { x: (m.l + W - m.r) / 2, y: H - 8, "text-anchor": "middle" }, text(opts.xTitle)));
  body.push(el("text", { transform: `translate(14,${num((m.t + H - m.b) / 2)}) rotate(-90)`, "text-anchor": "middle" }, text(opts.yTitle)));
  body.push(el("line", { x1: m.l, x2: m.l, y1: m.t, y2: H - m.b, stroke: "#999" }));
  body.push(el("line", { x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b, stroke: "#999" }));
  opts.series.forEach((s, i) => {
    if (s.lo && s.hi) {
      const up = s.x.map((x, k) => `${num(px(x))},${num(py(s.hi![k]))}`);
      const down = s.x.map((x, k) => `${num(px(x))},${num(py(s.lo![k]))}`).reverse();
      body.push(el("polygon", { points: [...up, ...down].join(" "), fill: s.color, "fill-opacity": 0.2, stroke: "none" }));
    }
    const pts = s.x.map((x, k) => `${num(px(x))},${num(py(s.y[k]))}`).join(" ");
    const dash = s.dash ? { "stroke-dasharray": s.dash } : {};
    body.push(el("polyline", { points: pts, fill: "none", stroke: s.color, "stroke-width": 2, ...dash }));
    for (let k = 0; k < s.x.length; k++) body.push(el("circle", { cx: px(s.x[k]), cy: py(s.y[k]), r: 2.5, fill: s.color }));
    const ly = m.t + 10 + i * 18;
    body.push(el("line", { x1: W - m.r + 10, x2: W - m.r + 30, y1: ly, y2: ly, stroke: s.color, "stroke-width": 2, ...dash }));
    body.push(el("text", { x: W - m.r + 34, y: ly + 4 }, text(s.name)));
  });
  return svgDocument(W, H, body, { title: opts.title });
}
