/**
 * The attention-step scrubber: shared step / layer / head sliders (plus "mean over heads"),
 * keyboard and play/pause, and one panel per run (MDM and ARM side by side) with the temporal
 * view (steps × positions), a token strip (masked / unmasked / anchors), the full map for the
 * chosen step, and the row and column of a clicked token.
 *
 * Independent of Lumino so that the renderer, the document widget, the tests and the benchmark
 * page all drive the same class. Untrusted text enters the DOM only through textContent.
 */
import { describeOmitted, exportStem, type ScrubberPayload, type ScrubberSlice } from "../protocol.js";
import { download, el, slider, tokenLabel } from "../dom.js";
import { decodeScrubber, RunData } from "./data.js";
import { COLORS, drawMap, drawTemporal, drawTokenStrip, RunImages, type PanelView } from "./draw.js";
import { drawProfilePlots, profileSvg } from "./profiles.js";
import { fetchSlice, hasKernelResolver, kernelFor } from "./live.js";
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
import { HEAD_VIEW_MIN_WIDTH, HeadGrid, HeadView } from "./heads.js";

/** Milliseconds per step while playing. */
const PLAY_INTERVAL_MS = 150;

/** Width of a panel beyond its heat image: step axis, colour bar and its ticks and label (px). */
const PANEL_MARGIN = 130;
/** The full map's side (px): 42 % of the heat image's width, within these bounds. */
const MAP_MIN = 140;
const MAP_MAX = 260;
/** Beside the full map: its colour bar (px), then the gap before the head view. */
const MAP_BAR = 72;
const LOWER_GAP = 12;
/**
 * The narrowest panel: its lower row (the smallest full map with its colour bar, the narrowest head
 * view) must fit, or the head view spills over the next run's column.
 */
const MIN_PANEL = MAP_MIN + MAP_BAR + LOWER_GAP + HEAD_VIEW_MIN_WIDTH;

export interface PanelElements {
  data: RunData;
  images: RunImages;
  root: HTMLElement;
  title: HTMLElement;
  temporal: HTMLCanvasElement;
  strip: HTMLCanvasElement;
  map: HTMLCanvasElement;
  mapNote: HTMLElement;
  profiles: SVGSVGElement;
  /** The model, tier and paradigm (first line of the title) and where the shared controls put this run. */
  name: HTMLElement;
  where: HTMLElement;
  /** Layer chosen for this panel alone (index into its kept layers), or null: the shared layer by relative depth. */
  layerOverride: number | null;
  layerSelect: HTMLSelectElement;
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
  /** How the shared step slider maps to each run: the same fraction of its decode, or the same kept-step index. */
  private stepMode: "fraction" | "index" = "fraction";
  private inflight = false;
  private liveTries = 0;
  private disposed = false;
  private runsBox!: HTMLElement;
  private fixedWidth: number | null = null;
  /** Output width the panels were laid out for. */
  private laidOut = -1;
  private observer: ResizeObserver | null = null;
  /** null: not looked for yet; false: no kernel holds this output (a saved notebook). */
  private liveKernel: boolean | null = null;
  private readonly tooltip: HTMLElement;
  private readonly controls: {
    step: ReturnType<typeof slider>;
    layer: ReturnType<typeof slider>;
    head: ReturnType<typeof slider>;
    mean: HTMLInputElement;
    anchors: HTMLInputElement;
    play: HTMLButtonElement;
    scale: HTMLSelectElement;
    stepMode: HTMLSelectElement;
  };

  constructor(
    readonly host: HTMLElement,
    readonly payload: ScrubberPayload,
    options: { width?: number } = {},
  ) {
    this.runs = decodeScrubber(payload);
    if (payload.live) for (const r of this.runs) r.liveHeadMaps = (r.run.headMapHeads?.length ?? 0) > 0 && !r.missing("headMaps");
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
      stepMode: el("select", { className: "fs-select", title: "how the shared step slider maps to each run" }),
    };
    for (const [value, text] of [
      ["fraction", "same fraction of each decode"],
      ["index", "same step index"],
    ]) {
      const o = el("option", { text });
      o.value = value;
      this.controls.stepMode.appendChild(o);
    }
    this.controls.stepMode.dataset.role = "step-mode";
    this.controls.stepMode.setAttribute("aria-label", "steps across runs");
    this.controls.stepMode.addEventListener("change", () => {
      this.stepMode = this.controls.stepMode.value === "index" ? "index" : "fraction";
      this.render();
    });
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

    const note = describeOmitted(payload.subsampled ?? [], payload.live !== undefined);
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
      this.runs.length > 1 ? el("label", { className: "fs-slider" }, [el("span", { text: "steps across runs" }), c.stepMode]) : null,
      exportPng,
      exportSvg,
    ]);
    const help = el("div", {
      className: "fs-help",
      text: "keys: ←/→ step (shift ×10) · Home/End · ↑/↓ layer · [ ] head · m mean · a anchors · c colour scale · space play · Esc clear · click a token label or a cell for its row and column · hover a token in the head view to isolate its lines",
    });
    this.tooltip = el("div", { className: "fs-tooltip" });
    this.tooltip.style.display = "none";
    const runsBox = el("div", { className: "fs-runs" });
    this.runsBox = runsBox;
    this.fixedWidth = options.width ?? null;
    this.layout(host.clientWidth);

    this.root = el("div", { className: "fs-scrubber" }, [
      payload.title ? el("div", { className: "fs-title", text: payload.title }) : null,
      bar,
      help,
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
    if (typeof ResizeObserver !== "undefined") {
      this.observer = new ResizeObserver(() => this.resize());
      this.observer.observe(host);
    }
  }

  /**
   * Runs are columns sharing the controls: as many side by side as fit the output area (each at
   * least MIN_PANEL wide: two in a 1400 px window, three from about 1330 px of output), within bounds. Each panel is its heat image plus PANEL_MARGIN px of step axis and colour
   * bar. Laid out again when the output's width changes (it is 0 until the output is attached).
   */
  private layout(clientWidth: number): void {
    const avail = clientWidth > 0 ? clientWidth : 1000;
    if (this.panels.length && (this.fixedWidth !== null || Math.abs(avail - this.laidOut) < 24)) return;
    this.laidOut = avail;
    const n = this.runs.length;
    const cols = Math.max(1, Math.min(n, Math.floor((avail + 12) / (MIN_PANEL + 12))));
    const width =
      this.fixedWidth ?? Math.round(Math.max(MIN_PANEL - PANEL_MARGIN, Math.min(900, (avail - 12 * (cols - 1)) / cols - PANEL_MARGIN)));
    this.runsBox.style.gridTemplateColumns = `repeat(${cols}, max-content)`;
    this.panels.length = 0;
    this.runsBox.replaceChildren();
    this.runs.forEach((r) => {
      const p = this.buildPanel(r, width);
      this.panels.push(p);
      this.runsBox.appendChild(p.root);
    });
  }

  /** The output's width changed: lay the panels out again when it differs enough. */
  resize(): void {
    const w = this.host.clientWidth;
    if (w <= 0 || this.fixedWidth !== null || Math.abs(w - this.laidOut) < 24) return;
    this.layout(w);
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
    const d = p.data;
    const S = this.extent.steps;
    const L = this.extent.layers;
    // steps: the same fraction of each decode (or the same index); layers: the same relative depth, or the panel's own
    const step = this.stepMode === "fraction" && S > 1 && d.S !== S ? Math.round((s.step / (S - 1)) * (d.S - 1)) : d.clampStep(s.step);
    const layer = p.layerOverride ?? (L > 1 && d.L !== L ? Math.round((s.layer / (L - 1)) * (d.L - 1)) : d.clampLayer(s.layer));
    return {
      step: d.clampStep(step),
      layer: d.clampLayer(layer),
      head: d.clampHead(s.head),
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
    c.stepMode.value = this.stepMode;
    for (const p of this.panels) this.renderPanel(p);
    this.pumpLive();
  }

  /**
   * Ask the kernel for the current (step, layer) of each panel when the output does not hold it (then
   * the next step, so playing and stepping stay ahead). One request at a time; each reply redraws.
   */
  private pumpLive(): void {
    const live = this.payload.live;
    if (!live || this.inflight || this.disposed) return;
    const wanted: [PanelElements, number, number][] = [];
    for (const p of this.panels) {
      const v = this.panelView(p);
      wanted.push([p, v.step, v.layer]);
    }
    for (const p of this.panels) {
      const v = this.panelView(p);
      if (v.step + 1 < p.data.S) wanted.push([p, v.step + 1, v.layer]);
    }
    const next = wanted.find(([p, st, l]) => p.data.lacks(st, l) && !p.data.fetchState(st, l).done);
    if (!next) return;
    const kernel = kernelFor(this.root);
    if (!kernel) {
      const first = this.liveKernel === null;
      this.liveKernel = false;
      // the output may not be attached to its notebook yet: look again a few times
      if (hasKernelResolver() && this.liveTries++ < 20) setTimeout(() => this.pumpLive(), 300);
      if (first) for (const p of this.panels) this.renderPanel(p);
      return;
    }
    this.liveKernel = true;
    this.inflight = true;
    const [p, st, l] = next;
    const run = this.panels.indexOf(p);
    fetchSlice(kernel, live.key, run, st, l)
      .catch((e: unknown): ScrubberSlice => ({
        key: live.key,
        run,
        stepIndex: st,
        layerIndex: l,
        error: e instanceof Error ? e.message : String(e),
      }))
      .then((slice) => {
        // the kernel sends the following steps of this layer with it (ScrubberSlice.more)
        for (const one of [slice, ...(slice.more ?? [])]) p.data.addSlice(one);
        p.images.forgetMaps();
        p.headGrid?.invalidate();
      })
      .finally(() => {
        this.inflight = false;
        if (!this.disposed) this.render();
      });
  }

  private renderPanel(p: PanelElements): void {
    const v = this.panelView(p);
    const d = p.data;
    const head = v.head === "mean" ? `mean over ${d.run.numHeads} heads` : `head ${d.run.heads[v.head]} of ${d.run.numHeads}`;
    const lastStep = d.run.steps[d.S - 1] ?? 0;
    const pct = lastStep > 0 ? ` · ${Math.round((100 * d.run.steps[v.step]) / lastStep)} % of the decode` : "";
    const layers = d.run.numLayers ?? d.L;
    p.where.textContent = `step ${d.run.steps[v.step]} (${v.step + 1} of ${d.S}${pct}) · layer ${d.run.layers[v.layer]} of ${layers} · ${head}`;
    p.layerSelect.value = p.layerOverride === null ? "shared" : String(p.layerOverride);
    const t = p.temporal.getContext("2d");
    if (t) drawTemporal(t, p.width, p.temporalHeight, d, p.images, v);
    const st = p.strip.getContext("2d");
    if (st) drawTokenStrip(st, p.width, p.strip.height, d, v);
    const heat = d.temporal(v.layer, v.head);
    const quantity = `attention received, ${v.head === "mean" ? "mean over heads" : head}`;
    p.colourBar.update(...scaledRange(heat.min, heat.max, v.scale), scaleQuantity(quantity, v.scale));
    const anchorCols: number[] = [];
    if (v.showAnchors) {
      const row = d.anchorRow(v.step, v.layer);
      for (let j = 0; j < d.N; j++) if (row[j]) anchorCols.push(j);
    }
    p.strip.dataset.anchors = anchorCols.join(",");
    const axisKey = `${v.selected}|${anchorCols.join(",")}`;
    if (axisKey !== p.axisKey) {
      p.axisKey = axisKey;
      const sel = v.selected !== null && v.selected < d.N ? [v.selected] : [];
      tokenAxis(p.xAxis, d.tokens, p.width, sel, 0, anchorCols);
      tokenAxis(p.mapAxis, d.tokens, p.mapSize, sel, 0, anchorCols);
    }
    const m = p.map.getContext("2d");
    const hasMap = m ? drawMap(m, p.mapSize, d, p.images, v) : d.map(v.step, v.layer, v.head) !== null;
    const full = d.map(v.step, v.layer, v.head);
    p.mapBar.root.style.visibility = full ? "visible" : "hidden";
    if (full) p.mapBar.update(...scaledRange(...finiteRange(full.data), v.scale), scaleQuantity("attention weight", v.scale));
    const recorded = d.mapSteps(v.layer).map((i) => d.run.steps[i]);
    const pending = this.livePending(d, v.step, v.layer);
    p.mapNote.textContent = hasMap
      ? `full map, step ${d.run.steps[v.step]} (query rows × key columns)`
      : pending
        ? pending
        : recorded.length
          ? `no full map at this step; recorded at steps ${recorded.slice(0, 12).join(", ")}${recorded.length > 12 ? ", …" : ""}`
          : (d.missing("maps") ??
            `no full maps recorded for this layer (record probes: { patternMean: { layers: [${d.run.layers[v.layer]}] } }, or decodeQa(…, { viewProbes: "all" }))`);
    const hv = { step: v.step, layer: v.layer, head: v.head === "mean" ? ("mean" as const) : d.run.heads[v.head], selected: v.selected };
    p.headView?.draw(hv);
    if (p.headView && !d.headMapsAt(v.step, v.layer) && !d.missing("headMaps")) {
      const why = this.livePending(d, v.step, v.layer);
      if (why) p.headView.setNote(why);
    }
    p.headGrid?.draw(v.step, v.layer, hv.head);
    this.renderDetail(p, v);
  }

  /** Why (step, layer) has no maps yet when a live kernel could serve them, in words; null otherwise. */
  private livePending(d: RunData, step: number, layer: number): string | null {
    if (!this.payload.live || !d.lacks(step, layer)) return null;
    const st = d.fetchState(step, layer);
    const at = `step ${d.run.steps[step]}, layer ${d.run.layers[layer]}`;
    if (st.error) return `${at}: ${st.error}`;
    if (st.done) return null;
    if (this.liveKernel === false)
      return `${at} is not saved in this output: it loads from the kernel while the notebook runs (run the cell to see every step)`;
    return `loading ${at} from the kernel…`;
  }

  private renderDetail(p: PanelElements, v: PanelView): void {
    const d = p.data;
    const j = v.selected;
    const pw = Number(p.profiles.getAttribute("width"));
    const ph = Number(p.profiles.getAttribute("height"));
    if (j === null || j >= d.N) {
      p.detail.textContent = "click a token label (or a cell) to see its row (what it attends to) and column (who attends to it)";
      p.profiles.replaceChildren();
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
    const name = `${j} "${tokenLabel(d.tokens[j] ?? "", 12)}"`;
    drawProfilePlots(
      p.profiles,
      pw,
      ph,
      [
        { values: row, colour: COLORS.selection, title: `row: what ${name} attends to`, xLabel: "key position" },
        { values: col, colour: COLORS.anchor, title: `column: who attends to ${name}`, xLabel: "query position" },
      ],
      d.tokens,
    );
    const tok = (i: number) => `"${tokenLabel(d.tokens[i] ?? "", 16)}"@${i}`;
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
    // Compact: the temporal view, the full map and the head view of two runs fit one 1400 × 900 screen.
    const temporalHeight = Math.max(64, Math.min(140, data.S * 4));
    const mapSize = Math.max(MAP_MIN, Math.min(MAP_MAX, Math.round(width * 0.42)));
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
    const r = data.run;
    const name = r.model ? [r.model, r.tier, r.paradigm ?? (r.causal ? "ARM" : "MDM")].filter(Boolean).join(" · ") : r.label;
    const layerSelect = el("select", {
      className: "fs-select fs-layer-select",
      title: "this panel's layer: the shared slider by relative depth, or one chosen here",
    });
    layerSelect.dataset.role = "panel-layer";
    layerSelect.appendChild(Object.assign(el("option", { text: "layer: shared (relative depth)" }), { value: "shared" }));
    r.layers.forEach((l, i) => layerSelect.appendChild(Object.assign(el("option", { text: `layer ${l}` }), { value: String(i) })));
    // The head view takes what the map and its colour bar leave of the panel (at least its narrowest).
    const headWidth = Math.max(HEAD_VIEW_MIN_WIDTH, width + PANEL_MARGIN - mapSize - MAP_BAR - LOWER_GAP);
    const p: PanelElements = {
      data,
      images: new RunImages(data),
      root: el("div", { className: "fs-run" }),
      title: el("div", { className: "fs-run-title" }),
      name: el("div", { className: "fs-run-name", text: name }),
      where: el("div", { className: "fs-run-where" }),
      layerOverride: null,
      layerSelect,
      temporal: canvas(width, temporalHeight, "fs-temporal"),
      strip: canvas(width, 12, "fs-strip"),
      map: canvas(mapSize, mapSize, "fs-map"),
      mapNote: el("div", { className: "fs-map-note" }),
      profiles: profileSvg(width + 100, 124),
      detail: el("div", { className: "fs-detail" }),
      width,
      temporalHeight,
      mapSize,
      xAxis: axis("fs-xaxis", width),
      yAxis: axis("fs-yaxis", 34),
      colourBar: new ColourBar(temporalHeight),
      mapAxis: axis("fs-xaxis fs-map-xaxis", mapSize),
      mapBar: new ColourBar(mapSize),
      headView:
        data.hasHeadMaps || data.missing("headMaps")
          ? new HeadView(data, headWidth, mapSize, (j) => this.dispatch({ type: "select", position: j }))
          : null,
      headGrid: data.hasHeadMaps ? new HeadGrid(data, (li, hi) => this.pickHead(data, li, hi)) : null,
      axisKey: "",
    };
    layerSelect.addEventListener("change", () => {
      p.layerOverride = layerSelect.value === "shared" ? null : Number(layerSelect.value);
      this.render();
    });
    p.title.append(el("div", { className: "fs-run-head" }, [p.name, layerSelect]), p.where);
    p.yAxis.style.height = `${temporalHeight}px`;
    stepAxis(p.yAxis, data.run.steps, temporalHeight);
    p.root.style.width = `${width + PANEL_MARGIN}px`;
    const grid = p.headGrid
      ? el("details", { className: "fs-heads" }, [el("summary", { text: "layers × heads grid at this step" }), p.headGrid.root])
      : null;
    p.root.append(
      p.title,
      el("div", { className: "fs-plot" }, [
        el("div", { className: "fs-yaxis-box" }, [el("span", { className: "fs-axis-title fs-y-title", text: "step" }), p.yAxis]),
        el("div", { className: "fs-plot-main" }, [p.temporal, p.strip, p.xAxis]),
        p.colourBar.root,
      ]),
      stripLegend(data.run.causal),
      el("div", { className: "fs-lower" }, [
        el("div", { className: "fs-map-box" }, [
          el("div", { className: "fs-axis", text: "full map: query rows × key columns" }),
          el("div", { className: "fs-plot" }, [el("div", { className: "fs-plot-main" }, [p.map, p.mapAxis]), p.mapBar.root]),
          p.mapNote,
        ]),
        p.headView ? p.headView.root : null,
      ]),
      el("div", { className: "fs-detail-box" }, [p.profiles, p.detail]),
    );
    if (grid) p.root.append(grid);
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
      return `pos ${j} "${tokenLabel(d.tokens[j] ?? "", 64)}" · step ${d.run.steps[step]} · received ${value.toFixed(4)} · ${describeState(d, step, j)}${anchor}${region}`;
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
        `query ${q} "${tokenLabel(d.tokens[q] ?? "")}" → key ${k} "${tokenLabel(d.tokens[k] ?? "")}": ${m.data[q * m.n + k].toFixed(4)}`,
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
    // Click a token label (under the temporal view or the map): select that position.
    for (const a of [p.xAxis, p.mapAxis])
      a.addEventListener("click", (ev) => {
        const t = (ev.target as HTMLElement | null)?.closest?.("[data-pos]") as HTMLElement | null;
        if (!t) return;
        const j = Number(t.dataset.pos);
        this.dispatch({ type: "select", position: this._state.selected === j ? null : j });
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
    this.disposed = true;
    this.observer?.disconnect();
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
