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

/**
 * Why a model's map is all zero, in words. A head's score is its copy events over the evidence length,
 * averaged over the kept samples, so an all-zero map means exactly that no copy event happened: at no
 * generated token was any head's strongest key an evidence token equal to the token produced.
 */
export function allZeroNote(model: string, samples: number): string {
  return samples === 0
    ? `${model}: all values are 0: no sample was kept by the filter, so no head was scored`
    : `${model}: all values are 0: no copy event in its ${samples} scored sample${samples === 1 ? "" : "s"} ` +
        `(for no generated token was a head's strongest key an evidence token equal to that token)`;
}

export function retrievalFigure(p: RetrievalSpec): FigureDescription {
  const zero = p.models.filter((m) => m.scores.values.length > 0 && Array.from(m.scores.values).every((v) => Number(v) === 0));
  const panels: HeatPanel[] = p.models.map((m) => {
    const [L, H] = m.scores.shape;
    const layers = m.layers ?? Array.from({ length: L }, (_, l) => l);
    return {
      type: "heat",
      title: `${m.model} (n = ${m.samples})${zero.includes(m) ? " · all 0, see note" : ""}`,
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
    notes: zero.map((m) => allZeroNote(m.model, m.samples)),
    warnings: p.warnings,
    exportName: { models: p.models.map((m) => m.model) },
    text: `Retrieval heads — top head ${tops.join("; ")}`,
  });
}
