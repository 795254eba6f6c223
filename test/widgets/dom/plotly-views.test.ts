// @vitest-environment jsdom
import "./dom-setup.js";
import { describe, expect, it } from "vitest";
import { encodeArray, MIME_QK, type QkPayload } from "../../../src/protocol/payloads.js";
import { FLOATSCOPE_MIME } from "../../../src/display/mime.js";
import { MIME_DRIFT } from "../../../src/protocol/specs.js";
import { useFakePlotly } from "./fake-plotly.js";
import { QkView } from "../../../widgets/src/figures/qk.js";
import { ChartView } from "../../../widgets/src/figures/charts.js";
import { MIME_HEATMAP } from "../../../widgets/src/protocol.js";
import extensions from "../../../widgets/src/index.js";

const calls = useFakePlotly();

function qkPayload(): QkPayload {
  const n = 4;
  const score = Array.from({ length: n * n }, (_, i) => (i % n > Math.floor(i / n) ? NaN : i / 10));
  const enc = (v: number[]) => encodeArray(v, [n, n], { dtype: "float16" });
  return {
    kind: "qk",
    version: 1,
    subsampled: [],
    model: "tiny-llama",
    tokens: ["<s>", "<b>bold</b>", "a", "b"],
    panels: [
      { layer: 1, start: 0, score: enc(score), cos: enc(score.map((x) => x / 2)), normProduct: enc(score.map((x) => x * 2)), anchors: [0] },
      { layer: 5, head: 2, start: 0, score: enc(score), cos: enc(score), normProduct: enc(score), anchors: [1, 2] },
    ],
    summary: [
      { layer: 1, cosFloating: 0.5, cosOther: 0.1, normFloating: 8, normOther: 5 },
      { layer: 5, cosFloating: 0.4, cosOther: 0.2, normFloating: 6, normOther: 6 },
    ],
  };
}

describe("QK view", () => {
  it("draws three heatmaps (score, cos, norm product) with floating positions marked, and the summary", async () => {
    const host = document.createElement("div");
    const v = await QkView.mount(host, qkPayload());
    const heat = calls.filter((c) => c.data[0].type === "heatmap");
    expect(heat).toHaveLength(3);
    expect(new Set(heat.map((c) => c.div)).size).toBe(3);
    expect(heat.map((c) => (c.layout.title as { text: string }).text)).toEqual([
      "QK score (q·k) · layer 1 · mean over heads",
      "cos θ · layer 1 · mean over heads",
      "norm product ‖q‖·‖k‖ · layer 1 · mean over heads",
    ]);
    // causal mask → null cells (gaps), floating triangles at key 0
    const z = heat[0].data[0].z as (number | null)[][];
    expect(z[0][1]).toBeNull();
    expect(z[1][0]).toBeCloseTo(0.4, 2);
    expect(heat[0].data[1].x).toEqual([0]);
    // token markup is entity-escaped before plotly sees it
    const hover = heat[0].data[0].text as string[][];
    expect(hover[1][1]).toContain("&lt;b&gt;bold&lt;/b&gt;");
    expect(hover.flat().some((t) => t.includes("<b>"))).toBe(false);
    const summary = calls.find((c) => c.div === v.summaryDiv)!;
    expect(summary.data).toHaveLength(4);
    // choosing the second panel redraws all three
    calls.length = 0;
    const select = host.querySelector("select") as HTMLSelectElement;
    select.value = "1";
    select.dispatchEvent(new Event("change"));
    await new Promise((r) => setTimeout(r, 0));
    expect(calls.filter((c) => c.data[0].type === "heatmap").map((c) => (c.layout.title as { text: string }).text)[0]).toBe(
      "QK score (q·k) · layer 5 · head 2",
    );
    v.dispose();
  });

  it("rejects a payload without panels", async () => {
    await expect(QkView.mount(document.createElement("div"), { ...qkPayload(), panels: [] })).rejects.toThrow(/panels/);
  });
});

describe("paper-figure charts", () => {
  it("absorption: a ± std band and a line per model, in the paper's colours", async () => {
    await ChartView.mount(document.createElement("div"), {
      kind: "absorption",
      version: 1,
      subsampled: [],
      rule: "top-1",
      series: [
        { model: "llada", paradigm: "MDM", layers: [0, 1, 2], mean: [10, 20, 15], std: [1, 2, 1], samples: 8 },
        { model: "llama", paradigm: "ARM", layers: [0, 1, 2], mean: [60, 80, 90], std: [5, 5, 5], samples: 8 },
      ],
    });
    const d = calls[0].data;
    expect(d).toHaveLength(6);
    expect(d[1].fill).toBe("tonexty");
    expect(d[1].y).toEqual([9, 18, 14]);
    expect(d[2].line).toMatchObject({ color: "#fdcf9e" });
    expect(d[5].line).toMatchObject({ color: "#4e659b" });
  });

  it("retrieval: one layers × heads heatmap per model on [0, 1]", async () => {
    const scores = encodeArray([0, 0.5, 1, 0.25, 0.75, 0.1], [2, 3], { dtype: "float32" });
    await ChartView.mount(document.createElement("div"), {
      kind: "retrieval",
      version: 1,
      subsampled: [],
      normalisation: "raw",
      models: [
        { model: "llada", scores, samples: 3 },
        { model: "dream", scores, samples: 3 },
      ],
    });
    expect(calls).toHaveLength(2);
    expect(calls[0].data[0]).toMatchObject({ type: "heatmap", zmin: 0, zmax: 1 });
    expect(calls[0].data[0].z).toEqual([
      [0, 0.5, 1],
      [0.25, 0.75, expect.closeTo(0.1, 6)],
    ]);
  });

  it("rollout, distractor, drift, token types and generic heatmaps render; region names are escaped", async () => {
    await ChartView.mount(document.createElement("div"), {
      kind: "rollout",
      version: 1,
      subsampled: [],
      model: "llada",
      regions: ["BOS", "<Gold Doc>"],
      matrix: encodeArray([0.9, 0.1, 0.2, 0.8], [2, 2], { dtype: "float32" }),
      samples: 1,
    });
    expect(calls[0].data[0].x).toEqual(["BOS", "&lt;Gold Doc&gt;"]);
    await ChartView.mount(document.createElement("div"), {
      kind: "distractor",
      version: 1,
      subsampled: [],
      metric: "Accuracy (%)",
      positions: [1, 5, 10],
      series: [{ model: "llada", values: [50, 40, 45] }],
    });
    expect(calls[1].data[0].x).toEqual([1, 5, 10]);
    await ChartView.mount(document.createElement("div"), {
      kind: "drift",
      version: 1,
      subsampled: [],
      model: "m",
      layers: [0],
      rule: "mean+ksigma",
      steps: [0, 1],
      heat: encodeArray([0.1, 0.8, 0.1, 0.2, 0.2, 0.6], [2, 3]),
      anchors: encodeArray([0, 1, 0, 0, 0, 1], [2, 3]),
      masked: encodeArray([0, 0, 1, 0, 0, 0], [2, 3]),
      tokens: ["a", "b", "c"],
      tracks: [],
    });
    expect(calls[2].data[1]).toMatchObject({ x: [1, 2], y: [0, 1] });
    await ChartView.mount(document.createElement("div"), {
      kind: "token-types",
      version: 1,
      subsampled: [],
      model: "m",
      types: ["punct", "mask"],
      bands: [{ band: "shallow", layers: [0, 3], count: 5, shares: [0.6, 0.4] }],
    });
    expect(calls[3].data.map((t) => t.y)).toEqual([[60], [40]]);
    await ChartView.mount(document.createElement("div"), {
      kind: "heatmap",
      title: "received",
      xLabels: ["a", "<i>"],
      yLabels: ["L0"],
      values: [[0.2, null]],
      colormap: "magma",
      domain: [0, 1],
    });
    expect((calls[4].layout.xaxis as { ticktext: string[] }).ticktext).toEqual(["a", "&lt;i&gt;"]);
  });
});

describe("extension registry", () => {
  it("registers a safe, rank-0 renderer for every floatscope MIME type the kernel emits", () => {
    const types = extensions.flatMap((e) => e.rendererFactory.mimeTypes);
    for (const t of [MIME_QK, MIME_DRIFT, FLOATSCOPE_MIME.heatmap]) expect(types).toContain(t);
    expect(MIME_HEATMAP).toBe(FLOATSCOPE_MIME.heatmap);
    for (const e of extensions) {
      expect(e.rendererFactory.safe).toBe(true);
      expect(e.rank).toBe(0);
      expect(e.dataType).toBe("json");
    }
  });
});
