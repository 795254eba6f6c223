/**
 * Absorption rate per layer (paper Fig. 3): one line per model, mean ± std over samples, ARMs
 * solid and MDMs dashed besides each model's colour.
 *
 * @example
 *   const { spec } = absorptionRate([llada, llama], { rule: "upstream" });
 *   show(spec);                    // widget in JupyterLab, the same SVG on GitHub
 *   save(spec, "fig3.svg");        // or .png (2× by default)
 */
import type { AbsorptionSpec } from "../analysis/figure-data.js";
import type { FigureDescription, LegendEntry, LineSeries } from "../protocol/figure.js";
import { absorptionTitles, modelColour, paradigmOf } from "../protocol/scales.js";
import { describe, paradigmStyles, positionAxis, valueAxis } from "./describe.js";

export function absorptionFigure(p: AbsorptionSpec): FigureDescription {
  const { title, subtitle } = absorptionTitles(p);
  const styles = paradigmStyles(p.series.map((s) => paradigmOf(s.paradigm)));
  const series: LineSeries[] = p.series.map((s, i) => ({
    name: `${s.model} (${s.paradigm})`,
    colour: modelColour(s.model, i),
    ...styles[i],
    x: s.layers,
    y: s.mean,
    lo: s.mean.map((m, k) => m - (s.std[k] ?? 0)),
    hi: s.mean.map((m, k) => m + (s.std[k] ?? 0)),
  }));
  const legend: LegendEntry[] = series.map((s) => ({ label: s.name, colour: s.colour, mark: "line", dash: s.dash, marker: s.marker }));
  const all = series.flatMap((s) => [...s.y, ...(s.hi ?? [])]);
  const peaks = p.series.map((s) => `${s.model} max ${Math.max(...s.mean).toFixed(1)}%`).join(", ");
  return describe("absorption", {
    title,
    subtitle: [...subtitle, `n = ${p.series.map((s) => `${s.samples} (${s.model})`).join(", ")} samples`],
    panels: [
      {
        type: "lines",
        x: positionAxis("Layer index", [...new Set(p.series.flatMap((s) => s.layers))]),
        y: valueAxis("Absorption rate (%)", all),
        series,
      },
    ],
    legend,
    notes: ["shaded band: ± 1 std over samples; ARMs solid with ● ■ markers, MDMs dashed with ▲ ◆"],
    warnings: p.warnings,
    exportName: { models: p.series.map((s) => s.model) },
    text: `Absorption rate per layer (${p.rule}) — ${peaks}`,
  });
}
