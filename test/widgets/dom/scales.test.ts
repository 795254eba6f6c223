// @vitest-environment jsdom
/**
 * The scale rules both renderers compile (src/protocol/scales.ts), checked against hand-computed
 * values, and that the QK widget and the QK static image both take their colormap and domain from
 * that one rule; the absorption figure's paradigm line styles, round ticks and title/subtitle.
 */
import "./dom-setup.js";
import { describe, expect, it } from "vitest";
import { encodeArray, MIME_QK, type AbsorptionPayload, type QkPayload } from "../../../src/protocol/payloads.js";
import { colourScaleFor, niceTicks, qkColourScale } from "../../../src/protocol/scales.js";
import { payloadBundle } from "../../../src/figures/bundles.js";
import { colorAt } from "../../../src/figures/colormap.js";
import { useFakePlotly } from "./fake-plotly.js";
import { QkView } from "../../../widgets/src/figures/qk.js";
import { ChartView } from "../../../widgets/src/figures/charts.js";
import { plotlyScale } from "../../../widgets/src/colormap.js";

const calls = useFakePlotly();

describe("colour scale rule", () => {
  it("signed quantities: diverging map over ±max|v| (zero in the middle); others: sequential over [min, max]", () => {
    expect(colourScaleFor([-4, 1, 3, NaN], true)).toEqual({ colormap: "rdbu", domain: [-4, 4], diverging: true });
    expect(colourScaleFor([-0.1, 0.4], true).domain).toEqual([-0.4, 0.4]);
    expect(colourScaleFor([2, 5, Infinity], false)).toEqual({ colormap: "blues", domain: [2, 5], diverging: false });
    expect(colourScaleFor([], true).domain).toEqual([-1, 1]);
    expect(qkColourScale("score", [-2, 3]).domain).toEqual([-3, 3]);
    expect(qkColourScale("normProduct", [2, 3]).colormap).toBe("blues");
  });

  it("nice ticks are 1, 2 or 5 × 10^k apart", () => {
    expect(niceTicks(0, 18.4, 5)).toEqual([0, 5, 10, 15, 20]);
    expect(niceTicks(0, 0.37, 4)).toEqual([0, 0.1, 0.2, 0.3, 0.4]);
    expect(niceTicks(-4, 4, 4)).toEqual([-4, -2, 0, 2, 4]);
    expect(niceTicks(3, 97, 5, true)).toEqual([20, 40, 60, 80]);
  });
});

function qkPayload(): QkPayload {
  const n = 3;
  // score in [-4, 2.5]: ±4 expected; cos in [-0.2, 0.35]: ±0.35; norm in [1, 9]
  const score = [-4, 0.5, 2.5, 1, -1, 0, 2, 1, -3];
  const cos = [0.35, -0.2, 0.1, 0, 0.2, -0.1, 0.3, 0.05, -0.15];
  const norm = [1, 2, 3, 4, 5, 6, 7, 8, 9];
  const enc = (v: number[]) => encodeArray(v, [n, n], { dtype: "float32" });
  return {
    kind: "qk",
    version: 1,
    subsampled: [],
    model: "tiny-llada",
    tokens: ["a", "b", "c"],
    panels: [{ layer: 1, start: 0, score: enc(score), cos: enc(cos), normProduct: enc(norm), anchors: [0] }],
    summary: [],
  };
}

describe("QK: widget and static image use the same scale", () => {
  it("both take colormap and domain from qkColourScale: ±max|v| for score and cos θ, [min, max] for the norm", async () => {
    const p = qkPayload();
    const expected = { score: [-4, 4], cos: [-0.35, 0.35], normProduct: [1, 9] } as const;
    const keys = ["score", "cos", "normProduct"] as const;

    await QkView.mount(document.createElement("div"), p);
    const heat = calls.filter((c) => c.data[0].type === "heatmap").map((c) => c.data[0]);
    expect(heat).toHaveLength(3);
    keys.forEach((k, i) => {
      const scale = qkColourScale(
        k,
        new Float32Array(
          k === "score"
            ? [-4, 0.5, 2.5, 1, -1, 0, 2, 1, -3]
            : k === "cos"
              ? [0.35, -0.2, 0.1, 0, 0.2, -0.1, 0.3, 0.05, -0.15]
              : [1, 2, 3, 4, 5, 6, 7, 8, 9],
        ),
      );
      expect([heat[i].zmin, heat[i].zmax]).toEqual([expect.closeTo(expected[k][0], 6), expect.closeTo(expected[k][1], 6)]);
      expect([heat[i].zmin, heat[i].zmax]).toEqual(scale.domain);
      expect(heat[i].colorscale).toEqual(plotlyScale(scale.colormap));
    });
    expect(heat[0].colorscale[4]).toEqual([0.5, "#f7f7f7"]); // zero sits on the neutral middle

    const svg = payloadBundle(p)["image/svg+xml"] as string;
    expect(payloadBundle(p)[MIME_QK]).toBe(p);
    // one colour bar per panel, each with the same map and range as the widget's
    const bars = [...svg.matchAll(/<linearGradient id="fs-bar-(\d)"[^>]*>(.*?)<\/linearGradient>/g)];
    expect(bars.map((b) => b[1])).toEqual(["0", "1", "2"]);
    keys.forEach((k, i) => {
      const scale = qkColourScale(k, k === "normProduct" ? [1, 9] : expected[k]);
      const stops = [...bars[i][2].matchAll(/stop-color="(#[0-9a-f]{6})"/g)].map((m) => m[1]);
      expect(stops).toEqual(Array.from({ length: 9 }, (_, j) => colorAt(scale.colormap, 1 - j / 8)));
    });
    expect(svg).toContain(">-4<");
    expect(svg).toContain(">0.35<");
    expect(svg).toContain(">-0.35<");
  });
});

describe("absorption figure", () => {
  const p: AbsorptionPayload = {
    kind: "absorption",
    version: 1,
    subsampled: [],
    rule: "upstream: first-token; upstream: rulli-eps (ε=3, mean scale), fallback top-1",
    series: [
      { model: "llada", paradigm: "MDM", layers: [0, 1, 2], mean: [6.12, 12.2, 18.4], std: [0, 0, 0], samples: 4 },
      { model: "llama", paradigm: "ARM", layers: [0, 1, 2], mean: [3, 5, 7], std: [0, 0, 0], samples: 4 },
    ],
  };

  it("widget: MDMs dashed, ARMs solid, in their own colours; short title, the rules as subtitle lines", async () => {
    await ChartView.mount(document.createElement("div"), p);
    const lines = calls[0].data.filter((d) => d.mode === "lines+markers");
    expect(lines.map((d) => d.line.dash)).toEqual(["dash", "solid"]);
    expect(lines[0].line.color).not.toBe(lines[1].line.color);
    const title = calls[0].layout.title.text as string;
    expect(title.split("<br>")[0]).toBe("Absorption rate per layer");
    expect(title).toContain("rule: upstream: first-token");
    expect(title).toContain("rule: upstream: rulli-eps (ε=3, mean scale), fallback top-1");
  });

  it("static: the same dash rule, round y ticks, title and each rule on its own line", () => {
    const svg = payloadBundle(p)["image/svg+xml"] as string;
    const polylines = [...svg.matchAll(/<polyline[^>]*>/g)].map((m) => m[0]);
    expect(polylines).toHaveLength(2);
    expect(polylines[0]).toContain('stroke-dasharray="6 4"');
    expect(polylines[1]).not.toContain("stroke-dasharray");
    const ticks = [...svg.matchAll(/<text x="52" y="[\d.]+" text-anchor="end">([^<]+)<\/text>/g)].map((m) => Number(m[1]));
    expect(ticks).toEqual([0, 5, 10, 15, 20]);
    expect(svg).toContain(">Absorption rate per layer<");
    expect(svg).toContain(">rule: upstream: first-token<");
    expect(svg).toContain(">rule: upstream: rulli-eps (ε=3, mean scale), fallback top-1<");
  });
});
