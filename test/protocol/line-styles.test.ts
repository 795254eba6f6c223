/**
 * Paper-readiness of line figures: ARM and MDM lines differ in dash AND marker in every line figure,
 * and every line colour is legible on white (WCAG contrast ≥ 3:1 for graphics).
 */
import { describe, expect, it } from "vitest";
import { contrastOnWhite, LINE_COLOURS, paradigmOf, paradigmStyle } from "../../src/protocol/scales.js";
import { describeFigure } from "../../src/figures/registry.js";
import { FIGURE_INPUTS } from "../figures/figure-inputs.js";
import type { DistractorSpec } from "../../src/analysis/figure-data.js";

describe("contrastOnWhite", () => {
  it("hand-worked values", () => {
    // black: luminance 0 → 1.05 / 0.05 = 21; white: 1.05 / 1.05 = 1; #777777: sRGB 119/255 = 0.4667 →
    // ((0.4667 + 0.055) / 1.055)^2.4 = 0.1845 → 1.05 / 0.2345 = 4.48
    expect(contrastOnWhite("#000000")).toBeCloseTo(21, 6);
    expect(contrastOnWhite("#ffffff")).toBeCloseTo(1, 6);
    expect(contrastOnWhite("#777777")).toBeCloseTo(4.48, 2);
  });

  it("every model and palette colour is at least 3:1 on white (the old pale orange #fdcf9e was 1.44)", () => {
    expect(contrastOnWhite("#fdcf9e")).toBeLessThan(1.5);
    for (const c of LINE_COLOURS) expect([c, contrastOnWhite(c) >= 3]).toEqual([c, true]);
  });

  it("every line and legend line of every figure kind is at least 3:1 on white", () => {
    for (const input of Object.values(FIGURE_INPUTS)) {
      const d = describeFigure(input);
      const colours = [
        ...d.panels.flatMap((p) => (p.type === "lines" ? p.series.map((s) => s.colour) : [])),
        ...d.legend.filter((e) => e.mark === "line").map((e) => e.colour),
      ];
      for (const c of colours) expect([d.figure, c, contrastOnWhite(c) >= 3]).toEqual([d.figure, c, true]);
    }
  });
});

describe("ARM and MDM lines", () => {
  it("paradigm from the label or the model family", () => {
    expect(paradigmOf("tiny-llada")).toBe("mdm");
    expect(paradigmOf("smollm2-135m-dream-world")).toBe("mdm");
    expect(paradigmOf("smollm2-135m-causal-world")).toBe("arm");
    expect(paradigmOf("tiny-llama")).toBe("arm");
    expect(paradigmOf("my-model (MDM)")).toBe("mdm");
    expect(paradigmOf("ARM")).toBe("arm");
  });

  it("the k-th ARM and the k-th MDM share neither dash nor marker", () => {
    expect(paradigmStyle("arm", 0)).toEqual({ dash: undefined, marker: "circle" });
    expect(paradigmStyle("arm", 1)).toEqual({ dash: undefined, marker: "square" });
    expect(paradigmStyle("mdm", 0)).toEqual({ dash: "6 4", marker: "triangle" });
    expect(paradigmStyle("mdm", 1)).toEqual({ dash: "6 4", marker: "diamond" });
  });

  it("notebook 08's four tiny models (names only, no paradigm suffix): two styles, legend with markers", () => {
    const spec: DistractorSpec = {
      kind: "distractor",
      metric: "Accuracy (%)",
      positions: [0, 1],
      series: ["tiny-llama", "tiny-qwen", "tiny-llada", "tiny-dream"].map((model) => ({ model, values: [50, 40] })),
      warnings: [],
    };
    const d = describeFigure(spec);
    const p = d.panels[0];
    if (p.type !== "lines") throw new Error("expected lines");
    expect(p.series.map((s) => [s.name, s.dash ?? "solid", s.marker])).toEqual([
      ["tiny-llama", "solid", "circle"],
      ["tiny-qwen", "solid", "square"],
      ["tiny-llada", "6 4", "triangle"],
      ["tiny-dream", "6 4", "diamond"],
    ]);
    expect(d.legend.map((e) => e.marker)).toEqual(["circle", "square", "triangle", "diamond"]);
  });
});
