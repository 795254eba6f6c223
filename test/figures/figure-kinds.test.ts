/**
 * What every figure description must say, checked on the descriptions themselves (the drawing of
 * them is shared, see same-description.test.ts): paradigm line styles, short titles with the rule
 * as subtitle, round ticks, warnings, token labels thinned with the full text on hover, QK layers
 * together with their per-layer lines, JSON-safe output; and the registry: every kind with a
 * description has an input here (hence a pixel snapshot).
 */
import { describe, expect, it } from "vitest";
import { FIGURE_INPUTS } from "./figure-inputs.js";
import { describeFigure, FIGURE_KINDS, kindBundle } from "../../src/figures/registry.js";
import { drawFigure } from "../../src/protocol/draw.js";
import { heatmap } from "../../src/figures/heatmap.js";
import { MIME_FIGURE } from "../../src/protocol/payloads.js";
import type { LinePanel } from "../../src/protocol/figure.js";
import { qkDecomposition } from "../../src/analysis/qk-decomposition.js";
import { makeTrace, probe, probeMap } from "../analysis/make-trace.js";

describe("the registry", () => {
  it("every described kind has a test input (and so a pixel snapshot); the scrubber keeps its own bundle", () => {
    const described = Object.entries(FIGURE_KINDS)
      .filter(([k, e]) => "describe" in e && k !== "figure")
      .map(([k]) => k);
    expect(described.sort()).toEqual(Object.keys(FIGURE_INPUTS).sort());
    expect("bundle" in FIGURE_KINDS.scrubber).toBe(true);
  });

  it("descriptions are plain JSON (they cross to the widget as they are)", () => {
    for (const input of Object.values(FIGURE_INPUTS)) {
      const d = describeFigure(input);
      expect(JSON.parse(JSON.stringify(d))).toEqual(d);
    }
  });

  it("a saved description shows again as it is; a malformed one fails naming the field", () => {
    const d = describeFigure(FIGURE_INPUTS.rollout);
    expect(kindBundle(JSON.parse(JSON.stringify(d)))[MIME_FIGURE]).toEqual(d);
    expect(() => kindBundle({ ...d, panels: [{ type: "heat", rows: 2, cols: 2, values: [1] }] } as never)).toThrow(/panels\[0\]\.values/);
  });
});

describe("absorption", () => {
  const d = describeFigure(FIGURE_INPUTS.absorption);
  const p = d.panels[0] as LinePanel;
  it("ARMs solid, MDMs dashed, each model its own colour and marker; a legend entry per line", () => {
    expect(p.series.map((s) => s.dash)).toEqual([undefined, "6 4"]);
    expect(new Set(p.series.map((s) => s.colour)).size).toBe(2);
    expect(new Set(p.series.map((s) => s.marker)).size).toBe(2);
    expect(d.legend.map((e) => [e.label, e.dash])).toEqual([
      ["tiny-llama (ARM)", undefined],
      ["tiny-llada (MDM)", "6 4"],
    ]);
  });
  it("a short title; each rule on its own subtitle line; round y ticks; the warning carried into the image", () => {
    expect(d.title).toBe("Absorption rate per layer");
    expect(d.subtitle.slice(0, 2)).toEqual(["rule: upstream: first-token", "rule: upstream: rulli-eps (ε=3, mean scale), fallback top-1"]);
    expect(p.y.ticks).toEqual([0, 20, 40, 60, 80, 100]);
    expect(p.x.ticks).toEqual([0, 1, 2, 3, 4, 5]);
    const svg = drawFigure(d);
    expect(svg).toContain("tiny-llada: run stopped at step 6 of 8");
    expect(svg).toContain(">rule: upstream: rulli-eps (ε=3, mean scale), fallback top-1<");
  });
});

describe("QK", () => {
  it("the chosen layers in one figure (three maps each) and the per-layer angle/norm lines across them", () => {
    const d = describeFigure(FIGURE_INPUTS.qk);
    expect(d.panels.map((p) => p.type)).toEqual(["heat", "heat", "heat", "heat", "heat", "heat", "lines", "lines"]);
    expect(d.panels.slice(0, 6).map((p) => p.title)).toEqual([
      "layer 1 · score q·k",
      "layer 1 · cos θ",
      "layer 1 · ‖q‖·‖k‖",
      "layer 4 · score q·k",
      "layer 4 · cos θ",
      "layer 4 · ‖q‖·‖k‖",
    ]);
    const lines = d.panels[6] as LinePanel;
    expect(lines.series.map((s) => s.name)).toEqual(["angle part (cos θ)", "norm part (‖q‖‖k‖)", "total advantage"]);
    expect(lines.series[0].x).toEqual([1, 4]);
    expect(lines.series[0].y).toEqual([2.2, 1.4]);
    expect(d.exportName).toMatchObject({ figure: "qk", models: ["tiny-llada"], layer: [1, 4] });
  });

  it("from the analysis: qkDecomposition over two layers → one figure with both layers (no encoding step)", () => {
    const T = 4;
    const tr = makeTrace({
      model: { numHeads: 1, numKvHeads: 1, headDim: 1, numLayers: 2 },
      sequence: [10, 11, 12, 13],
      finalProbes: probeMap(
        ...[0, 1].flatMap((l) => [
          probe(l, "q_rot", [1, T, 1], [1, 2, 3, 4]),
          probe(l, "k_rot", [1, T, 1], [4, 1, 1, 1]),
          probe(l, "received", [T], [0.7, 0.1, 0.1, 0.1]),
        ]),
      ),
    });
    const { spec } = qkDecomposition(tr, { layers: [0, 1] });
    expect(spec.panels[0].score.values).toBeInstanceOf(Float64Array); // full precision, not base64
    const svg = kindBundle(spec)["image/svg+xml"] as string;
    expect(svg).toContain("layer 0 · score q·k");
    expect(svg).toContain("layer 1 · cos θ");
    expect(svg).toContain("score advantage of floating keys, by layer");
  });
});

describe("token labels", () => {
  it("thinned to fit, each drawn label short, its full text on hover", () => {
    const tokens = Array.from({ length: 200 }, (_, i) => `token_number_${i}`);
    const svg = drawFigure(describeFigure(heatmap({ title: "t", xLabels: tokens, yLabels: ["0"], values: [tokens.map((_, i) => i)] })));
    const drawn = [...svg.matchAll(/<text[^>]*><title>(token_number_\d+)<\/title>([^<]*)<\/text>/g)];
    expect(drawn.length).toBeGreaterThan(10);
    expect(drawn.length).toBeLessThan(200);
    for (const m of drawn) {
      expect(Array.from(m[2]).length).toBeLessThanOrEqual(10);
      expect(m[1].startsWith(m[2].replace("…", ""))).toBe(true);
    }
  });
});
