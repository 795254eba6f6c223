/**
 * The sink claim from attention to verdict: the findings and the per-layer table built from the first-token
 * sink analysis (hand-worked numbers), and the claims rule deciding `sink-fixed-arm` on them.
 */
import { describe, expect, it } from "vitest";
import { firstTokenSink } from "../../src/analysis/first-token-sink.js";
import { judgeClaims } from "../../src/display/claims.js";
import { findings } from "../../src/display/findings.js";
import { SINK_QUANTITIES, sinkFindings, sinkLayerTable, type SinkLayer, type SinkSample } from "../../src/display/findings-text.js";
import { makeTrace, probe, probeMap, step } from "../analysis/make-trace.js";

describe("sinkFindings", () => {
  const samples: SinkSample[] = [
    { model: "arm", family: "llama", onFirst: 0.5, top1AtFirst: 0.9, top1Stability: 1 },
    { model: "arm", family: "llama", onFirst: 0.7, top1AtFirst: 0.7, top1Stability: 0.8 },
    { model: "mdm", family: "dream", onFirst: 0.05, top1AtFirst: 0, top1Stability: 0.25 },
  ];
  const fs = sinkFindings(samples, "real-base");

  it("per model, each quantity in percent: the mean over samples, n and an interval when there is spread", () => {
    const get = (model: string, q: string) => fs.find((f) => f.model === model && f.quantity === q)!;
    expect(get("arm", SINK_QUANTITIES.top1AtFirst)).toMatchObject({ claim: "sink-fixed-arm", tier: "real-base", family: "llama", n: 2 });
    expect(get("arm", SINK_QUANTITIES.top1AtFirst).value).toBeCloseTo(80, 10);
    expect(get("arm", SINK_QUANTITIES.onFirst).value).toBeCloseTo(60, 10);
    expect(get("arm", SINK_QUANTITIES.top1Stability).value).toBeCloseTo(90, 10);
    // percentile bootstrap of two values stays between them
    const ci = get("arm", SINK_QUANTITIES.top1AtFirst).ci95!;
    expect(ci[0]).toBeGreaterThanOrEqual(70 - 1e-9);
    expect(ci[1]).toBeLessThanOrEqual(90 + 1e-9);
    // the MDM beside it: one sample, no interval
    expect(get("mdm", SINK_QUANTITIES.top1Stability)).toMatchObject({ value: 25, ci95: null, n: 1 });
    expect(fs).toHaveLength(6);
    expect(() => findings("02-absorption", fs)).not.toThrow();
  });
});

describe("sinkLayerTable", () => {
  const layers: SinkLayer[] = [
    { model: "arm", layer: 1, onFirst: 0.625, top1AtFirst: 1, top1Stability: 1, modalTop1: 0, n: 4 },
    { model: "arm", layer: 0, onFirst: 0.05, top1AtFirst: 0.25, top1Stability: 0.5, modalTop1: 3, n: 4 },
    { model: "<b>mdm</b>", layer: 0, onFirst: 0.012, top1AtFirst: 0, top1Stability: 0.75, n: 4 },
  ];
  const md = String(sinkLayerTable(layers, { title: "Real tier" }).toMimeBundle()["text/markdown"]);
  const text = String(sinkLayerTable(layers).toMimeBundle()["text/plain"]);

  it("one row per layer in order, four columns per model, '—' where a model lacks the layer or its key", () => {
    const rows = md.split("\n").filter((l) => /^\| \d/.test(l));
    expect(rows).toEqual(["| 0 | 5.0 | 25.0 | 3 | 50.0 | 1.2 | 0.0 | — | 75.0 |", "| 1 | 62.5 | 100.0 | 0 | 100.0 | — | — | — | — |"]);
    expect(md).toMatch(/^\*\*Real tier\.\*\* Per layer: .* means over n = 4 sample\(s\)\./);
  });

  it("model names are text: escaped in Markdown, as given in plain text", () => {
    expect(md).toContain("&lt;b&gt;mdm&lt;/b&gt;: % on position 0");
    expect(md).not.toContain("<b>");
    expect(text).toContain("<b>mdm</b>: % on position 0");
  });

  it("says so when there is nothing to show", () => {
    expect(sinkLayerTable([]).toMimeBundle()["text/plain"]).toMatch(/No sink numbers/);
  });
});

describe("from traces to the sink verdict", () => {
  /** A run of `steps` steps over 3 keys; each step's top-1 key is tops[s] (0.6 there, 0.2 elsewhere), in both layers. */
  function run(model: string, family: "llama" | "llada", causal: boolean, id: string, tops: number[]) {
    const steps = tops.map((t, s) => {
      const c = [0, 1, 2].map((j) => (j === t ? 0.6 : 0.2));
      return step(s, [1, 2, 3], probeMap(probe(0, "received", [3], c), probe(1, "received", [3], c)));
    });
    return makeTrace({ model: { name: model, family, causal }, sequence: [1, 2, 3], settings: { sampleId: id }, steps });
  }
  it("an ARM whose top-1 key is position 0 at 3 of 4 steps in every sample: 75 % > 50 % → reproduced; the MDM is listed", () => {
    const traces = [
      run("arm", "llama", true, "a", [0, 0, 0, 2]),
      run("arm", "llama", true, "b", [0, 1, 0, 0]),
      run("mdm", "llada", false, "a", [2, 1, 2, 1]),
      run("mdm", "llada", false, "b", [1, 1, 2, 0]),
    ];
    const r = firstTokenSink(traces);
    const fs = sinkFindings(r.samples.objects(), "tiny");
    const top1 = fs.filter((f) => f.quantity === SINK_QUANTITIES.top1AtFirst);
    expect(top1.map((f) => [f.model, f.value, f.ci95])).toEqual([
      ["arm", 75, [75, 75]],
      ["mdm", 12.5, [0, 25]],
    ]);
    const [v] = judgeClaims(fs.map((f) => ({ ...f, source: "02-absorption.ipynb" }))).find((c) => c.claim === "sink-fixed-arm")!.verdicts;
    expect(v).toMatchObject({ tier: "tiny", verdict: "reproduced", n: [2, 2] });
  });
});
