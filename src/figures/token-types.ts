/**
 * Floating-token types per layer band (RQ2): stacked shares (%) of each type in each band.
 *
 * @example
 *   const { spec } = floatingTokenTypes(traces);
 *   show(spec);
 */
import type { TokenTypesSpec } from "../analysis/figure-data.js";
import type { FigureDescription } from "../protocol/figure.js";
import { niceTicks } from "../protocol/scales.js";
import { describe } from "./describe.js";

const TYPE_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];

export function tokenTypesFigure(p: TokenTypesSpec): FigureDescription {
  const stacks = p.types.map((t, i) => ({
    name: t,
    colour: TYPE_COLOURS[i % TYPE_COLOURS.length],
    values: p.bands.map((b) => 100 * (b.shares[i] ?? 0)),
  }));
  return describe("token-types", {
    title: `Floating-token types · ${p.model}`,
    subtitle: [`share of the floating tokens of each layer band; tokens counted: ${p.bands.map((b) => `${b.band} ${b.count}`).join(", ")}`],
    panels: [
      {
        type: "bars",
        x: { title: "layer band", labels: p.bands.map((b) => `${b.band} (${b.layers[0]}–${b.layers[1]})`) },
        y: { title: "share of floating tokens (%)", domain: [0, 100], ticks: niceTicks(0, 100, 5) },
        stacks,
      },
    ],
    columns: 1,
    legend: stacks.map((s) => ({ label: s.name, colour: s.colour, mark: "swatch" as const })),
    warnings: p.warnings,
    exportName: { models: [p.model] },
    text: `Floating-token types — ${p.model}: ${p.types.join(", ")} over ${p.bands.length} layer bands`,
  });
}
