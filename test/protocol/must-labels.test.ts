/** Anchor columns are always labelled, whatever the thinning. */
import { describe, expect, it } from "vitest";
import { thinLabels } from "../../src/protocol/axis-labels.js";
import { drawFigure, markedColumns } from "../../src/protocol/draw.js";
import type { FigureDescription, HeatPanel } from "../../src/protocol/figure.js";
import { describeFigure } from "../../src/figures/registry.js";
import type { DriftSpec } from "../../src/analysis/figure-data.js";

describe("thinLabels with must-label positions", () => {
  it("keeps the forced label and drops regular ones closer than a stride", () => {
    // 20 cells on 100 px, 20 px per label → stride ceil(20·20/100) = 4: 0 4 8 12 16; 7 is forced,
    // 4 and 8 are within 4 of it and dropped, 12 (5 away) stays.
    expect(thinLabels(20, 100, 20, [7])).toEqual([0, 7, 12, 16]);
    expect(thinLabels(20, 100, 20)).toEqual([0, 4, 8, 12, 16]);
    // two forced labels, out-of-range ones ignored
    expect(thinLabels(20, 100, 20, [1, 18, 25, -1])).toEqual([1, 8, 12, 18]);
  });
});

function panel(cols: number, extra: Partial<HeatPanel>): FigureDescription {
  return {
    kind: "figure",
    version: 1,
    figure: "heatmap",
    title: "t",
    subtitle: [],
    panels: [
      {
        type: "heat",
        rows: 2,
        cols,
        values: Array.from({ length: 2 * cols }, (_, i) => i),
        scale: { colormap: "blues", domain: [0, 2 * cols], diverging: false },
        valueLabel: "v",
        x: { title: "key", labels: Array.from({ length: cols }, (_, j) => `w${j}`) },
        y: { title: "step", labels: ["0", "1"] },
        ...extra,
      },
    ],
    columns: 1,
    legend: [],
    notes: [],
    warnings: [],
    exportName: { figure: "heatmap" },
    text: "",
  };
}

const xLabels = (svg: string) => [...svg.split('class="fs-xlabels"')[1].matchAll(/<title>([^<]*)<\/title>/g)].map((m) => m[1]);

describe("drawn heat panels", () => {
  it("an anchor cell's column is labelled (bold) although the stride skips it", () => {
    // 120 columns at width 720 are thinned (every few-th); column 61 is not on the stride
    const plain = xLabels(drawFigure(panel(120, {})));
    expect(plain).not.toContain("w61");
    const d = panel(120, { cellMarks: { cells: [120 + 61], colour: "#ff7f0e" } });
    expect(markedColumns(d.panels[0] as HeatPanel)).toEqual([61]);
    const svg = drawFigure(d);
    expect(xLabels(svg)).toContain("w61");
    expect(svg).toMatch(/font-weight="600" class="fs-must"><title>w61<\/title>/);
  });

  it("floating keys (column marks) are labelled", () => {
    const svg = drawFigure(panel(120, { columnMarks: { columns: [3, 97], colour: "#d62728" } }));
    expect(xLabels(svg)).toEqual(expect.arrayContaining(["w3", "w97"]));
  });

  it("a drift figure of byte-level tokens shows no Ġ/Ċ and labels every anchor column", () => {
    const N = 90;
    const tokens = Array.from({ length: N }, (_, j) => (j % 10 === 9 ? "Ċ" : `Ġw${j}`));
    const anchors = new Float64Array(3 * N);
    anchors[0 * N + 37] = 1;
    anchors[2 * N + 53] = 1;
    const spec = {
      kind: "drift",
      model: "m",
      layers: [5],
      rule: "r",
      steps: [0, 1, 2],
      tokens,
      heat: { shape: [3, N], values: new Float64Array(3 * N).fill(0.5) },
      anchors: { shape: [3, N], values: anchors },
      tracks: [],
      warnings: [],
    } as unknown as DriftSpec;
    const svg = drawFigure(describeFigure(spec));
    expect(svg).not.toMatch(/[ĠĊ]/);
    expect(xLabels(svg)).toEqual(expect.arrayContaining(["·w37", "·w53"]));
    expect(svg).toContain("key position (token) ↵"); // a cell's hover text
  });
});
