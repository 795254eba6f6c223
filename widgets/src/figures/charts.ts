/**
 * Interactive versions of the paper's summary figures:
 * - absorption rate per layer, mean ± std bands over samples, one line per model (§6);
 * - retrieval-head scores, layers × heads, one heatmap per model, colour range [0, 1] (§8);
 * - region rollout R̄ (from region × to region), Blues (§9);
 * - distractor sweep: a metric against the gold document's position, one line per model.
 */
import { el } from "../dom.js";
import {
  decodeArray,
  describeSubsampling,
  PayloadError,
  type AbsorptionPayload,
  type DistractorPayload,
  type FloatscopePayload,
  type RetrievalPayload,
  type RolloutPayload,
} from "../protocol.js";
import { plotlyScale } from "../colormap.js";
import { BASE_LAYOUT, exportButtons, frame, loadPlotly, PLOT_CONFIG, plotlyText, rows, type PlotlyLike } from "./plotly.js";

/** Model colours of the paper's absorption figure, then a fallback palette. */
const MODEL_COLORS: [RegExp, string][] = [
  [/llama/i, "rgb(78,101,155)"],
  [/qwen/i, "rgb(184,168,207)"],
  [/llada/i, "rgb(253,207,158)"],
  [/dream/i, "rgb(182,118,108)"],
];
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];

export function modelColor(name: string, i: number): string {
  for (const [re, c] of MODEL_COLORS) if (re.test(name)) return c;
  return PALETTE[i % PALETTE.length];
}

function withAlpha(color: string, a: number): string {
  if (color.startsWith("rgb(")) return color.replace("rgb(", "rgba(").replace(")", `,${a})`);
  const n = parseInt(color.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

const MARKERS = ["circle", "triangle-up", "square", "diamond", "cross", "x"];

type Figure = { data: object[]; layout: object }[];

function absorptionFigure(p: AbsorptionPayload): Figure {
  const data: object[] = [];
  p.series.forEach((s, i) => {
    const c = modelColor(s.model, i);
    const name = plotlyText(`${s.model} (${s.paradigm})`);
    const hi = s.mean.map((m, k) => m + (s.std[k] ?? 0));
    const lo = s.mean.map((m, k) => m - (s.std[k] ?? 0));
    data.push({ type: "scatter", x: s.layers, y: hi, mode: "lines", line: { width: 0 }, hoverinfo: "skip", showlegend: false, legendgroup: name });
    data.push({ type: "scatter", x: s.layers, y: lo, mode: "lines", line: { width: 0 }, fill: "tonexty", fillcolor: withAlpha(c, 0.2), hoverinfo: "skip", showlegend: false, legendgroup: name });
    data.push({
      type: "scatter",
      x: s.layers,
      y: s.mean,
      mode: "lines+markers",
      name,
      legendgroup: name,
      line: { color: c, width: 2 },
      marker: { symbol: MARKERS[i % MARKERS.length], size: 6, color: c },
      customdata: s.std,
      hovertemplate: `${name}<br>layer %{x}: %{y:.1f}% ± %{customdata:.1f} (n=${s.samples})<extra></extra>`,
    });
  });
  return [
    {
      data,
      layout: {
        ...BASE_LAYOUT,
        title: { text: plotlyText(p.title ?? `Absorption rate per layer · rule: ${p.rule}`), font: { size: 13 } },
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
        title: { text: plotlyText(p.title ?? `Region rollout · ${p.model}${p.condition ? ` · ${p.condition}` : ""} (n=${p.samples})`), font: { size: 13 } },
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
    const c = modelColor(s.model, i);
    const name = plotlyText(s.model);
    if (s.lo && s.hi) {
      data.push({ type: "scatter", x: p.positions, y: s.hi, mode: "lines", line: { width: 0 }, hoverinfo: "skip", showlegend: false, legendgroup: name });
      data.push({ type: "scatter", x: p.positions, y: s.lo, mode: "lines", line: { width: 0 }, fill: "tonexty", fillcolor: withAlpha(c, 0.2), hoverinfo: "skip", showlegend: false, legendgroup: name });
    }
    data.push({ type: "scatter", x: p.positions, y: s.values, mode: "lines+markers", name, legendgroup: name, line: { color: c, width: 2 }, marker: { symbol: MARKERS[i % MARKERS.length], size: 7 } });
  });
  return [
    {
      data,
      layout: {
        ...BASE_LAYOUT,
        title: { text: plotlyText(p.title ?? `${p.metric} vs gold document position`), font: { size: 13 } },
        xaxis: { title: { text: "Gold document position (1-based)" }, dtick: 1, gridcolor: "#eee" },
        yaxis: { title: { text: plotlyText(p.metric) }, gridcolor: "#eee" },
        height: 400,
      },
    },
  ];
}

function figureOf(p: FloatscopePayload): Figure {
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
    private readonly payload: FloatscopePayload,
    private readonly plotly: PlotlyLike,
    figure: Figure,
  ) {
    const { root, bar } = frame(payload.title ?? "", describeSubsampling(payload.subsampled ?? []), payload.warnings);
    bar.append(exportButtons(() => this.divs, () => `floatscope_${payload.kind}`, plotly));
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

  static async mount(host: HTMLElement, payload: FloatscopePayload): Promise<ChartView> {
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
