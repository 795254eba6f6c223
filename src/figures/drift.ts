/**
 * Temporal drift (paper's temporal figure): attention received per key position (columns, token
 * labelled) at each denoising step (rows), Purples like the paper, floating anchors filled orange,
 * positions a step did not have in grey.
 *
 * @example
 *   const { spec } = temporalDrift(trace, { layers: [31] });
 *   show(spec);
 */
import type { DriftSpec } from "../analysis/figure-data.js";
import type { FigureDescription } from "../protocol/figure.js";
import { displayTokens } from "../protocol/token-text.js";
import { cells, describe, extent } from "./describe.js";

const ANCHOR = "#ff7f0e";

export function driftFigure(p: DriftSpec): FigureDescription {
  const [S, N] = p.heat.shape;
  const values = cells(p.heat.values);
  const anchorCells: number[] = [];
  for (let i = 0; i < S * N; i++) if (Number(p.anchors.values[i]) > 0.5) anchorCells.push(i);
  const [, hi] = extent(values);
  const words = displayTokens(p.tokens);
  const layers = `layer${p.layers.length > 1 ? "s" : ""} ${p.layers.join(", ")}`;
  return describe("drift", {
    title: `Temporal drift · ${p.model} · ${layers}`,
    subtitle: [`anchor rule: ${p.rule}`],
    panels: [
      {
        type: "heat",
        rows: S,
        cols: N,
        values,
        scale: { colormap: "purples", domain: [0, hi > 0 ? hi : 1], diverging: false },
        valueLabel: "attention received",
        x: { title: "key position (token)", labels: Array.from({ length: N }, (_, j) => words[j] ?? String(j)) },
        y: { title: "denoising step", labels: p.steps.map(String) },
        cellMarks: { cells: anchorCells, colour: ANCHOR },
      },
    ],
    columns: 1,
    legend: [
      { label: "floating anchor", colour: ANCHOR, mark: "swatch" },
      { label: "position absent at that step", colour: "#e6e6e6", mark: "swatch" },
    ],
    warnings: p.warnings,
    exportName: { models: [p.model], layer: p.layers },
    text: `Temporal drift — ${p.model}, ${layers}: ${S} steps × ${N} positions, ${anchorCells.length} anchor cells, ${p.tracks.length} anchor tracks`,
  });
}
