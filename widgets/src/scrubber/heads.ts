/**
 * Per-head views of one (step, layer), drawn from the per-head maps ([head, query, key]):
 * - the head view: query tokens down the left, key tokens down the right, a line from a query to
 *   each key it attends to, one colour per head, opacity = attention weight (as in bertviz's head
 *   view). With a token selected only its lines are drawn, else each query's strongest key per head;
 * - the layers × heads grid: one thumbnail of each head's map per layer at the current step;
 *   clicking one chooses that layer and head.
 */
import { el } from "../dom.js";
import { lut } from "../colormap.js";
import type { DecodedHeadMaps, RunData } from "./data.js";
import { tokenColumn } from "./axes.js";

/** Width of each token column of the head view (px). */
const TOKEN_COLUMN = 66;
/** Narrowest lines area between the two token columns (px). */
const MIN_LINES_WIDTH = 80;
/** Narrowest head view: both token columns and the lines between them (px). */
export const HEAD_VIEW_MIN_WIDTH = MIN_LINES_WIDTH + 2 * TOKEN_COLUMN;

/** Head colours (Tableau 10, then repeated): head h gets HEAD_COLOURS[h % 10]. */
export const HEAD_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/** Opacity levels of the head view's lines (the weight, rounded up to a multiple of 1/ALPHA_LEVELS). */
const ALPHA_LEVELS = 10;
/**
 * The overview (every query's strongest key per head, no token selected) is drawn up to this many
 * tokens; beyond, only a selected token's lines are: hundreds of long crossing anti-aliased lines
 * cost 100–300 ms to rasterise in a software canvas (bench/scrubber.ts at 256 tokens × 16 heads).
 */
export const OVERVIEW_MAX_TOKENS = 256;

/**
 * With no token selected, at most this many lines (the strongest) are drawn, so the overview stays
 * readable at 1024 tokens.
 */
const MAX_LINES = 512;

/** Lines with weight below this are not drawn when every query is shown (no token selected). */
const MIN_WEIGHT = 0.05;

export interface HeadViewState {
  step: number;
  layer: number;
  /** Model head to show alone, or "mean" for every head in its colour. */
  head: number | "mean";
  selected: number | null;
}

/** The head view of one run: two token columns and the lines between them. */
export class HeadView {
  readonly root: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  private readonly left: HTMLElement;
  private readonly right: HTMLElement;
  private readonly note: HTMLElement;
  private readonly legend: HTMLElement;
  readonly height: number;
  readonly width: number;
  /** Number of lines in the last drawing (tests and the benchmark read it; also the canvas's data-lines). */
  lines = 0;
  /** Model heads switched off in the legend (bertviz's head toggles). */
  readonly hidden = new Set<number>();
  /** Query position under the pointer: only its lines are drawn while hovering. */
  hover: number | null = null;
  /** The query whose lines alone were drawn last (hovered or selected), or null for the overview. */
  query: number | null = null;
  private last: HeadViewState | null = null;

  constructor(
    private readonly data: RunData,
    width: number,
    height?: number,
    private readonly onSelect: (position: number) => void = () => undefined,
  ) {
    this.height = height ?? Math.max(160, Math.min(600, data.N * 12));
    this.width = Math.max(MIN_LINES_WIDTH, width - 2 * TOKEN_COLUMN);
    this.canvas = el("canvas", { className: "fs-headview-lines" });
    this.canvas.width = this.width;
    this.canvas.height = this.height;
    this.canvas.style.width = `${this.width}px`;
    this.canvas.style.height = `${this.height}px`;
    this.left = el("div", { className: "fs-headview-tokens fs-headview-queries" });
    this.right = el("div", { className: "fs-headview-tokens fs-headview-keys" });
    for (const c of [this.left, this.right]) {
      c.style.height = `${this.height}px`;
      c.style.width = `${TOKEN_COLUMN}px`;
    }
    // Hover a query token: only its lines; click one: select it (its row and column everywhere).
    const posOf = (ev: Event) => {
      const t = (ev.target as HTMLElement | null)?.closest?.("[data-pos]") as HTMLElement | null;
      return t ? Number(t.dataset.pos) : null;
    };
    this.left.addEventListener("mouseover", (ev) => {
      const j = posOf(ev);
      if (j !== null && j !== this.hover) {
        this.hover = j;
        this.redraw();
      }
    });
    this.left.addEventListener("mouseleave", () => {
      if (this.hover === null) return;
      this.hover = null;
      this.redraw();
    });
    for (const c of [this.left, this.right])
      c.addEventListener("click", (ev) => {
        const j = posOf(ev);
        if (j !== null) this.onSelect(j);
      });
    // Pointer over the lines: the nearest query row isolates too.
    this.canvas.addEventListener("mousemove", (ev) => {
      const r = this.canvas.getBoundingClientRect();
      if (r.height <= 0) return;
      const j = Math.floor(((ev.clientY - r.top) / r.height) * this.data.N);
      if (j >= 0 && j < this.data.N && j !== this.hover) {
        this.hover = j;
        this.redraw();
      }
    });
    this.canvas.addEventListener("mouseleave", () => {
      if (this.hover === null) return;
      this.hover = null;
      this.redraw();
    });
    this.note = el("div", { className: "fs-map-note" });
    this.legend = el("div", { className: "fs-head-legend" });
    this.root = el("div", { className: "fs-headview" }, [
      el("div", {
        className: "fs-axis",
        text: "head view: query (left) → keys (right), opacity = weight; hover a query to isolate it",
      }),
      this.legend,
      el("div", { className: "fs-headview-body" }, [this.left, this.canvas, this.right]),
      this.note,
    ]);
  }

  /** Redraw with the last state (after a hover or a head toggle). */
  redraw(): void {
    if (this.last) this.draw(this.last);
  }

  /** Switch a model head on or off (the legend's toggles). */
  toggleHead(modelHead: number): void {
    if (this.hidden.has(modelHead)) this.hidden.delete(modelHead);
    else this.hidden.add(modelHead);
    this.redraw();
  }

  draw(v: HeadViewState): void {
    this.last = v;
    this.query = null;
    this.paint(v);
    this.canvas.dataset.lines = String(this.lines);
    this.canvas.dataset.query = this.query === null ? "" : String(this.query);
  }

  /** Text of the note under the lines (loading, missing, what is drawn). */
  setNote(text: string): void {
    this.note.textContent = text;
  }

  private paint(v: HeadViewState): void {
    const d = this.data;
    const ctx = this.canvas.getContext("2d");
    if (ctx) ctx.clearRect(0, 0, this.width, this.height);
    this.lines = 0;
    const hm = d.headMapsAt(v.step, v.layer);
    if (!hm) {
      const at = d.headMapSteps(v.layer).map((i) => d.run.steps[i]);
      this.note.textContent =
        d.missing("headMaps") ??
        (at.length
          ? `no per-head maps at this step; recorded at steps ${at.slice(0, 12).join(", ")}${at.length > 12 ? ", …" : ""}`
          : "no per-head maps for this layer");
      tokenColumn(this.left, d.tokens, this.height);
      tokenColumn(this.right, d.tokens, this.height);
      this.legend.replaceChildren();
      return;
    }
    const heads = (v.head === "mean" ? hm.heads.map((_, i) => i) : [hm.heads.indexOf(v.head)].filter((i) => i >= 0)).filter(
      (i) => !this.hidden.has(hm.heads[i]),
    );
    this.renderLegend(hm, heads);
    const hovered = this.hover !== null && this.hover < d.N ? this.hover : null;
    const sel = hovered ?? (v.selected !== null && v.selected < d.N ? v.selected : null);
    this.query = sel;
    const top = sel === null ? [] : topKeys(hm, heads, sel);
    tokenColumn(this.left, d.tokens, this.height, sel === null ? [] : [sel]);
    tokenColumn(this.right, d.tokens, this.height, [], top);
    this.note.textContent =
      sel === null
        ? `step ${d.run.steps[d.clampStep(v.step)]}, layer ${d.run.layers[d.clampLayer(v.layer)]}: each query's strongest key per head (weight ≥ ${MIN_WEIGHT}, at most the ${MAX_LINES} strongest lines); click a token to see all its lines`
        : `step ${d.run.steps[d.clampStep(v.step)]}, layer ${d.run.layers[d.clampLayer(v.layer)]}: what position ${sel} attends to, per head`;
    if (!ctx) return;
    const n = hm.n;
    const row = this.height / n;
    ctx.lineWidth = 1.5;
    const fade = heads.length > 1 ? 0.9 : 1;
    if (sel === null && n > OVERVIEW_MAX_TOKENS) {
      this.note.textContent = `${n} tokens: click a token to draw the lines from it to the keys it attends to, per head`;
      return;
    }
    const floor = sel === null ? strongestFloor(hm, heads, MAX_LINES) : 0;
    for (const hi of heads) {
      ctx.strokeStyle = HEAD_COLOURS[hm.heads[hi] % HEAD_COLOURS.length];
      const base = hi * n * n;
      // Lines are grouped into ALPHA_LEVELS opacity buckets and stroked as one path per bucket:
      // one stroke per line costs ~60 µs in a software canvas, thousands of them a whole frame.
      const buckets: number[][] = Array.from({ length: ALPHA_LEVELS }, () => []);
      const add = (q: number, k: number, w: number) => {
        const b = Math.min(ALPHA_LEVELS - 1, Math.floor(Math.min(1, w * fade) * ALPHA_LEVELS));
        buckets[b].push(q, k);
      };
      const queries = sel === null ? range(n) : [sel];
      for (const q of queries) {
        const o = base + q * n;
        if (sel === null) {
          let best = -1;
          let bw = MIN_WEIGHT;
          for (let k = 0; k < n; k++) {
            const w = hm.data[o + k];
            if (w >= bw) [best, bw] = [k, w];
          }
          if (best >= 0 && bw >= floor) add(q, best, bw);
        } else {
          for (let k = 0; k < n; k++) {
            const w = hm.data[o + k];
            if (w === w && w > 0.01) add(q, k, w);
          }
        }
      }
      buckets.forEach((seg, b) => {
        if (seg.length === 0) return;
        ctx.globalAlpha = (b + 1) / ALPHA_LEVELS;
        ctx.beginPath();
        for (let t = 0; t < seg.length; t += 2) {
          ctx.moveTo(0, (seg[t] + 0.5) * row);
          ctx.lineTo(this.width, (seg[t + 1] + 0.5) * row);
        }
        ctx.stroke();
        this.lines += seg.length / 2;
      });
    }
    ctx.globalAlpha = 1;
  }

  private renderLegend(hm: DecodedHeadMaps, shown: number[]): void {
    this.legend.replaceChildren(
      el("span", { className: "fs-legend-title", text: "heads:", title: "click a head to switch its lines on or off" }),
      ...hm.heads.map((h, i) => {
        const sw = el("span", { className: "fs-swatch" });
        sw.style.background = HEAD_COLOURS[h % HEAD_COLOURS.length];
        const on = shown.includes(i);
        const item = el("button", { className: on ? "fs-legend-item fs-head-toggle" : "fs-legend-item fs-head-toggle fs-legend-off" }, [
          sw,
          el("span", { text: String(h) }),
        ]);
        item.type = "button";
        item.dataset.head = String(h);
        item.title = `head ${h}: ${this.hidden.has(h) ? "off" : "on"} (click to switch)`;
        item.setAttribute("aria-pressed", String(!this.hidden.has(h)));
        item.addEventListener("click", () => this.toggleHead(h));
        return item;
      }),
    );
  }
}

/** The weight of the `max`-th strongest per-(head, query) top key (MIN_WEIGHT when fewer qualify). */
function strongestFloor(hm: DecodedHeadMaps, heads: number[], max: number): number {
  const n = hm.n;
  const tops: number[] = [];
  for (const hi of heads)
    for (let q = 0; q < n; q++) {
      let bw = 0;
      const o = hi * n * n + q * n;
      for (let k = 0; k < n; k++) if (hm.data[o + k] > bw) bw = hm.data[o + k];
      if (bw >= MIN_WEIGHT) tops.push(bw);
    }
  if (tops.length <= max) return MIN_WEIGHT;
  tops.sort((a, b) => b - a);
  return tops[max - 1];
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** Each shown head's strongest key for query `q` (distinct, in head order). */
function topKeys(hm: DecodedHeadMaps, heads: number[], q: number): number[] {
  const n = hm.n;
  const out = new Set<number>();
  for (const hi of heads) {
    let best = -1;
    let bw = -Infinity;
    for (let j = 0; j < n; j++) {
      const w = hm.data[hi * n * n + q * n + j];
      if (w > bw) [best, bw] = [j, w];
    }
    if (best >= 0) out.add(best);
  }
  return [...out];
}

/** Thumbnail side in px. */
const THUMB = 44;

/** The layers × heads grid of one run at the current step. */
export class HeadGrid {
  readonly root: HTMLElement;
  private readonly body: HTMLElement;
  private key = "";
  /** Thumbnails drawn in the last render. */
  count = 0;

  constructor(
    private readonly data: RunData,
    private readonly onPick: (layerIndex: number, headIndex: number) => void,
  ) {
    this.body = el("div", { className: "fs-headgrid-body" });
    this.root = el("div", { className: "fs-headgrid" }, [
      el("div", { className: "fs-axis", text: "layers × heads at this step (each head's map, query rows × key columns; click to choose)" }),
      this.body,
    ]);
  }

  /** Redraw at the next draw() (new per-head maps arrived). */
  invalidate(): void {
    this.key = "";
  }

  draw(step: number, layer: number, head: number | "mean"): void {
    const d = this.data;
    const key = `${d.clampStep(step)}:${d.clampLayer(layer)}:${head}`;
    if (key === this.key) return;
    this.key = key;
    this.body.replaceChildren();
    this.count = 0;
    const heads = d.run.headMapHeads ?? [];
    const table = lut("purples");
    const header = el("div", { className: "fs-headgrid-row" }, [
      el("span", { className: "fs-headgrid-label", text: "layer" }),
      ...heads.map((h) => el("span", { className: "fs-headgrid-label fs-headgrid-col", text: `head ${h}` })),
    ]);
    this.body.appendChild(header);
    for (let li = 0; li < d.L; li++) {
      const hm = d.headMapsAt(step, li);
      if (!hm) continue;
      const cells = heads.map((h, hi) => {
        const c = el("canvas", { className: "fs-thumb", title: `layer ${d.run.layers[li]}, head ${h}` });
        c.width = THUMB;
        c.height = THUMB;
        const ctx = c.getContext("2d");
        if (ctx) thumbnail(ctx, hm, hi, table);
        if (li === d.clampLayer(layer) && (head === "mean" || d.run.heads[head as number] === h)) c.classList.add("fs-thumb-current");
        c.addEventListener("click", () => this.onPick(li, hi));
        this.count++;
        return c;
      });
      this.body.appendChild(
        el("div", { className: "fs-headgrid-row" }, [
          el("span", { className: "fs-headgrid-label", text: String(d.run.layers[li]) }),
          ...cells,
        ]),
      );
    }
    if (this.count === 0) {
      const at = d.run.headMaps?.length ? "no per-head maps at this step" : (d.missing("headMaps") ?? "no per-head maps");
      this.body.replaceChildren(el("div", { className: "fs-map-note", text: at }));
    }
  }
}

/** Nearest-sample a head's [n, n] map into a THUMB × THUMB image, min–max scaled. */
function thumbnail(ctx: CanvasRenderingContext2D, hm: DecodedHeadMaps, hi: number, table: Uint8Array): void {
  const n = hm.n;
  const o = hi * n * n;
  let max = 0;
  for (let i = 0; i < n * n; i++) {
    const v = hm.data[o + i];
    if (v > max) max = v;
  }
  const img = ctx.createImageData(THUMB, THUMB);
  for (let y = 0; y < THUMB; y++) {
    const q = Math.floor((y * n) / THUMB);
    for (let x = 0; x < THUMB; x++) {
      const v = hm.data[o + q * n + Math.floor((x * n) / THUMB)];
      const p = (y * THUMB + x) * 4;
      if (v !== v) {
        img.data[p] = img.data[p + 1] = img.data[p + 2] = 240;
      } else {
        const k = max > 0 ? Math.round((Math.max(0, v) / max) * 255) : 0;
        img.data[p] = table[k * 3];
        img.data[p + 1] = table[k * 3 + 1];
        img.data[p + 2] = table[k * 3 + 2];
      }
      img.data[p + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
}
