/**
 * The attention-step scrubber: shared step / layer / head sliders (plus "mean over heads"),
 * keyboard and play/pause, and one panel per run (MDM and ARM side by side) with the temporal
 * view (steps × positions), a token strip (masked / unmasked / anchors), the full map for the
 * chosen step, and the row and column of a clicked token.
 *
 * Independent of Lumino so that the renderer, the document widget, the tests and the benchmark
 * page all drive the same class. Untrusted text enters the DOM only through textContent.
 */
import { describeSubsampling, exportStem, type ScrubberPayload } from "../protocol.js";
import { download, el, slider, tokenLabel } from "../dom.js";
import { decodeScrubber, RunData } from "./data.js";
import { drawMap, drawProfiles, drawTemporal, drawTokenStrip, RunImages, type PanelView } from "./draw.js";
import {
  COLOR_SCALES,
  initialState,
  keyAction,
  reduce,
  unionExtent,
  type Action,
  type ColorScale,
  type Extent,
  type ScrubberState,
} from "./state.js";
import { scrubberPng, scrubberSvg } from "./export.js";
import { registerScrubber, unregisterScrubber } from "./registry.js";
import { ColourBar, scaleQuantity, stepAxis, stripLegend, tokenAxis } from "./axes.js";
import { HeadGrid, HeadView } from "./heads.js";

/** Milliseconds per step while playing. */
const PLAY_INTERVAL_MS = 150;

export interface PanelElements {
  data: RunData;
  images: RunImages;
  root: HTMLElement;
  title: HTMLElement;
  temporal: HTMLCanvasElement;
  strip: HTMLCanvasElement;
  map: HTMLCanvasElement;
  mapNote: HTMLElement;
  profiles: HTMLCanvasElement;
  detail: HTMLElement;
  width: number;
  temporalHeight: number;
  mapSize: number;
  /** Token labels under the token strip, step ticks left of the temporal view, its colour bar. */
  xAxis: HTMLElement;
  yAxis: HTMLElement;
  colourBar: ColourBar;
  /** Token labels under the full map, its colour bar. */
  mapAxis: HTMLElement;
  mapBar: ColourBar;
  headView: HeadView | null;
  headGrid: HeadGrid | null;
  /** Selection the token axes were last labelled for. */
  axisKey: string;
}

export class ScrubberView {
  readonly root: HTMLElement;
  readonly runs: RunData[];
  readonly panels: PanelElements[] = [];
  readonly extent: Extent;
  private _state: ScrubberState;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly tooltip: HTMLElement;
  private readonly controls: {
    step: ReturnType<typeof slider>;
    layer: ReturnType<typeof slider>;
    head: ReturnType<typeof slider>;
    mean: HTMLInputElement;
    anchors: HTMLInputElement;
    play: HTMLButtonElement;
    scale: HTMLSelectElement;
  };

  constructor(
    readonly host: HTMLElement,
    readonly payload: ScrubberPayload,
    options: { width?: number } = {},
  ) {
    this.runs = decodeScrubber(payload);
    this.extent = unionExtent(this.runs.map((r) => r.extent));
    this._state = initialState(this.extent);
    const e = this.extent;
    const d = (a: Action) => this.dispatch(a);
    this.controls = {
      step: slider("step", 0, Math.max(0, e.steps - 1), this._state.step, (v) => d({ type: "step", value: v })),
      layer: slider("layer", 0, Math.max(0, e.layers - 1), 0, (v) => d({ type: "layer", value: v })),
      head: slider("head", 0, Math.max(0, e.heads - 1), 0, (v) => d({ type: "head", value: v })),
      mean: Object.assign(document.createElement("input"), { type: "checkbox", checked: true }),
      anchors: Object.assign(document.createElement("input"), { type: "checkbox", checked: true }),
      play: el("button", { className: "fs-play", text: "▶", title: "play / pause (space)" }),
      scale: el("select", { className: "fs-select", title: "colour scale (c)" }),
    };
    for (const sc of COLOR_SCALES) {
      const o = el("option", { text: sc });
      o.value = sc;
      this.controls.scale.appendChild(o);
    }
    const c = this.controls;
    c.mean.addEventListener("change", () => d({ type: "mean", on: c.mean.checked }));
    c.anchors.addEventListener("change", () => {
      if (c.anchors.checked !== this._state.showAnchors) d({ type: "toggleAnchors" });
    });
    c.scale.setAttribute("aria-label", "colour scale");
    c.scale.dataset.role = "scale";
    c.scale.addEventListener("change", () => d({ type: "scale", value: c.scale.value as ColorScale }));
    c.play.setAttribute("aria-label", "play");
    c.play.addEventListener("click", () => d({ type: "togglePlay" }));
    if (e.heads === 0) {
      c.head.input.disabled = true;
      c.mean.disabled = true;
      const why = this.runs.map((r) => r.missing("heads")).find((m) => m) ?? "per-head data did not fit the payload cap (maxBytes)";
      c.head.root.title = why;
      c.mean.title = why;
    }
    const exportPng = el("button", { className: "fs-export", text: "PNG", title: "download the current view as PNG" });
    exportPng.addEventListener("click", () => void this.exportPng().then((b) => b && download(b, this.fileStem() + ".png")));
    const exportSvg = el("button", { className: "fs-export", text: "SVG", title: "download the current view as SVG" });
    exportSvg.addEventListener("click", () => download(new Blob([this.exportSvg()], { type: "image/svg+xml" }), this.fileStem() + ".svg"));

    const note = describeSubsampling(payload.subsampled ?? []);
    const missing = [...new Set(this.runs.flatMap((r) => (r.run.missing ?? []).map((m) => m.note)))];
    const warnings = payload.warnings ?? [];
    const warnBox = warnings.length
      ? el("details", { className: "fs-warnings" }, [
          el("summary", { text: `${warnings.length} warning${warnings.length > 1 ? "s" : ""}` }),
          ...warnings.map((w) => el("div", { text: w })),
        ])
      : null;

    const meanLabel = el("label", { className: "fs-check" }, [c.mean, el("span", { text: "mean over heads" })]);
    const anchorLabel = el("label", { className: "fs-check" }, [c.anchors, el("span", { text: "anchors" })]);
    const bar = el("div", { className: "fs-controls" }, [
      c.play,
      c.step.root,
      c.layer.root,
      c.head.root,
      meanLabel,
      anchorLabel,
      el("label", { className: "fs-slider" }, [el("span", { text: "scale" }), c.scale]),
      exportPng,
      exportSvg,
    ]);
    const help = el("div", {
      className: "fs-help",
      text: "keys: ←/→ step (shift ×10) · Home/End · ↑/↓ layer · [ ] head · m mean · a anchors · c colour scale · space play · click a token for its row and column",
    });
    this.tooltip = el("div", { className: "fs-tooltip" });
    this.tooltip.style.display = "none";
    const runsBox = el("div", { className: "fs-runs" });
    // Panels follow the output area's width (two runs side by side when they fit), within bounds.
    // Each panel is its heat image plus ~130 px of step axis and colour bar.
    const avail = host.clientWidth > 0 ? host.clientWidth : 1000;
    const side = this.runs.length > 1 && avail >= 2 * (420 + 130) + 16;
    const width = options.width ?? Math.round(Math.max(320, Math.min(side ? 620 : 900, (side ? (avail - 16) / 2 : avail) - 130)));
    this.runs.forEach((r) => {
      const p = this.buildPanel(r, width);
      this.panels.push(p);
      runsBox.appendChild(p.root);
    });

    this.root = el("div", { className: "fs-scrubber" }, [
      payload.title ? el("div", { className: "fs-title", text: payload.title }) : null,
      bar,
      note ? el("div", { className: "fs-note", text: note }) : null,
      missing.length
        ? el(
            "div",
            { className: "fs-note fs-missing" },
            missing.map((m) => el("div", { text: m })),
          )
        : null,
      warnBox,
      runsBox,
      help,
      this.tooltip,
    ]);
    this.root.tabIndex = 0;
    // Keep JupyterLab's notebook shortcuts (↑/↓ move between cells) out while the scrubber has focus.
    this.root.setAttribute("data-lm-suppress-shortcuts", "true");
    this.root.addEventListener("keydown", (ev) => {
      const t = ev.target as HTMLElement | null;
      // Let range inputs keep their own arrow handling (it already dispatches through `input`).
      if (t && t.tagName === "INPUT" && (t as HTMLInputElement).type === "range" && ev.key.startsWith("Arrow")) return;
      const a = keyAction(ev.key, ev.shiftKey);
      if (!a) return;
      ev.preventDefault();
      ev.stopPropagation();
      this.dispatch(a);
    });
    host.appendChild(this.root);
    registerScrubber(this);
    this.render();
  }

  get state(): ScrubberState {
    return this._state;
  }

  /** Apply an action, sync the controls and timer, redraw. */
  dispatch(a: Action): void {
    const before = this._state;
    this._state = reduce(before, a, this.extent);
    if (this._state.playing !== before.playing) this.syncTimer();
    this.render();
  }

  private syncTimer(): void {
    if (this._state.playing && !this.timer) {
      this.timer = setInterval(() => this.dispatch({ type: "tick" }), PLAY_INTERVAL_MS);
    } else if (!this._state.playing && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private panelView(p: PanelElements): PanelView {
    const s = this._state;
    return {
      step: p.data.clampStep(s.step),
      layer: p.data.clampLayer(s.layer),
      head: p.data.clampHead(s.head),
      selected: s.selected,
      showAnchors: s.showAnchors,
      scale: s.scale,
    };
  }

  /** Redraw everything for the current state (cheap: cached images + overlays). */
  render(): void {
    const s = this._state;
    const c = this.controls;
    const r0 = this.runs[0];
    c.step.input.value = String(s.step);
    c.step.readout.textContent = `${r0.run.steps[r0.clampStep(s.step)]} (${s.step + 1}/${this.extent.steps})`;
    c.layer.input.value = String(s.layer);
    c.layer.readout.textContent = String(r0.run.layers[r0.clampLayer(s.layer)]);
    c.head.input.value = String(s.head === "mean" ? s.lastHead : s.head);
    c.head.readout.textContent = s.head === "mean" ? `mean of ${r0.run.numHeads}` : String(r0.run.heads[s.head] ?? s.head);
    c.head.input.disabled = s.head === "mean" || this.extent.heads === 0;
    c.mean.checked = s.head === "mean";
    c.anchors.checked = s.showAnchors;
    c.scale.value = s.scale;
    c.play.textContent = s.playing ? "⏸" : "▶";
    c.play.setAttribute("aria-label", s.playing ? "pause" : "play");
    for (const p of this.panels) this.renderPanel(p);
  }

  private renderPanel(p: PanelElements): void {
    const v = this.panelView(p);
    const d = p.data;
    const head = v.head === "mean" ? "mean over heads" : `head ${d.run.heads[v.head]}`;
    p.title.textContent = `${d.run.label} · step ${d.run.steps[v.step]} · layer ${d.run.layers[v.layer]} · ${head}`;
    const t = p.temporal.getContext("2d");
    if (t) drawTemporal(t, p.width, p.temporalHeight, d, p.images, v);
    const st = p.strip.getContext("2d");
    if (st) drawTokenStrip(st, p.width, p.strip.height, d, v);
    const heat = d.temporal(v.layer, v.head);
    const quantity = `attention received, ${v.head === "mean" ? "mean over heads" : head}`;
    p.colourBar.update(...scaledRange(heat.min, heat.max, v.scale), scaleQuantity(quantity, v.scale));
    const axisKey = `${v.selected}`;
    if (axisKey !== p.axisKey) {
      p.axisKey = axisKey;
      const sel = v.selected !== null && v.selected < d.N ? [v.selected] : [];
      tokenAxis(p.xAxis, d.run.tokens, p.width, sel);
      tokenAxis(p.mapAxis, d.run.tokens, p.mapSize, sel);
    }
    const m = p.map.getContext("2d");
    const hasMap = m ? drawMap(m, p.mapSize, d, p.images, v) : d.map(v.step, v.layer, v.head) !== null;
    const full = d.map(v.step, v.layer, v.head);
    p.mapBar.root.style.visibility = full ? "visible" : "hidden";
    if (full) p.mapBar.update(...scaledRange(...finiteRange(full.data), v.scale), scaleQuantity("attention weight", v.scale));
    const recorded = d.mapSteps(v.layer).map((i) => d.run.steps[i]);
    p.mapNote.textContent = hasMap
      ? `full map, step ${d.run.steps[v.step]} (query rows × key columns)`
      : recorded.length
        ? `no full map at this step; recorded at steps ${recorded.slice(0, 12).join(", ")}${recorded.length > 12 ? ", …" : ""}`
        : (d.missing("maps") ??
          `no full maps recorded for this layer (record probes: { patternMean: { layers: [${d.run.layers[v.layer]}] } }, or decodeQa(…, { viewProbes: "all" }))`);
    const hv = { step: v.step, layer: v.layer, head: v.head === "mean" ? ("mean" as const) : d.run.heads[v.head], selected: v.selected };
    p.headView?.draw(hv);
    p.headGrid?.draw(v.step, v.layer, hv.head);
    this.renderDetail(p, v);
  }

  private renderDetail(p: PanelElements, v: PanelView): void {
    const d = p.data;
    const j = v.selected;
    const ctx = p.profiles.getContext("2d");
    if (j === null || j >= d.N) {
      p.detail.textContent = "click a token to see its row (what it attends to) and column (who attends to it)";
      if (ctx) ctx.clearRect(0, 0, p.profiles.width, p.profiles.height);
      return;
    }
    const m = d.map(v.step, v.layer, v.head);
    let row: Float32Array | null = null;
    let col: Float32Array | null = null;
    if (m) {
      row = m.data.subarray(j * m.n, (j + 1) * m.n);
      col = new Float32Array(m.n);
      for (let i = 0; i < m.n; i++) col[i] = m.data[i * m.n + j];
    }
    if (ctx) drawProfiles(ctx, p.profiles.width, p.profiles.height, row, col);
    const tok = (i: number) => `"${tokenLabel(d.run.tokens[i] ?? "", 16)}"@${i}`;
    const top = (a: Float32Array) =>
      Array.from(a, (x, i) => [x, i] as [number, number])
        .filter(([x]) => x === x)
        .sort((x, y) => y[0] - x[0])
        .slice(0, 3)
        .map(([x, i]) => `${tok(i)} ${x.toFixed(3)}`)
        .join(", ");
    const state = describeState(d, v.step, j);
    p.detail.textContent = m
      ? `${tok(j)} (${state}) attends most to ${top(row!)}; attended most by ${top(col!)}`
      : `${tok(j)} (${state}) receives ${d.receivedRow(v.step, v.layer, v.head)[j].toFixed(4)} on average; no full map at this step for its row and column`;
  }

  private buildPanel(data: RunData, width: number): PanelElements {
    const temporalHeight = Math.max(96, Math.min(256, data.S * 6));
    const mapSize = Math.min(300, Math.round(width * 0.48));
    const canvas = (w: number, h: number, cls: string) => {
      const c = el("canvas", { className: cls });
      c.width = w;
      c.height = h;
      // Fixed CSS size: a flex column would otherwise stretch the canvas and blur its cells.
      c.style.width = `${w}px`;
      c.style.height = `${h}px`;
      return c;
    };
    const axis = (cls: string, w: number) => {
      const a = el("div", { className: `fs-ticks ${cls}` });
      a.style.width = `${w}px`;
      return a;
    };
    const p: PanelElements = {
      data,
      images: new RunImages(data),
      root: el("div", { className: "fs-run" }),
      title: el("div", { className: "fs-run-title" }),
      temporal: canvas(width, temporalHeight, "fs-temporal"),
      strip: canvas(width, 16, "fs-strip"),
      map: canvas(mapSize, mapSize, "fs-map"),
      mapNote: el("div", { className: "fs-map-note" }),
      profiles: canvas(Math.max(120, width - mapSize - 60), 120, "fs-profiles"),
      detail: el("div", { className: "fs-detail" }),
      width,
      temporalHeight,
      mapSize,
      xAxis: axis("fs-xaxis", width),
      yAxis: axis("fs-yaxis", 34),
      colourBar: new ColourBar(temporalHeight),
      mapAxis: axis("fs-xaxis fs-map-xaxis", mapSize),
      mapBar: new ColourBar(mapSize),
      headView: data.hasHeadMaps || data.missing("headMaps") ? new HeadView(data, width) : null,
      headGrid: data.hasHeadMaps ? new HeadGrid(data, (li, hi) => this.pickHead(data, li, hi)) : null,
      axisKey: "",
    };
    p.yAxis.style.height = `${temporalHeight}px`;
    stepAxis(p.yAxis, data.run.steps, temporalHeight);
    p.root.style.maxWidth = `${width + 130}px`;
    const heads = p.headView
      ? el("details", { className: "fs-heads" }, [
          el("summary", { text: "heads: head view and layers × heads grid" }),
          el("div", { className: "fs-heads-body" }, [p.headView.root, p.headGrid?.root]),
        ])
      : null;
    if (heads) (heads as HTMLDetailsElement).open = true;
    p.root.append(
      p.title,
      el("div", { className: "fs-axis", text: "temporal view: denoising step (rows, first at top) × token position" }),
      el("div", { className: "fs-plot" }, [
        el("div", { className: "fs-yaxis-box" }, [el("span", { className: "fs-axis-title fs-y-title", text: "step" }), p.yAxis]),
        el("div", { className: "fs-plot-main" }, [p.temporal, p.strip, p.xAxis]),
        p.colourBar.root,
      ]),
      stripLegend(data.run.causal),
      el("div", { className: "fs-lower" }, [
        el("div", { className: "fs-map-box" }, [
          el("div", { className: "fs-plot" }, [el("div", { className: "fs-plot-main" }, [p.map, p.mapAxis]), p.mapBar.root]),
          p.mapNote,
        ]),
        el("div", { className: "fs-detail-box" }, [
          el("div", { className: "fs-legend", text: "blue: selected row (attends to) · orange: column (attended by)" }),
          p.profiles,
          p.detail,
        ]),
      ]),
    );
    if (heads) p.root.append(heads);
    this.attachPointer(p);
    return p;
  }

  /** A click in the layers × heads grid: that layer, and that head when per-head received data has it. */
  private pickHead(d: RunData, layerIndex: number, headMapIndex: number): void {
    this.dispatch({ type: "layer", value: layerIndex });
    const model = (d.run.headMapHeads ?? [])[headMapIndex];
    const hi = d.run.heads.indexOf(model);
    if (hi >= 0) this.dispatch({ type: "head", value: hi });
  }

  /** Map a pointer event on a canvas to (column, row) cells of an image of `cols` × `rows`. */
  private cell(ev: MouseEvent, c: HTMLCanvasElement, cols: number, rows: number): [number, number] | null {
    const r = c.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return null;
    const x = Math.floor(((ev.clientX - r.left) / r.width) * cols);
    const y = Math.floor(((ev.clientY - r.top) / r.height) * rows);
    if (x < 0 || y < 0 || x >= cols || y >= rows) return null;
    return [x, y];
  }

  private attachPointer(p: PanelElements): void {
    const d = p.data;
    const show = (ev: MouseEvent, text: string) => {
      this.tooltip.textContent = text;
      this.tooltip.style.display = "block";
      const hr = this.root.getBoundingClientRect();
      this.tooltip.style.left = `${ev.clientX - hr.left + 12}px`;
      this.tooltip.style.top = `${ev.clientY - hr.top + 12}px`;
    };
    const hide = () => (this.tooltip.style.display = "none");
    const tokenText = (j: number, step: number) => {
      const v = this.panelView(p);
      const anchor = d.anchorRow(step, v.layer)[j] ? " · floating anchor" : "";
      const value = d.receivedRow(step, v.layer, v.head)[j];
      const regions = (d.run.regions ?? []).filter((r) => r.tokens[0] <= j && j < r.tokens[1]).map((r) => r.name);
      const region = regions.length ? ` · region ${regions.join(", ")}` : "";
      return `pos ${j} "${tokenLabel(d.run.tokens[j] ?? "", 64)}" · step ${d.run.steps[step]} · received ${value.toFixed(4)} · ${describeState(d, step, j)}${anchor}${region}`;
    };
    p.temporal.addEventListener("mousemove", (ev) => {
      const hit = this.cell(ev, p.temporal, d.N, d.S);
      if (hit) show(ev, tokenText(hit[0], hit[1]));
      else hide();
    });
    p.strip.addEventListener("mousemove", (ev) => {
      const hit = this.cell(ev, p.strip, d.N, 1);
      if (hit) show(ev, tokenText(hit[0], this.panelView(p).step));
      else hide();
    });
    p.map.addEventListener("mousemove", (ev) => {
      const v = this.panelView(p);
      const m = d.map(v.step, v.layer, v.head);
      const hit = m ? this.cell(ev, p.map, m.n, m.n) : null;
      if (!m || !hit) return hide();
      const [k, q] = hit;
      show(
        ev,
        `query ${q} "${tokenLabel(d.run.tokens[q] ?? "")}" → key ${k} "${tokenLabel(d.run.tokens[k] ?? "")}": ${m.data[q * m.n + k].toFixed(4)}`,
      );
    });
    for (const c of [p.temporal, p.strip, p.map]) c.addEventListener("mouseleave", hide);
    p.temporal.addEventListener("click", (ev) => {
      const hit = this.cell(ev, p.temporal, d.N, d.S);
      if (hit) this.dispatch({ type: "select", position: hit[0] });
    });
    p.strip.addEventListener("click", (ev) => {
      const hit = this.cell(ev, p.strip, d.N, 1);
      if (hit) this.dispatch({ type: "select", position: hit[0] });
    });
    p.map.addEventListener("click", (ev) => {
      const hit = this.cell(ev, p.map, d.N, d.N);
      if (hit) this.dispatch({ type: "select", position: hit[1] });
    });
  }

  /** File name stem for exports: figure, the runs' models, layer and step shown. */
  fileStem(): string {
    const s = this._state;
    const r0 = this.runs[0];
    return exportStem({
      figure: "scrubber",
      models: this.runs.map((r) => r.run.label),
      layer: r0.run.layers[r0.clampLayer(s.layer)],
      step: r0.run.steps[r0.clampStep(s.step)],
    });
  }

  /** PNG of the current view (title, temporal views, token strips and maps). */
  exportPng(): Promise<Blob | null> {
    return scrubberPng(this.panels, this.payload);
  }

  /** Standalone SVG of the current view; all text escaped. */
  exportSvg(): string {
    return scrubberSvg(this.panels, this.payload, (p) => this.panelView(p));
  }

  dispose(): void {
    unregisterScrubber(this);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.root.remove();
  }
}

/** [min, max] after the colour scale (what the colour bar spans). */
function scaledRange(min: number, max: number, scale: ColorScale): [number, number] {
  if (scale === "sqrt") return [Math.sqrt(Math.max(0, min)), Math.sqrt(Math.max(0, max))];
  if (scale === "log") return [Math.log10(Math.max(1e-6, min)), Math.log10(Math.max(1e-6, max))];
  return [min, max];
}

const rangeCache = new WeakMap<Float32Array, [number, number]>();

/** Finite [min, max] of a map (cached per array: a full map is N² values). */
function finiteRange(a: Float32Array): [number, number] {
  const hit = rangeCache.get(a);
  if (hit) return hit;
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of a) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const out: [number, number] = lo <= hi ? [lo, hi] : [0, 0];
  rangeCache.set(a, out);
  return out;
}

function describeState(d: RunData, step: number, j: number): string {
  const st = d.tokenState(step, j);
  const at = d.unmaskedAt[j];
  if (st === "prompt") return "prompt";
  if (d.run.causal) return st === "masked" ? `not generated yet (step ${at})` : `generated at step ${at}`;
  return st === "masked" ? `masked, unmasked at step ${at}` : `unmasked at step ${at}`;
}
