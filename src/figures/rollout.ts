/**
 * Region rollout R̄ (paper's rollout figure): from region (rows) × to region (columns), each cell
 * printed, on Blues from 0; the stationary vector in the subtitle.
 *
 * @example
 *   const { spec } = regionRollout(traces);
 *   show(spec);
 */
import type { RolloutSpec } from "../analysis/figure-data.js";
import type { FigureDescription } from "../protocol/figure.js";
import { cells, describe, extent } from "./describe.js";

export function rolloutFigure(p: RolloutSpec): FigureDescription {
  const R = p.regions.length;
  const values = cells(p.matrix.values);
  const [, hi] = extent(values);
  let top = 0;
  for (let c = 1; c < R; c++) if (Number(p.matrix.values[c]) > Number(p.matrix.values[top])) top = c;
  const pi = p.stationary.map((v, i) => `${p.regions[i]} ${v.toFixed(2)}`).join(", ");
  return describe("rollout", {
    title: `Region rollout · ${p.model}`,
    subtitle: [`${p.condition ? `${p.condition}; ` : ""}${p.layout} regions, n = ${p.samples}`, `stationary π: ${pi}`],
    panels: [
      {
        type: "heat",
        rows: R,
        cols: R,
        values,
        scale: { colormap: "blues", domain: [0, hi > 0 ? hi : 1], diverging: false },
        valueLabel: "rollout share R̄",
        x: { title: "to region", labels: p.regions },
        y: { title: "from region", labels: p.regions },
        cellText: true,
      },
    ],
    columns: 1,
    warnings: p.warnings,
    exportName: { models: [p.model] },
    text: `Region rollout — ${p.model}: ${R} regions, largest column ${JSON.stringify(p.regions[top])} (${Number(p.matrix.values[top]).toFixed(3)} from ${JSON.stringify(p.regions[0])})`,
  });
}
