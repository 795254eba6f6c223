/**
 * Raster heatmaps framed with axes, as one standalone SVG: the static fallback of the dense views
 * (temporal drift, QK decomposition, the scrubber's temporal view) on GitHub, nbviewer and HTML export.
 *
 * Why a frame around a raster: N² cells are too many for SVG rects above ~100 tokens, so the cells
 * stay a PNG (drawn in the kernel, embedded as a data: URI); but a bare PNG tells a reader nothing
 * about which token, step or query a cell is. The frame adds the title, each panel's title, token
 * labels on the x axis (every k-th when they do not fit), row labels on the y axis, red ticks for
 * marked columns and a colour bar with the value range. All text goes through svg.ts escaping:
 * labels are tokens of untrusted prompts.
 */
import { el, fitTitle, formatValue, labelStride, num, svgDocument, text, truncate } from "./svg.js";
import { thinLabels } from "../protocol/axis-labels.js";
import { displayLabels } from "../protocol/token-text.js";

export interface FramedPanel {
  /** The panel's cells as a PNG, `width` × `height` pixels, drawn at that size. */
  png: Buffer;
  width: number;
  height: number;
  /** Cells across and down (a label sits at the centre of its cell). */
  cols: number;
  rows: number;
  title?: string;
  /** One per column (tokens); thinned to what fits. */
  xLabels?: string[];
  /** One per row (steps, query tokens); thinned to what fits. */
  yLabels?: string[];
  /** Columns to mark with a red tick under the panel (floating positions). */
  marks?: number[];
  /** Value range the colours span (shown on the colour bar). */
  min: number;
  max: number;
  /**
   * This panel's own colour scale (t ∈ [0, 1] → colour) and what it measures: drawn as a colour
   * bar beside the panel, for figures whose panels show different quantities (QK: score, cos θ,
   * norm). Without it the figure's one bar applies.
   */
  colour?: (t: number) => string;
  valueLabel?: string;
}

export interface FramedFigure {
  title: string;
  panels: FramedPanel[];
  /** Panels side by side ("row", QK's three maps) or stacked ("column", the scrubber's runs). */
  direction: "row" | "column";
  xTitle: string;
  yTitle: string;
  /** Colour of t ∈ [0, 1] (low → high), as the raster used: drawn as the colour bar (unless every panel has its own). */
  colour: (t: number) => string;
  /** What the colour bar measures; the range shown is the first panel's. */
  valueLabel: string;
  /** A line under the figure: what orange and red mean, subsampling. */
  note?: string;
}

const FONT = 10;
const CHAR = 0.6 * FONT; // ~ width of one character of the default sans-serif
const X_LABEL_CHARS = 10;
const Y_LABEL_CHARS = 12;
const TITLE_H = 22;
const PANEL_TITLE_H = 16;
const MARK_H = 5;
const GAP = 18;
const BAR_W = 12;
/** Room a panel's own colour bar takes to its right: gap, bar, tick labels. */
const OWN_BAR_W = 6 + BAR_W + 4 + 7 * CHAR;

/** The figure as a standalone SVG document. */
export function framedRasterSvg(f: FramedFigure): string {
  const hasY = f.panels.some((p) => p.yLabels?.length);
  const hasX = f.panels.some((p) => p.xLabels?.length);
  const left = 18 + (hasY ? Y_LABEL_CHARS * CHAR + 6 : 4);
  // Rotated x labels need ~ their length × sin 60° of height.
  const xLabelH = hasX ? Math.ceil(X_LABEL_CHARS * CHAR * 0.87) + 8 : 4;
  const panelTitleH = f.panels.some((p) => p.title) ? PANEL_TITLE_H : 0;
  const cellBox = (p: FramedPanel) => ({ w: p.width + (p.colour ? OWN_BAR_W : 0), h: panelTitleH + p.height + MARK_H + 2 + xLabelH });
  const ownBars = f.panels.every((p) => p.colour);
  const boxes = f.panels.map(cellBox);
  const innerW = f.direction === "row" ? boxes.reduce((a, b) => a + b.w, 0) + GAP * (boxes.length - 1) : Math.max(...boxes.map((b) => b.w));
  const innerH = f.direction === "row" ? Math.max(...boxes.map((b) => b.h)) : boxes.reduce((a, b) => a + b.h, 0) + GAP * (boxes.length - 1);
  const barX = left + innerW + 16;
  const width = ownBars ? left + innerW + 10 : barX + BAR_W + 10 + 9 * CHAR;
  const noteH = f.note ? 16 : 0;
  const height = TITLE_H + innerH + 18 + noteH;
  const body: string[] = [
    el("rect", { x: 0, y: 0, width, height, fill: "white" }),
    el("text", { x: left, y: 15, "font-size": 13, "font-weight": "bold" }, text(fitTitle(f.title, width - left, 13))),
  ];
  let ox = left;
  let oy = TITLE_H;
  for (let i = 0; i < f.panels.length; i++) {
    const p = f.panels[i];
    body.push(...panel(p, ox, oy, panelTitleH));
    if (p.colour) {
      const h = Math.min(160, Math.max(60, p.height));
      body.push(
        ...colourBar(
          { colour: p.colour, min: p.min, max: p.max, label: p.valueLabel ?? "" },
          ox + p.width + 6,
          oy + panelTitleH,
          h,
          `fs-bar-${i}`,
        ),
      );
    }
    if (f.direction === "row") ox += boxes[i].w + GAP;
    else oy += boxes[i].h + GAP;
  }
  // Axis titles: x under the panels, y rotated along the left edge.
  body.push(el("text", { x: left + innerW / 2, y: TITLE_H + innerH + 12, "text-anchor": "middle", fill: "#333" }, text(f.xTitle)));
  body.push(
    el(
      "text",
      { x: 11, y: TITLE_H + innerH / 2, "text-anchor": "middle", fill: "#333", transform: `rotate(-90 11 ${num(TITLE_H + innerH / 2)})` },
      text(f.yTitle),
    ),
  );
  if (!ownBars) {
    const { min, max } = f.panels[0];
    body.push(
      ...colourBar(
        { colour: f.colour, min, max, label: f.valueLabel },
        barX,
        TITLE_H + panelTitleH,
        Math.min(160, Math.max(60, f.panels[0].height)),
        "fs-bar",
      ),
    );
  }
  if (f.note) body.push(el("text", { x: left, y: height - 5, fill: "#555" }, text(fitTitle(f.note, width - left, FONT))));
  return svgDocument(width, height, body, { title: f.title });
}

function panel(p: FramedPanel, x0: number, y0: number, titleH: number): string[] {
  const out: string[] = [];
  if (p.title) out.push(el("text", { x: x0, y: y0 + 11, "font-weight": "bold", fill: "#222" }, text(fitTitle(p.title, p.width, FONT))));
  const top = y0 + titleH;
  out.push(
    el("image", {
      x: x0,
      y: top,
      width: p.width,
      height: p.height,
      href: `data:image/png;base64,${p.png.toString("base64")}`,
      preserveAspectRatio: "none",
      style: "image-rendering:pixelated",
    }),
    el("rect", { x: x0, y: top, width: p.width, height: p.height, fill: "none", stroke: "#999", "stroke-width": 0.5 }),
  );
  const cw = p.width / Math.max(1, p.cols);
  const rh = p.height / Math.max(1, p.rows);
  for (const m of p.marks ?? []) {
    if (m < 0 || m >= p.cols) continue;
    out.push(el("rect", { x: x0 + m * cw, y: top + p.height + 2, width: Math.max(1.5, cw), height: MARK_H, fill: "#d62728" }));
  }
  if (p.yLabels?.length) {
    const yLabels = displayLabels(p.yLabels);
    const k = labelStride(p.rows, p.height, FONT + 1);
    for (let r = 0; r < p.rows; r += k) {
      out.push(
        el(
          "text",
          { x: x0 - 4, y: top + (r + 0.5) * rh + FONT * 0.35, "text-anchor": "end", fill: "#444" },
          text(truncate(yLabels[r] ?? "", Y_LABEL_CHARS)),
        ),
      );
    }
  }
  if (p.xLabels?.length) {
    // token text as readers see it; marked columns (anchors, floating keys) always labelled, in bold
    const xLabels = displayLabels(p.xLabels);
    const must = (p.marks ?? []).filter((m) => m >= 0 && m < p.cols);
    const y = top + p.height + MARK_H + 10;
    for (const c of thinLabels(p.cols, p.width, FONT + 1, must)) {
      const x = x0 + (c + 0.5) * cw;
      const bold = must.includes(c) ? { "font-weight": 600, class: "fs-must" } : {};
      out.push(
        el(
          "text",
          { x, y, "text-anchor": "end", fill: "#444", transform: `rotate(-60 ${num(x)} ${num(y)})`, ...bold },
          text(truncate(xLabels[c] ?? "", X_LABEL_CHARS)),
        ),
      );
    }
  }
  return out;
}

/** Vertical colour bar: high values at the top, its range as tick labels (a diverging one also marks 0). */
function colourBar(
  f: { colour: (t: number) => string; min: number; max: number; label: string },
  x: number,
  y: number,
  h: number,
  id: string,
): string[] {
  const stops = Array.from({ length: 9 }, (_, i) => el("stop", { offset: `${(i / 8) * 100}%`, "stop-color": f.colour(1 - i / 8) }));
  const { min, max } = f;
  const zero =
    min < 0 && max > 0 ? [el("text", { x: x + BAR_W + 3, y: y + (max / (max - min)) * h + FONT * 0.35, fill: "#444" }, "0")] : [];
  return [
    el("defs", {}, el("linearGradient", { id, x1: 0, y1: 0, x2: 0, y2: 1 }, ...stops)),
    el("rect", { x, y, width: BAR_W, height: h, fill: `url(#${id})`, stroke: "#999", "stroke-width": 0.5 }),
    el("text", { x: x + BAR_W + 3, y: y + FONT * 0.8, fill: "#444" }, text(formatValue(max))),
    el("text", { x: x + BAR_W + 3, y: y + h, fill: "#444" }, text(formatValue(min))),
    ...zero,
    el("text", { x, y: y + h + 12, fill: "#444" }, text(truncate(f.label, 12))),
  ];
}
