/** An all-zero retrieval map says why (notebook 04's tiny-llada map). */
import { describe, expect, it } from "vitest";
import { describeFigure } from "../../src/figures/registry.js";
import { drawFigure } from "../../src/protocol/draw.js";
import type { RetrievalSpec } from "../../src/analysis/figure-data.js";

const spec = (values: number[], samples: number): RetrievalSpec => ({
  kind: "retrieval",
  models: [
    { model: "tiny-llada", layers: [0, 1], scores: { shape: [2, 2], values: new Float64Array(values) }, samples },
    { model: "tiny-dream", layers: [0, 1], scores: { shape: [2, 2], values: new Float64Array([0, 0.071, 0, 0]) }, samples: 14 },
  ],
  normalisation: "raw",
  kept: [
    { model: "tiny-llada", kept: samples, total: 24 },
    { model: "tiny-dream", kept: 14, total: 24 },
  ],
  warnings: [],
});

describe("retrieval figure: all-zero panels", () => {
  it("names the model, says all values are 0 and why, in the drawn image", () => {
    const d = describeFigure(spec([0, 0, 0, 0], 6));
    expect(d.notes).toEqual([
      "tiny-llada: all values are 0: no copy event in its 6 scored samples " +
        "(for no generated token was a head's strongest key an evidence token equal to that token)",
    ]);
    expect(d.panels.map((p) => p.title)).toEqual(["tiny-llada (n = 6) · all 0, see note", "tiny-dream (n = 14)"]);
    expect(drawFigure(d, { width: 1400 })).toContain("tiny-llada: all values are 0: no copy event in its 6 scored samples");
  });
  it("no sample kept: says so instead", () => {
    expect(describeFigure(spec([0, 0, 0, 0], 0)).notes[0]).toBe(
      "tiny-llada: all values are 0: no sample was kept by the filter, so no head was scored",
    );
  });
  it("a map with any non-zero score gets no note", () => {
    expect(describeFigure(spec([0, 0.2, 0, 0], 6)).notes).toEqual([]);
  });
});
