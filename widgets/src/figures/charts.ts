/**
 * Interactive versions of the paper's summary figures:
 * - absorption rate per layer, mean ± std bands over samples, one line per model (§6);
 * - retrieval-head scores, layers × heads, one heatmap per model, colour range [0, 1] (§8);
 * - region rollout R̄ (from region × to region), Blues (§9);
 * - distractor sweep: a metric against the gold document's position, one line per model;
 * - temporal drift (steps × positions, anchors marked), floating-token type shares per layer band,
 *   and the kernel's generic labelled heatmap.
 */
import { el } from "../dom.js";
import {
  absorptionTitles,
  decodeArray,
  describeSubsampling,
  exportStem,
  modelColour,
  modelsOf,
  PARADIGM_DASH,
  paradigmOf,
  PayloadError,
  type AbsorptionPayload,
  type DistractorPayload,
  type DriftSpec,
  type FloatscopePayload,
  type HeatmapSpec,
  type TokenTypesSpec,
  type RetrievalPayload,
  type RolloutPayload,
} from "../protocol.js";
import { isColormap, plotlyScale } from "../colormap.js";
import { BASE_LAYOUT, exportButtons, frame, loadPlotly, PLOT_CONFIG, plotlyText, rows, type PlotlyLike } from "./plotly.js";

/** Token-type and fallback palette for series that are not models. */
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];

function withAlpha(color: string, a: number): string {
  if (color.startsWith("rgb(")) return color.replace("rgb(", "rgba(").replace(")", `,${a})`);
  const n = parseInt(color.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

const MARKERS = ["circle", "triangle-up", "square", "diamond", "cross", "x"];

type Figure = { data: object[]; layout: object }[];

/** Everything ChartView draws. */
export type ChartPayload = FloatscopePayload | DriftSpec | TokenTypesSpec | HeatmapSpec;

function absorptionFigure(p: AbsorptionPayload): Figure {
  const data: object[] = [];
  p.series.forEach((s, i) => {
    const c = modelColour(s.model, i);
    const name = plotlyText(`${s.model} (${s.paradigm})`);
    const dash = PARADIGM_DASH[paradigmOf(s.paradigm)].plotly;
    const hi = s.mean.map((m, k) => m + (s.std[k] ?? 0));
    const lo = s.mean.map((m, k) => m - (s.std[k] ?? 0));
    data.push({
      type: "scatter",
      x: s.layers,
      y: hi,
      mode: "lines",
      line: { width: 0 },
      hoverinfo: "skip",
      showlegend: false,
      legendgroup: name,
    });
    data.push({
      type: "scatter",
      x: s.layers,
      y: lo,
      mode: "lines",
      line: { width: 0 },
      fill: "tonexty",
      fillcolor: withAlpha(c, 0.2),
      hoverinfo: "skip",
      showlegend: false,
      legendgroup: name,
    });
    data.push({
      type: "scatter",
      x: s.layers,
      y: s.mean,
      mode: "lines+markers",
      name,
      legendgroup: name,
      line: { color: c, width: 2, dash },
      marker: { symbol: MARKERS[i % MARKERS.length], size: 6, color: c },
      customdata: s.std,
      hovertemplate: `${name}<br>layer %{x}: %{y:.1f}% ± %{customdata:.1f} (n=${s.samples})<extra></extra>`,
    });
  });
  const { title, subtitle } = absorptionTitles(p);
  return [
    {
      data,
      layout: {
        ...BASE_LAYOUT,
        title: {
          text: [plotlyText(title), ...subtitle.map((l) => `<span style="font-size:11px;color:#555">${plotlyText(l)}</span>`)].join("<br>"),
          font: { size: 13 },
        },
        margin: { ...BASE_LAYOUT.margin, t: 40 + 14 * subtitle.length },
        xaxis: { title: { text: "Layer Index" }, gridcolor: "#eee" },
        yaxis: { title: { text: "Absorption Rate (%)" }, gridcolor: "#eee" },
        height: 420,
      },
    },
  ];
}

function retrievalFigure(p: RetrievalPayload): Figure {
  return p.models.map((m, i) => {
    const [L, H] = m.scores.shape;
    const z = rows(decodeArray(m.scores, `models[${i}].scores`), L, H);
    return {
      data: [
        {
          type: "heatmap",
          z,
          x: Array.from({ length: H }, (_, h) => h),
          y: Array.from({ length: L }, (_, l) => l),
          zmin: 0,
          zmax: 1,
          colorscale: plotlyScale("ylorrd"),
          xgap: 1,
          ygap: 1,
          hovertemplate: "layer %{y} head %{x}: %{z:.3f}<extra></extra>",
          colorbar: { thickness: 12, tickvals: [0, 0.2, 0.4, 0.6, 0.8, 1] },
        },
      ],
      layout: {
        ...BASE_LAYOUT,
        title: { text: plotlyText(`Retrieval heads · ${m.model} (${p.normalisation}, n=${m.samples})`), font: { size: 13 } },
        xaxis: { title: { text: "Head Index" }, dtick: 2, scaleanchor: "y", constrain: "domain" },
        yaxis: { title: { text: "Layer Index" }, autorange: "reversed", dtick: 2 },
        width: 460,
        height: 460,
      },
    };
  });
}

function rolloutFigure(p: RolloutPayload): Figure {
  const R = p.regions.length;
  const z = rows(decodeArray(p.matrix, "matrix"), R, R);
  const labels = p.regions.map(plotlyText);
  return [
    {
      data: [
        {
          type: "heatmap",
          z,
          x: labels,
          y: labels,
          colorscale: plotlyScale("blues"),
          text: z.map((r) => r.map((v) => (v === null ? "" : v.toFixed(3)))),
          texttemplate: R <= 16 ? "%{text}" : undefined,
          hovertemplate: "from %{y} to %{x}: %{z:.4f}<extra></extra>",
          colorbar: { thickness: 12 },
        },
      ],
      layout: {
        ...BASE_LAYOUT,
        title: {
          text: plotlyText(p.title ?? `Region rollout · ${p.model}${p.condition ? ` · ${p.condition}` : ""} (n=${p.samples})`),
          font: { size: 13 },
        },
        xaxis: { tickangle: -45, title: { text: "to region" } },
        yaxis: { autorange: "reversed", title: { text: "from region" } },
        width: 560,
        height: 520,
        margin: { l: 90, r: 20, t: 40, b: 100 },
      },
    },
  ];
}

function distractorFigure(p: DistractorPayload): Figure {
  const data: object[] = [];
  p.series.forEach((s, i) => {
    const c = modelColour(s.model, i);
    const name = plotlyText(s.model);
    if (s.lo && s.hi) {
      data.push({
        type: "scatter",
        x: p.positions,
        y: s.hi,
        mode: "lines",
        line: { width: 0 },
        hoverinfo: "skip",
        showlegend: false,
        legendgroup: name,
      });
      data.push({
        type: "scatter",
        x: p.positions,
        y: s.lo,
        mode: "lines",
        line: { width: 0 },
        fill: "tonexty",
        fillcolor: withAlpha(c, 0.2),
        hoverinfo: "skip",
        showlegend: false,
        legendgroup: name,
      });
    }
    data.push({
      type: "scatter",
      x: p.positions,
      y: s.values,
      mode: "lines+markers",
      name,
      legendgroup: name,
      line: { color: c, width: 2 },
      marker: { symbol: MARKERS[i % MARKERS.length], size: 7 },
    });
  });
  return [
    {
      data,
      layout: {
        ...BASE_LAYOUT,
        title: { text: plotlyText(p.title ?? `${p.metric} vs gold document position`), font: { size: 13 } },
        xaxis: { title: { text: p.xTitle ?? "Gold document position (1-based)" }, dtick: 1, gridcolor: "#eee" },
        yaxis: { title: { text: plotlyText(p.metric) }, gridcolor: "#eee" },
        height: 400,
      },
    },
  ];
}

function driftFigure(p: DriftSpec): Figure {
  const [S, N] = p.heat.shape;
  const z = rows(decodeArray(p.heat, "heat"), S, N);
  const a = decodeArray(p.anchors, "anchors");
  const ax: number[] = [];
  const ay: number[] = [];
  for (let i = 0; i < a.length; i++) {
    if (a[i] > 0.5) {
      ax.push(i % N);
      ay.push(p.steps[Math.floor(i / N)]);
    }
  }
  const labels = p.tokens.map((t) => plotlyText(t));
  const hover = p.steps.map(() => labels);
  return [
    {
      data: [
        {
          type: "heatmap",
          z,
          x: Array.from({ length: N }, (_, j) => j),
          y: p.steps,
          text: hover,
          colorscale: plotlyScale("purples"),
          hovertemplate: "step %{y} · pos %{x} %{text}: %{z:.4f}<extra></extra>",
          colorbar: { thickness: 10 },
        },
        {
          type: "scatter",
          mode: "markers",
          x: ax,
          y: ay,
          name: "Attention Floating",
          marker: { symbol: "square-open", size: 7, color: "#ff7f0e", line: { width: 1.5 } },
          hovertemplate: "anchor: step %{y} pos %{x}<extra></extra>",
        },
      ],
      layout: {
        ...BASE_LAYOUT,
        title: { text: plotlyText(p.title ?? `Temporal drift · ${p.model} · layers ${p.layers.join(", ")}`), font: { size: 13 } },
        xaxis: { title: { text: "Token Position" } },
        yaxis: { title: { text: "Denoising Step" }, autorange: "reversed" },
        legend: { orientation: "h", y: 1.08, x: 1, xanchor: "right" },
        height: 420,
      },
    },
  ];
}

function tokenTypesFigure(p: TokenTypesSpec): Figure {
  const bands = p.bands.map((b) => plotlyText(`${b.band} (${b.layers[0]}–${b.layers[1]})`));
  return [
    {
      data: p.types.map((t, i) => ({
        type: "bar",
        name: plotlyText(t),
        x: bands,
        y: p.bands.map((b) => 100 * (b.shares[i] ?? 0)),
        marker: { color: PALETTE[i % PALETTE.length] },
        hovertemplate: `${plotlyText(t)}: %{y:.1f}%<extra></extra>`,
      })),
      layout: {
        ...BASE_LAYOUT,
        barmode: "stack",
        title: { text: plotlyText(p.title ?? `Floating-token types · ${p.model}`), font: { size: 13 } },
        xaxis: { title: { text: "Layer band" } },
        yaxis: { title: { text: "Share of floating tokens (%)" }, range: [0, 100] },
        height: 380,
      },
    },
  ];
}

function heatmapFigure(p: HeatmapSpec): Figure {
  if (!Array.isArray(p.values) || !Array.isArray(p.xLabels) || !Array.isArray(p.yLabels)) {
    throw new PayloadError("expected xLabels, yLabels and values", "values");
  }
  const scale = isColormap(p.colormap) ? plotlyScale(p.colormap) : plotlyScale("viridis");
  const x = p.xLabels.map((l, i) => `${i}:${plotlyText(l)}`);
  const y = p.yLabels.map((l, i) => `${i}:${plotlyText(l)}`);
  return [
    {
      data: [
        {
          type: "heatmap",
          z: p.values,
          x,
          y,
          zmin: p.domain?.[0],
          zmax: p.domain?.[1],
          colorscale: scale,
          hovertemplate: "%{y} × %{x}: %{z:.4f}<extra></extra>",
          colorbar: { thickness: 10, title: { text: plotlyText(p.valueLabel ?? "") } },
        },
      ],
      layout: {
        ...BASE_LAYOUT,
        title: { text: plotlyText(p.title + (p.subtitle ? ` — ${p.subtitle}` : "")), font: { size: 13 } },
        xaxis: {
          title: { text: plotlyText(p.xTitle ?? "") },
          type: "category",
          tickvals: x,
          ticktext: p.xLabels.map((l) => plotlyText(l)),
        },
        yaxis: {
          title: { text: plotlyText(p.yTitle ?? "") },
          type: "category",
          autorange: "reversed",
          tickvals: y,
          ticktext: p.yLabels.map((l) => plotlyText(l)),
        },
        height: Math.min(640, 140 + 18 * p.yLabels.length),
      },
    },
  ];
}

function figureOf(p: ChartPayload): Figure {
  switch (p.kind) {
    case "absorption":
      if (!Array.isArray(p.series)) throw new PayloadError("expected a list of series", "series");
      return absorptionFigure(p);
    case "retrieval":
      if (!Array.isArray(p.models)) throw new PayloadError("expected a list of models", "models");
      return retrievalFigure(p);
    case "rollout":
      if (!Array.isArray(p.regions)) throw new PayloadError("expected a list of region names", "regions");
      return rolloutFigure(p);
    case "distractor":
      if (!Array.isArray(p.series) || !Array.isArray(p.positions)) throw new PayloadError("expected positions and series", "series");
      return distractorFigure(p);
    case "drift":
      if (!p.heat || !Array.isArray(p.steps)) throw new PayloadError("expected heat and steps", "heat");
      return driftFigure(p);
    case "token-types":
      if (!Array.isArray(p.bands) || !Array.isArray(p.types)) throw new PayloadError("expected types and bands", "bands");
      return tokenTypesFigure(p);
    case "heatmap":
      return heatmapFigure(p);
    default:
      throw new PayloadError(`no chart for kind ${JSON.stringify((p as { kind?: string }).kind)}`, "kind");
  }
}

/** One or more plotly charts of a paper figure, with export buttons. */
export class ChartView {
  readonly root: HTMLElement;
  readonly divs: HTMLElement[] = [];

  private constructor(
    host: HTMLElement,
    private readonly payload: ChartPayload,
    private readonly plotly: PlotlyLike,
    figure: Figure,
  ) {
    const base = payload as { title?: string; subsampled?: never[]; warnings?: string[] };
    const { root, bar } = frame(base.title ?? "", describeSubsampling(base.subsampled ?? []), base.warnings);
    const layers = (payload as { layers?: unknown }).layers;
    const stem = exportStem({
      figure: payload.kind,
      models: modelsOf(payload),
      layer: Array.isArray(layers) ? (layers as number[]) : undefined,
    });
    bar.append(
      exportButtons(
        () => this.divs,
        () => stem,
        plotly,
      ),
    );
    const box = el("div", { className: "fs-chart-row" });
    for (let i = 0; i < figure.length; i++) {
      const d = el("div", { className: `fs-plot fs-${payload.kind}` });
      this.divs.push(d);
      box.appendChild(d);
    }
    root.appendChild(box);
    this.root = root;
    host.appendChild(root);
  }

  static async mount(host: HTMLElement, payload: ChartPayload): Promise<ChartView> {
    const figure = figureOf(payload); // validate before loading plotly
    const plotly = await loadPlotly();
    const v = new ChartView(host, payload, plotly, figure);
    await Promise.all(figure.map((f, i) => plotly.react(v.divs[i], f.data, f.layout, PLOT_CONFIG)));
    return v;
  }

  resize(): void {
    for (const d of this.divs) if (d.isConnected) this.plotly.Plots.resize(d);
  }

  dispose(): void {
    for (const d of this.divs) this.plotly.purge(d);
    this.root.remove();
    void this.payload;
  }
}
