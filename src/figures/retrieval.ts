/**
 * Retrieval-head scores (paper Fig. 5): one layers × heads map per model on the fixed [0, 1]
 * YlOrRd scale of the paper, so models compare by colour.
 *
 * @example
 *   const { spec } = retrievalHeads(traces, { evidence });
 *   show(spec);
 */
import type { RetrievalSpec } from "../analysis/figure-data.js";
import type { FigureDescription, HeatPanel } from "../protocol/figure.js";
import { cells, describe } from "./describe.js";

export function retrievalFigure(p: RetrievalSpec): FigureDescription {
  const panels: HeatPanel[] = p.models.map((m) => {
    const [L, H] = m.scores.shape;
    const layers = m.layers ?? Array.from({ length: L }, (_, l) => l);
    return {
      type: "heat",
      title: `${m.model} (n = ${m.samples})`,
      rows: L,
      cols: H,
      values: cells(m.scores.values),
      scale: { colormap: "ylorrd", domain: [0, 1], diverging: false },
      valueLabel: "retrieval score",
      x: { title: "head", labels: Array.from({ length: H }, (_, h) => String(h)) },
      y: { title: "layer", labels: layers.map(String) },
    };
  });
  const tops = p.models.map((m) => {
    const v = m.scores.values;
    const H = m.scores.shape[1];
    let best = 0;
    for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
    return `${m.model}: layer ${(m.layers ?? [])[Math.floor(best / H)] ?? Math.floor(best / H)} head ${best % H} (${Number(v[best]).toFixed(3)})`;
  });
  return describe("retrieval", {
    title: "Retrieval heads",
    subtitle: [
      `score per (layer, head), ${p.normalisation}; samples kept: ${p.kept.map((k) => `${k.model} ${k.kept}/${k.total}`).join(", ")}`,
    ],
    panels,
    columns: 2,
    warnings: p.warnings,
    exportName: { models: p.models.map((m) => m.model) },
    text: `Retrieval heads — top head ${tops.join("; ")}`,
  });
}
