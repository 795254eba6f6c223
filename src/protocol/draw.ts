/**
 * The one figure renderer: `FigureDescription` → standalone SVG. The kernel calls it for the
 * static image of every figure output and for `save()`; the JupyterLab widget calls the same
 * function (this folder is compiled into the widget bundle as it is) at the width of its cell.
 * Reading rules that apply to every view live here once: token labels thinned to fit with the
 * full text on hover (`<title>`), round ticks, a colour bar with its quantity per heatmap, the
 * legend, short titles with the rule as a wrapped subtitle, the analysis' warnings.
 *
 * All text enters the markup through markup.ts (`text`, `attrs`): labels are untrusted tokens.
 */
import { colorAt, colormapLut, lightness } from "./colormap.js";
import type { BarPanel, FigureDescription, HeatPanel, LegendEntry, LinePanel, Panel } from "./figure.js";
import { el, formatValue, labelStride, num, svgDocument, text, truncate } from "./markup.js";
import { niceTicks } from "./scales.js";
import { thinLabels } from "./axis-labels.js";

/** Turns [height · width · 3] RGB bytes into an image href (a data: URL); absent → cells are drawn as rects. */
export type Raster = (rgb: Uint8Array, width: number, height: number) => string;

export interface DrawOptions {
  /** Width of the figure in CSS pixels (the widget passes its cell's width). Default 720. */
  width?: number;
  raster?: Raster;
}

/** Geometry of one drawn heat panel's plot area, for the widget's hover read-out. */
export interface HeatGeometry {
  panel: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

const FONT = 11;
/** ~ width of one character of the default sans-serif at FONT. */
const CH = 0.6 * FONT;
const PAD = 12;
const GAP = 22;
const LINE = 15;
const MISSING = "#e6e6e6";
/** Cells above this count are drawn as one raster image instead of one rect (with hover text) each. */
const MAX_RECT_CELLS = 1600;
const MAX_LABEL_CHARS = 10;

/** Split `s` into lines of at most `max` characters at spaces (a word longer than a line is cut). */
export function wrapText(s: string, max: number): string[] {
  const words = s.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  let line = "";
  for (const w of words) {
    const next = line ? `${line} ${w}` : w;
    if (Array.from(next).length <= max) line = next;
    else {
      if (line) out.push(line);
      line = truncate(w, max);
    }
  }
  if (line) out.push(line);
  return out.length ? out : [""];
}

/** A label as drawn: thinned/truncated text plus the full text as its hover title. */
function label(full: string, max: number, a: Record<string, string | number | undefined>): string {
  const shown = truncate(full.replace(/\n/g, "↵"), max);
  return el("text", a, el("title", {}, text(full)), text(shown));
}

/** The figure as a standalone SVG document. */
export function drawFigure(fig: FigureDescription, opts: DrawOptions = {}): string {
  return drawFigureWithGeometry(fig, opts).svg;
}

/** `drawFigure` plus where each heat panel's cells were drawn (the widget maps the mouse to a cell). */
export function drawFigureWithGeometry(fig: FigureDescription, opts: DrawOptions = {}): { svg: string; heat: HeatGeometry[] } {
  const W = Math.max(320, Math.round(opts.width ?? 720));
  const inner = W - 2 * PAD;
  const chars = (px: number, font = FONT) => Math.max(8, Math.floor(px / (0.6 * font)));
  const body: string[] = [];
  let y = PAD;

  body.push(
    el("text", { x: PAD, y: y + 13, "font-size": 15, "font-weight": 600, fill: "#111" }, text(truncate(fig.title, chars(inner, 15)))),
  );
  y += 22;
  for (const line of fig.subtitle.flatMap((s) => wrapText(s, chars(inner)))) {
    body.push(el("text", { x: PAD, y: y + 10, fill: "#555" }, text(line)));
    y += LINE;
  }
  if (fig.legend.length) {
    const lg = legend(fig.legend, PAD, y + 4, inner);
    body.push(lg.svg);
    y += lg.height + 6;
  }
  y += 6;

  // Panels in a grid: as many per row as fit (at most fig.columns), wrapping in narrow cells.
  const minW = (p: Panel) => (p.type === "heat" ? 250 : 300);
  const fit = Math.max(1, Math.floor((inner + GAP) / (Math.max(...fig.panels.map(minW), 250) + GAP)));
  const perRow = Math.max(1, Math.min(fig.columns, fig.panels.length, fit));
  const pw = (inner - GAP * (perRow - 1)) / perRow;
  const heat: HeatGeometry[] = [];
  for (let start = 0; start < fig.panels.length; start += perRow) {
    let rowH = 0;
    for (let k = 0; k < perRow && start + k < fig.panels.length; k++) {
      const i = start + k;
      const p = fig.panels[i];
      const x0 = PAD + k * (pw + GAP);
      const drawn =
        p.type === "heat"
          ? heatPanel(p, i, x0, y, pw, opts.raster)
          : p.type === "lines"
            ? linePanel(p, i, x0, y, pw)
            : barPanel(p, i, x0, y, pw);
      body.push(drawn.svg);
      if (drawn.geometry) heat.push(drawn.geometry);
      rowH = Math.max(rowH, drawn.height);
    }
    y += rowH + GAP;
  }

  for (const note of fig.notes.flatMap((s) => wrapText(s, chars(inner)))) {
    body.push(el("text", { x: PAD, y: y + 10, fill: "#555" }, text(note)));
    y += LINE;
  }
  if (fig.warnings.length) {
    body.push(
      el(
        "text",
        { x: PAD, y: y + 10, fill: "#8a4b00", "font-weight": 600 },
        text(`⚠ ${fig.warnings.length} warning${fig.warnings.length > 1 ? "s" : ""}`),
      ),
    );
    y += LINE;
    for (const line of fig.warnings.flatMap((w) => wrapText(`• ${w}`, chars(inner - 10)))) {
      body.push(el("text", { x: PAD + 10, y: y + 10, fill: "#8a4b00", class: "fs-warning" }, text(line)));
      y += LINE;
    }
  }
  const H = Math.ceil(y + PAD);
  body.unshift(el("rect", { x: 0, y: 0, width: W, height: H, fill: "#fff" }));
  return { svg: svgDocument(W, H, body, { title: [fig.title, ...fig.subtitle].join(" — ") }), heat };
}

function legend(entries: LegendEntry[], x0: number, y0: number, width: number): { svg: string; height: number } {
  const parts: string[] = [];
  let x = x0;
  let y = y0;
  for (const e of entries) {
    const shown = truncate(e.label, 40);
    const w = 24 + Array.from(shown).length * CH + 16;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += LINE + 2;
    }
    const cy = y + 6;
    if (e.mark === "line") {
      parts.push(el("line", { x1: x, x2: x + 20, y1: cy, y2: cy, stroke: e.colour, "stroke-width": 2.5, "stroke-dasharray": e.dash }));
      if (e.marker) parts.push(marker(e.marker, x + 10, cy, e.colour, e.label));
    } else if (e.mark === "tick") {
      parts.push(el("rect", { x: x + 8, y: cy - 5, width: 4, height: 10, fill: e.colour }));
    } else if (e.mark === "outline") {
      parts.push(el("rect", { x: x + 4, y: cy - 5, width: 12, height: 10, fill: "none", stroke: e.colour, "stroke-width": 2 }));
    } else {
      parts.push(el("rect", { x: x + 4, y: cy - 5, width: 12, height: 10, fill: e.colour, stroke: "#999", "stroke-width": 0.5 }));
    }
    parts.push(el("text", { x: x + 24, y: cy + 4, fill: "#222" }, el("title", {}, text(e.label)), text(shown)));
    x += w;
  }
  return { svg: el("g", { class: "fs-legend" }, ...parts), height: y - y0 + LINE };
}

interface Drawn {
  svg: string;
  height: number;
  geometry?: HeatGeometry;
}

function panelTitle(t: string | undefined, x: number, y: number, w: number): string {
  return t
    ? el("text", { x, y: y + 11, "font-weight": 600, fill: "#222" }, el("title", {}, text(t)), text(truncate(t, Math.floor(w / CH))))
    : "";
}

/** Where a heat panel's cells stand: the plot's top-left corner, one cell's size and the whole plot's. */
interface CellBox {
  px: number;
  top: number;
  cw: number;
  ch: number;
  plotW: number;
  plotH: number;
}

/**
 * The cells of a heat panel: one titled rect a cell while they are few, else one raster image, else
 * (no raster) rects merged over runs of equal colour.
 */
function heatCells(p: HeatPanel, box: CellBox, raster: Raster | undefined): string[] {
  const { px, top, cw, ch, plotW, plotH } = box;
  const [lo, hi] = p.scale.domain;
  const span = hi > lo ? hi - lo : 1;
  const t = (v: number) => (v - lo) / span;
  const marked = new Set(p.cellMarks?.cells ?? []);
  const fillOf = (i: number): string => {
    const v = p.values[i];
    if (marked.has(i)) return p.cellMarks!.colour;
    return v === null ? MISSING : colorAt(p.scale.colormap, t(v));
  };
  const n = p.rows * p.cols;
  const cells: string[] = [];
  if (n <= MAX_RECT_CELLS) {
    for (let r = 0; r < p.rows; r++) {
      for (let c = 0; c < p.cols; c++) {
        const i = r * p.cols + c;
        const v = p.values[i];
        const tip = `${p.y.title} ${p.y.labels[r] ?? r} · ${p.x.title} ${p.x.labels[c] ?? c}: ${v === null ? "missing" : formatValue(v)}`;
        const fill = fillOf(i);
        cells.push(el("rect", { x: px + c * cw, y: top + r * ch, width: cw, height: ch, fill }, el("title", {}, text(tip))));
        if (p.cellText && v !== null && cw >= 26 && ch >= 12) {
          const tc = lightness(fill) > 0.55 ? "#111" : "#fff";
          cells.push(
            el(
              "text",
              { x: px + (c + 0.5) * cw, y: top + (r + 0.5) * ch + 3.5, "text-anchor": "middle", "font-size": 9, fill: tc },
              text(formatValue(v)),
            ),
          );
        }
      }
    }
  } else if (raster) {
    const kx = Math.max(1, Math.min(8, Math.round(cw)));
    const ky = Math.max(1, Math.min(8, Math.round(ch)));
    const w = p.cols * kx;
    const h = p.rows * ky;
    const rgb = new Uint8Array(w * h * 3);
    const table = colormapLut(p.scale.colormap);
    const mark = p.cellMarks ? hexBytes(p.cellMarks.colour) : [0, 0, 0];
    const miss = hexBytes(MISSING);
    for (let r = 0; r < p.rows; r++) {
      for (let c = 0; c < p.cols; c++) {
        const i = r * p.cols + c;
        const v = p.values[i];
        let col: ArrayLike<number>;
        if (marked.has(i)) col = mark;
        else if (v === null) col = miss;
        else {
          const k = Math.max(0, Math.min(255, Math.round(t(v) * 255))) * 3;
          col = table.subarray(k, k + 3);
        }
        for (let dy = 0; dy < ky; dy++) {
          let o = ((r * ky + dy) * w + c * kx) * 3;
          for (let dx = 0; dx < kx; dx++, o += 3) {
            rgb[o] = col[0];
            rgb[o + 1] = col[1];
            rgb[o + 2] = col[2];
          }
        }
      }
    }
    cells.push(
      el("image", {
        x: px,
        y: top,
        width: plotW,
        height: plotH,
        href: raster(rgb, w, h),
        preserveAspectRatio: "none",
        "image-rendering": "optimizeSpeed",
        style: "image-rendering:pixelated",
      }),
    );
  } else {
    // No raster available: runs of equal colour merged into one rect per row.
    for (let r = 0; r < p.rows; r++) {
      let c = 0;
      while (c < p.cols) {
        const fill = fillOf(r * p.cols + c);
        let end = c + 1;
        while (end < p.cols && fillOf(r * p.cols + end) === fill) end++;
        cells.push(el("rect", { x: px + c * cw, y: top + r * ch, width: (end - c) * cw, height: ch, fill }));
        c = end;
      }
    }
  }
  return cells;
}

function heatPanel(p: HeatPanel, index: number, x0: number, y0: number, pw: number, raster: Raster | undefined): Drawn {
  const parts: string[] = [panelTitle(p.title, x0, y0, pw)];
  const top = y0 + (p.title ? 18 : 0);
  const yChars = Math.min(MAX_LABEL_CHARS, Math.max(1, ...p.y.labels.map((l) => Array.from(l).length)));
  const xChars = Math.min(MAX_LABEL_CHARS, Math.max(1, ...p.x.labels.map((l) => Array.from(l).length)));
  const left = (p.y.title ? 16 : 0) + yChars * CH + 6;
  const barW = 10 + 12 + 4 + 7 * CH + 16;
  const plotW0 = Math.max(40, pw - left - barW);
  const cw = Math.min(40, plotW0 / p.cols);
  const ch = Math.max(1, Math.min(28, cw < 6 ? Math.max(cw, 4) : cw, 440 / p.rows));
  const plotW = cw * p.cols;
  const plotH = ch * p.rows;
  const px = x0 + left;
  const cells = heatCells(p, { px, top, cw, ch, plotW, plotH }, raster);
  parts.push(el("g", { "shape-rendering": "crispEdges", class: "fs-cells" }, ...cells));
  parts.push(el("rect", { x: px, y: top, width: plotW, height: plotH, fill: "none", stroke: "#999", "stroke-width": 0.5 }));

  // Column marks (floating keys) in a strip under the cells.
  let below = top + plotH + 2;
  if (p.columnMarks) {
    for (const c of p.columnMarks.columns) {
      if (c >= 0 && c < p.cols)
        parts.push(el("rect", { x: px + c * cw, y: below, width: Math.max(1.5, cw), height: 5, fill: p.columnMarks.colour }));
    }
    below += 7;
  }

  // Row labels, thinned to one per ~FONT px; full text on hover.
  const ys = labelStride(p.rows, plotH, FONT + 1);
  const yText: string[] = [];
  for (let r = 0; r < p.rows; r += ys) {
    yText.push(label(p.y.labels[r] ?? String(r), MAX_LABEL_CHARS, { x: px - 4, y: top + (r + 0.5) * ch + 3.5, "text-anchor": "end" }));
  }
  parts.push(el("g", { fill: "#333", class: "fs-ylabels" }, ...yText));

  // Column labels: horizontal when they fit a cell, else rotated −60°; thinned to fit.
  const rotate = xChars * CH + 2 > cw;
  // Marked columns (floating keys, anchor columns) are always labelled, in bold; the regular labels
  // are thinned around them (axis-labels.ts), so thinning never hides the column a figure is about.
  const must = markedColumns(p);
  const xText: string[] = [];
  for (const c of thinLabels(p.cols, plotW, rotate ? FONT + 1 : xChars * CH + 6, must)) {
    const x = px + (c + 0.5) * cw;
    const yy = below + 10;
    const a = rotate
      ? { x, y: yy, "text-anchor": "end", transform: `rotate(-60 ${num(x)} ${num(yy)})` }
      : { x, y: yy, "text-anchor": "middle" };
    xText.push(label(p.x.labels[c] ?? String(c), MAX_LABEL_CHARS, must.includes(c) ? { ...a, "font-weight": 600, class: "fs-must" } : a));
  }
  parts.push(el("g", { fill: "#333", class: "fs-xlabels" }, ...xText));
  const xBand = rotate ? Math.ceil(xChars * CH * 0.87) + 10 : 14;
  let bottom = below + xBand;
  if (p.x.title) {
    parts.push(el("text", { x: px + plotW / 2, y: bottom + 12, "text-anchor": "middle", fill: "#444" }, text(p.x.title)));
    bottom += 16;
  }
  if (p.y.title) {
    const tx = x0 + 8;
    const ty = top + plotH / 2;
    parts.push(
      el("text", { x: tx, y: ty, "text-anchor": "middle", fill: "#444", transform: `rotate(-90 ${num(tx)} ${num(ty)})` }, text(p.y.title)),
    );
  }
  const bar = colourBar(p, px + plotW + 10, top, Math.max(100, Math.min(plotH, 220)), index);
  parts.push(bar.svg);
  const height = Math.max(bottom, top + bar.height) - y0;
  return {
    svg: el("g", { class: "fs-panel fs-heat", "data-panel": index }, ...parts),
    height,
    geometry: { panel: index, x: px, y: top, width: plotW, height: plotH },
  };
}

/** Columns a heat panel marks (column ticks, or any marked cell's column), ascending: the must-label columns. */
export function markedColumns(p: HeatPanel): number[] {
  const out = new Set<number>(p.columnMarks?.columns.filter((c) => c >= 0 && c < p.cols) ?? []);
  for (const i of p.cellMarks?.cells ?? []) out.add(i % p.cols);
  return [...out].sort((a, b) => a - b);
}

function hexBytes(hex: string): number[] {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
}

/** A vertical colour bar: high at the top, round ticks inside the domain, the quantity beside it. */
function colourBar(p: HeatPanel, x: number, y: number, h: number, index: number): { svg: string; height: number } {
  const id = `fs-bar-${index}-${p.scale.colormap}`;
  const stops = Array.from({ length: 9 }, (_, i) =>
    el("stop", { offset: `${(i / 8) * 100}%`, "stop-color": colorAt(p.scale.colormap, 1 - i / 8) }),
  );
  const [lo, hi] = p.scale.domain;
  const ticks = niceTicks(lo, hi, 4, true);
  const at = (v: number) => y + ((hi - v) / (hi - lo || 1)) * h;
  const parts = [
    el("defs", {}, el("linearGradient", { id, x1: 0, y1: 0, x2: 0, y2: 1 }, ...stops)),
    el("rect", { x, y, width: 12, height: h, fill: `url(#${id})`, stroke: "#999", "stroke-width": 0.5 }),
  ];
  for (const v of ticks) {
    parts.push(el("line", { x1: x + 12, x2: x + 15, y1: at(v), y2: at(v), stroke: "#666" }));
    parts.push(el("text", { x: x + 17, y: at(v) + 3.5, fill: "#333" }, text(formatValue(v))));
  }
  const tx = x + 12 + 4 + 7 * CH + 8;
  const ty = y + h / 2;
  parts.push(
    el(
      "text",
      { x: tx, y: ty, "text-anchor": "middle", fill: "#444", transform: `rotate(90 ${num(tx)} ${num(ty)})` },
      el("title", {}, text(p.valueLabel)),
      text(truncate(p.valueLabel, Math.max(24, Math.floor(h / CH)))),
    ),
  );
  return { svg: el("g", { class: "fs-colourbar" }, ...parts), height: h + 4 };
}

function marker(kind: LineSeriesMarker, x: number, y: number, colour: string, tip: string): string {
  const t = el("title", {}, text(tip));
  if (kind === "square") return el("rect", { x: x - 3, y: y - 3, width: 6, height: 6, fill: colour }, t);
  if (kind === "triangle")
    return el(
      "polygon",
      { points: `${num(x)},${num(y - 4)} ${num(x - 3.5)},${num(y + 3)} ${num(x + 3.5)},${num(y + 3)}`, fill: colour },
      t,
    );
  if (kind === "diamond")
    return el(
      "polygon",
      { points: `${num(x)},${num(y - 4)} ${num(x - 4)},${num(y)} ${num(x)},${num(y + 4)} ${num(x + 4)},${num(y)}`, fill: colour },
      t,
    );
  return el("circle", { cx: x, cy: y, r: 3, fill: colour }, t);
}
type LineSeriesMarker = LinePanel["series"][number]["marker"];

/** Axes frame shared by line and bar panels: y gridlines at the ticks, tick labels, axis titles. */
function axes(
  p: { title?: string; y: LinePanel["y"] },
  x0: number,
  y0: number,
  pw: number,
  xTitle: string,
): { parts: string[]; l: number; r: number; t: number; b: number; py: (v: number) => number; height: number } {
  const top = y0 + (p.title ? 18 : 0);
  const h = Math.max(180, Math.min(320, pw * 0.6));
  const yChars = Math.max(...p.y.ticks.map((v) => formatValue(v).length), 1);
  const l = x0 + 18 + yChars * CH + 6;
  const r = x0 + pw - 8;
  const t = top + 4;
  const b = top + h;
  const [lo, hi] = p.y.domain;
  const py = (v: number) => b - ((v - lo) / (hi - lo || 1)) * (b - t);
  const parts = [panelTitle(p.title, x0, y0, pw)];
  p.y.ticks.forEach((v, i) => {
    parts.push(el("line", { x1: l, x2: r, y1: py(v), y2: py(v), stroke: "#eee" }));
    parts.push(el("text", { x: l - 4, y: py(v) + 3.5, "text-anchor": "end", fill: "#333" }, text(p.y.tickLabels?.[i] ?? formatValue(v))));
  });
  parts.push(el("line", { x1: l, x2: l, y1: t, y2: b, stroke: "#999" }), el("line", { x1: l, x2: r, y1: b, y2: b, stroke: "#999" }));
  parts.push(el("text", { x: (l + r) / 2, y: b + 30, "text-anchor": "middle", fill: "#444" }, text(xTitle)));
  const ty = (t + b) / 2;
  const tx = x0 + 8;
  parts.push(
    el("text", { x: tx, y: ty, "text-anchor": "middle", fill: "#444", transform: `rotate(-90 ${num(tx)} ${num(ty)})` }, text(p.y.title)),
  );
  return { parts, l, r, t, b, py, height: b + 36 - y0 };
}

function linePanel(p: LinePanel, index: number, x0: number, y0: number, pw: number): Drawn {
  const a = axes(p, x0, y0, pw, p.x.title);
  const [xlo, xhi] = p.x.domain;
  const px = (v: number) => a.l + 6 + ((v - xlo) / (xhi - xlo || 1)) * (a.r - a.l - 12);
  const parts = a.parts;
  const xs = labelStride(p.x.ticks.length, a.r - a.l, 28);
  p.x.ticks.forEach((v, i) => {
    if (i % xs !== 0) return;
    parts.push(el("line", { x1: px(v), x2: px(v), y1: a.b, y2: a.b + 3, stroke: "#999" }));
    parts.push(el("text", { x: px(v), y: a.b + 14, "text-anchor": "middle", fill: "#333" }, text(p.x.tickLabels?.[i] ?? formatValue(v))));
  });
  for (const s of p.series) {
    if (s.lo && s.hi) {
      const idx = s.x.map((_, k) => k).filter((k) => s.lo![k] !== null && s.hi![k] !== null);
      const up = idx.map((k) => `${num(px(s.x[k]))},${num(a.py(s.hi![k]!))}`);
      const down = idx.map((k) => `${num(px(s.x[k]))},${num(a.py(s.lo![k]!))}`).reverse();
      if (idx.length > 1)
        parts.push(el("polygon", { points: [...up, ...down].join(" "), fill: s.colour, "fill-opacity": 0.18, stroke: "none" }));
    }
    // Gaps (null) break the line.
    let run: string[] = [];
    const flush = () => {
      if (run.length > 1)
        parts.push(
          el("polyline", { points: run.join(" "), fill: "none", stroke: s.colour, "stroke-width": 2, "stroke-dasharray": s.dash }),
        );
      run = [];
    };
    s.x.forEach((x, k) => {
      const v = s.y[k];
      if (v === null) flush();
      else run.push(`${num(px(x))},${num(a.py(v))}`);
    });
    flush();
    s.x.forEach((x, k) => {
      const v = s.y[k];
      if (v !== null)
        parts.push(marker(s.marker, px(x), a.py(v), s.colour, `${s.name} · ${p.x.title} ${formatValue(x)}: ${formatValue(v)}`));
    });
  }
  return { svg: el("g", { class: "fs-panel fs-lines", "data-panel": index }, ...parts), height: a.height };
}

function barPanel(p: BarPanel, index: number, x0: number, y0: number, pw: number): Drawn {
  const a = axes(p, x0, y0, pw, p.x.title);
  const parts = a.parts;
  const n = p.x.labels.length;
  const slot = (a.r - a.l) / Math.max(1, n);
  const bw = Math.min(60, slot * 0.7);
  for (let i = 0; i < n; i++) {
    let base = 0;
    const cx = a.l + (i + 0.5) * slot;
    for (const s of p.stacks) {
      const v = s.values[i] ?? 0;
      const y1 = a.py(base + v);
      const y2 = a.py(base);
      parts.push(
        el(
          "rect",
          { x: cx - bw / 2, y: y1, width: bw, height: Math.max(0, y2 - y1), fill: s.colour },
          el("title", {}, text(`${p.x.labels[i]} · ${s.name}: ${formatValue(v)}`)),
        ),
      );
      base += v;
    }
    parts.push(label(p.x.labels[i], Math.max(4, Math.floor(slot / CH)), { x: cx, y: a.b + 14, "text-anchor": "middle", fill: "#333" }));
  }
  return { svg: el("g", { class: "fs-panel fs-bars", "data-panel": index }, ...parts), height: a.height };
}
