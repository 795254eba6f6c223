/**
 * Canvas drawing for one run panel of the scrubber. Images that depend only on (layer, head) —
 * the steps × positions heat — or on (step, layer, head) — the full map — are painted once into
 * offscreen canvases and cached; a slider move then costs a few `drawImage` calls and one pass
 * over the token strip, which is what keeps redraws well under a frame at 1024 tokens.
 */
import { lut, paint } from "../colormap.js";
import type { RunData, TokenState } from "./data.js";
import type { ColorScale } from "./state.js";

/** Apply a colour scale to values in place-free fashion (returns a new array unless linear). */
export function scaled(values: Float32Array, scale: ColorScale): Float32Array {
  if (scale === "linear") return values;
  const out = new Float32Array(values.length);
  if (scale === "sqrt") for (let i = 0; i < values.length; i++) out[i] = Math.sqrt(Math.max(0, values[i]));
  // log10 with a floor of 1e-6: attention probabilities below that are indistinguishable anyway
  else for (let i = 0; i < values.length; i++) out[i] = values[i] !== values[i] ? NaN : Math.log10(Math.max(1e-6, values[i]));
  return out;
}

function range(values: Float32Array): [number, number] {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return min <= max ? [min, max] : [0, 0];
}

/** Colours of the token strip and overlays. */
export const COLORS = {
  prompt: "#c9d3de",
  masked: "#8c8c8c",
  unmasked: "#6a51a3",
  justUnmasked: "#2ca02c",
  anchor: "#ff7f0e",
  step: "#d62728",
  selection: "#1f77b4",
};

const ANCHOR_RGBA: [number, number, number] = [255, 127, 14];

function offscreen(w: number, h: number): HTMLCanvasElement {
  const c = document.createElement("canvas");
  c.width = Math.max(1, w);
  c.height = Math.max(1, h);
  return c;
}

/** Caches of painted images for one run. */
export class RunImages {
  private temporalCache = new Map<string, HTMLCanvasElement | null>();
  private mapCache = new Map<string, HTMLCanvasElement | null>();
  constructor(private readonly data: RunData) {}

  /** Drop cached maps (a slice arrived from the kernel: a map that was missing may exist now). */
  forgetMaps(): void {
    this.mapCache.clear();
  }

  /** [step rows × key columns] heat of one layer/head, anchors baked in when `anchors`. */
  temporal(layer: number, head: number | "mean", anchors: boolean, scale: ColorScale = "linear"): HTMLCanvasElement | null {
    const key = `${this.data.clampLayer(layer)}:${this.data.clampHead(head)}:${anchors}:${scale}`;
    if (this.temporalCache.has(key)) return this.temporalCache.get(key)!;
    const { S, N } = this.data;
    const c = offscreen(N, S);
    const ctx = c.getContext("2d");
    let out: HTMLCanvasElement | null = null;
    if (ctx) {
      const heat = scaled(this.data.temporal(layer, head).heat, scale);
      const [min, max] = range(heat);
      const img = ctx.createImageData(N, S);
      paint(heat, min, max, lut("purples"), img.data);
      if (anchors) {
        for (let s = 0; s < S; s++) {
          const row = this.data.anchorRow(s, layer);
          for (let j = 0; j < N; j++) {
            if (!row[j]) continue;
            const p = (s * N + j) * 4;
            img.data[p] = ANCHOR_RGBA[0];
            img.data[p + 1] = ANCHOR_RGBA[1];
            img.data[p + 2] = ANCHOR_RGBA[2];
          }
        }
      }
      ctx.putImageData(img, 0, 0);
      out = c;
    }
    this.temporalCache.set(key, out);
    return out;
  }

  /** [query × key] full map image, min–max scaled, or null when no map was recorded. */
  map(step: number, layer: number, head: number | "mean", scale: ColorScale = "linear"): HTMLCanvasElement | null {
    const key = `${this.data.clampStep(step)}:${this.data.clampLayer(layer)}:${this.data.clampHead(head)}:${scale}`;
    if (this.mapCache.has(key)) return this.mapCache.get(key)!;
    const m = this.data.map(step, layer, head);
    let out: HTMLCanvasElement | null = null;
    if (m) {
      const c = offscreen(m.n, m.n);
      const ctx = c.getContext("2d");
      if (ctx) {
        const values = scaled(m.data, scale);
        const [min, max] = range(values);
        const img = ctx.createImageData(m.n, m.n);
        paint(values, min, max, lut("purples"), img.data);
        ctx.putImageData(img, 0, 0);
        out = c;
      }
    }
    // Keep the map cache small: full maps are N² pixels each.
    if (this.mapCache.size > 48) this.mapCache.delete(this.mapCache.keys().next().value as string);
    this.mapCache.set(key, out);
    return out;
  }
}

export interface PanelView {
  step: number;
  layer: number;
  head: number | "mean";
  selected: number | null;
  showAnchors: boolean;
  scale: ColorScale;
}

/** Temporal view: steps (rows, step 0 at the top) × positions, current step outlined. */
export function drawTemporal(ctx: CanvasRenderingContext2D, w: number, h: number, d: RunData, img: RunImages, v: PanelView): void {
  ctx.clearRect(0, 0, w, h);
  const src = img.temporal(v.layer, v.head, v.showAnchors, v.scale);
  ctx.imageSmoothingEnabled = false;
  if (src) ctx.drawImage(src, 0, 0, w, h);
  const rowH = h / Math.max(1, d.S);
  const colW = w / Math.max(1, d.N);
  ctx.strokeStyle = COLORS.step;
  ctx.lineWidth = 1.5;
  ctx.strokeRect(0.75, d.clampStep(v.step) * rowH + 0.75, w - 1.5, Math.max(1, rowH - 1.5));
  if (v.selected !== null && v.selected < d.N) {
    ctx.strokeStyle = COLORS.selection;
    ctx.strokeRect(v.selected * colW, 0, Math.max(1, colW), h);
  }
}

/** Token strip: one cell per position, coloured by its state at the current step; anchors above. */
export function drawTokenStrip(ctx: CanvasRenderingContext2D, w: number, h: number, d: RunData, v: PanelView): void {
  ctx.clearRect(0, 0, w, h);
  const colW = w / Math.max(1, d.N);
  const step = d.clampStep(v.step);
  const raw = d.run.steps[step];
  const anchors = d.anchorRow(step, v.layer);
  const bar = Math.max(2, Math.round(h * 0.25));
  // Group cells by colour so fillStyle changes four times, not once per token.
  const rects: Record<TokenState | "justUnmasked", number[]> = { prompt: [], masked: [], unmasked: [], justUnmasked: [] };
  for (let j = 0; j < d.N; j++) {
    const state = d.tokenState(step, j);
    const k = state === "masked" && d.unmaskedAt[j] === raw ? "justUnmasked" : state;
    rects[k].push(j);
  }
  for (const k of Object.keys(rects) as (keyof typeof rects)[]) {
    const list = rects[k];
    if (list.length === 0) continue;
    ctx.fillStyle = COLORS[k];
    for (const j of list) ctx.fillRect(j * colW, bar, Math.max(1, colW - (colW > 3 ? 1 : 0)), h - bar);
  }
  if (v.showAnchors) {
    ctx.fillStyle = COLORS.anchor;
    for (let j = 0; j < d.N; j++) if (anchors[j]) ctx.fillRect(j * colW, 0, Math.max(2, colW), bar);
  }
  if (v.selected !== null && v.selected < d.N) {
    ctx.strokeStyle = COLORS.selection;
    ctx.lineWidth = 2;
    ctx.strokeRect(v.selected * colW, 1, Math.max(2, colW), h - 2);
  }
}

/** Full map for the chosen step (query rows × key columns), with the selected row and column. */
export function drawMap(ctx: CanvasRenderingContext2D, size: number, d: RunData, img: RunImages, v: PanelView): boolean {
  ctx.clearRect(0, 0, size, size);
  const src = img.map(v.step, v.layer, v.head, v.scale);
  if (!src) {
    ctx.fillStyle = "#f4f4f4";
    ctx.fillRect(0, 0, size, size);
    return false;
  }
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(src, 0, 0, size, size);
  if (v.selected !== null && v.selected < d.N) {
    const cell = size / d.N;
    ctx.strokeStyle = COLORS.selection;
    ctx.lineWidth = 1;
    ctx.strokeRect(0, v.selected * cell, size, Math.max(1, cell)); // its row: what it attends to
    ctx.strokeRect(v.selected * cell, 0, Math.max(1, cell), size); // its column: who attends to it
  }
  return true;
}

/** Row and column profiles of the selected token as two line plots over positions. */
export function drawProfiles(
  ctx: CanvasRenderingContext2D,
  w: number,
  h: number,
  row: Float32Array | null,
  col: Float32Array | null,
): void {
  ctx.clearRect(0, 0, w, h);
  const series: [Float32Array | null, string, number][] = [
    [row, COLORS.selection, 0],
    [col, COLORS.anchor, h / 2],
  ];
  for (const [values, color, top] of series) {
    const ph = h / 2 - 4;
    ctx.strokeStyle = "#ddd";
    ctx.strokeRect(0.5, top + 0.5, w - 1, ph);
    if (!values || values.length === 0) continue;
    let max = 0;
    for (const x of values) if (x > max) max = x;
    ctx.strokeStyle = color;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let j = 0; j < values.length; j++) {
      const x = (j + 0.5) * (w / values.length);
      const y = top + ph - (max > 0 ? (values[j] / max) * (ph - 2) : 0);
      if (j === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    }
    ctx.stroke();
  }
}
