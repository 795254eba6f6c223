/**
 * QK decomposition view (paper §3, analysis C): for a chosen layer/head, three heatmaps —
 * the raw score q·k, cos θ and the norm product ‖q‖‖k‖ — with floating key positions marked
 * by red triangles under the x axis, and the per-layer summary (cos and norm product at
 * floating columns vs other columns) that answers "angle or norm?".
 */
import { el } from "../dom.js";
import { decodeArray, describeSubsampling, exportStem, PayloadError, qkColourScale, type QkPanel, type QkPayload } from "../protocol.js";
import { plotlyScale } from "../colormap.js";
import { BASE_LAYOUT, exportButtons, frame, loadPlotly, PLOT_CONFIG, plotlyText, rows, type PlotlyLike } from "./plotly.js";

const PARTS: { key: "score" | "cos" | "normProduct"; title: string }[] = [
  { key: "score", title: "QK score (q·k)" },
  { key: "cos", title: "cos θ" },
  { key: "normProduct", title: "norm product ‖q‖·‖k‖" },
];

function panelLabel(p: QkPanel): string {
  return `layer ${p.layer} · ${p.head === undefined ? "mean over heads" : `head ${p.head}`}`;
}

export class QkView {
  readonly root: HTMLElement;
  readonly heatmapDivs: HTMLElement[];
  readonly summaryDiv: HTMLElement;
  private readonly select: HTMLSelectElement;
  private panelIndex = 0;

  private constructor(
    host: HTMLElement,
    private readonly payload: QkPayload,
    private readonly plotly: PlotlyLike,
  ) {
    if (payload.kind !== "qk" || !Array.isArray(payload.panels) || payload.panels.length === 0) {
      throw new PayloadError('expected kind "qk" with at least one panel', "panels");
    }
    const { root, bar } = frame(
      payload.title ?? `QK decomposition · ${payload.model}`,
      describeSubsampling(payload.subsampled ?? []),
      payload.warnings,
    );
    this.select = el("select", { className: "fs-select" });
    this.select.setAttribute("aria-label", "layer and head");
    payload.panels.forEach((p, i) => {
      const o = el("option", { text: panelLabel(p) });
      o.value = String(i);
      this.select.appendChild(o);
    });
    this.select.addEventListener("change", () => void this.show(Number(this.select.value)));
    this.heatmapDivs = PARTS.map(() => el("div", { className: "fs-plot fs-qk-heatmap" }));
    this.summaryDiv = el("div", { className: "fs-plot fs-qk-summary" });
    bar.append(
      el("label", { className: "fs-slider" }, [el("span", { text: "panel" }), this.select]),
      exportButtons(
        () => [...this.heatmapDivs, this.summaryDiv],
        () => {
          const p = payload.panels[this.panelIndex];
          return exportStem({ figure: "qk", models: [payload.model], layer: p.layer, head: p.head });
        },
        plotly,
      ),
    );
    root.append(el("div", { className: "fs-qk-row" }, this.heatmapDivs), this.summaryDiv);
    this.root = root;
    host.appendChild(root);
  }

  static async mount(host: HTMLElement, payload: QkPayload): Promise<QkView> {
    const plotly = await loadPlotly();
    const v = new QkView(host, payload, plotly);
    await v.show(0);
    await v.drawSummary();
    return v;
  }

  /** Draw the three heatmaps of panel `i`. */
  async show(i: number): Promise<void> {
    const p = this.payload.panels[i];
    this.panelIndex = i;
    this.select.value = String(i);
    const n = p.score.shape[0];
    const m = p.score.shape[1];
    const keys = Array.from({ length: m }, (_, j) => p.start + j);
    const queries = Array.from({ length: n }, (_, j) => p.start + j);
    const tok = (pos: number) => plotlyText(this.payload.tokens[pos - p.start] ?? "");
    // Hover text per cell: "query 12 'tok' → key 45 'tok'".
    const hover: string[][] = queries.map((q) => keys.map((k) => `q ${q} ${tok(q)} → k ${k} ${tok(k)}`));
    await Promise.all(
      PARTS.map((part, idx) => {
        const values = decodeArray(p[part.key], `panels[${i}].${part.key}`);
        const z = rows(values, n, m);
        // The same scale rule as the static image (protocol/scales.ts): score and cos θ diverge around 0.
        const scale = qkColourScale(part.key, values);
        const heat = {
          type: "heatmap",
          x: keys,
          y: queries,
          z,
          text: hover,
          hovertemplate: "%{text}<br>%{z:.4f}<extra></extra>",
          colorscale: plotlyScale(scale.colormap),
          zmin: scale.domain[0],
          zmax: scale.domain[1],
          colorbar: { thickness: 10 },
        };
        // Notebooks saved before the field was renamed carry it as `floating` (same meaning): still drawn.
        const anchors = p.anchors ?? (p as { floating?: number[] }).floating ?? [];
        const marks = {
          type: "scatter",
          mode: "markers",
          x: anchors,
          y: anchors.map(() => queries[queries.length - 1] + 1.2),
          marker: { symbol: "triangle-up", size: 11, color: "red", line: { color: "darkred", width: 1.5 } },
          cliponaxis: false,
          name: "floating position",
          hovertemplate: "floating position %{x}<extra></extra>",
          showlegend: false,
        };
        const layout = {
          ...BASE_LAYOUT,
          title: { text: `${part.title} · ${panelLabel(p)}`, font: { size: 13 } },
          xaxis: { title: { text: "Key Position" }, constrain: "domain" },
          yaxis: { title: { text: "Query Position" }, autorange: "reversed" },
          width: 380,
          height: 360,
          margin: { l: 56, r: 10, t: 36, b: 56 },
        };
        return this.plotly.react(this.heatmapDivs[idx], [heat, marks], layout, PLOT_CONFIG);
      }),
    );
  }

  /** Per-layer angle-vs-norm summary: floating columns against all other columns. */
  async drawSummary(): Promise<void> {
    const s = this.payload.summary ?? [];
    if (s.length === 0) {
      this.summaryDiv.textContent = "no per-layer summary in this payload";
      return;
    }
    const layers = s.map((r) => r.layer);
    const line = (y: number[], name: string, color: string, dash: string, axis: "y" | "y2") => ({
      type: "scatter",
      mode: "lines+markers",
      x: layers,
      y,
      name,
      yaxis: axis,
      line: { color, dash, width: 2 },
    });
    const data = [
      line(
        s.map((r) => r.cosFloating),
        "cos θ · floating",
        "#d62728",
        "solid",
        "y",
      ),
      line(
        s.map((r) => r.cosOther),
        "cos θ · other",
        "#d62728",
        "dot",
        "y",
      ),
      line(
        s.map((r) => r.normFloating),
        "‖q‖‖k‖ · floating",
        "#1f77b4",
        "solid",
        "y2",
      ),
      line(
        s.map((r) => r.normOther),
        "‖q‖‖k‖ · other",
        "#1f77b4",
        "dot",
        "y2",
      ),
    ];
    const layout = {
      ...BASE_LAYOUT,
      title: { text: "angle vs norm per layer (floating columns vs the rest)", font: { size: 13 } },
      xaxis: { title: { text: "Layer Index" } },
      yaxis: { title: { text: "mean cos θ" } },
      yaxis2: { title: { text: "mean ‖q‖·‖k‖" }, overlaying: "y", side: "right" },
      legend: { orientation: "h", y: -0.25 },
      height: 320,
      margin: { l: 60, r: 60, t: 36, b: 80 },
    };
    await this.plotly.react(this.summaryDiv, data, layout, PLOT_CONFIG);
  }

  resize(): void {
    for (const d of [...this.heatmapDivs, this.summaryDiv]) {
      if (d.isConnected) this.plotly.Plots.resize(d);
    }
  }

  dispose(): void {
    for (const d of [...this.heatmapDivs, this.summaryDiv]) this.plotly.purge(d);
    this.root.remove();
  }
}
