import { describe, expect, it } from "vitest";
import { absorptionOf, absorptionRate, summarizeOverSamples } from "../../src/analysis/absorption.js";
import { ProbeMissingError } from "../../src/util/errors.js";
import { makeTrace, probe, probeMap, step } from "./make-trace.js";

// Two layers, T = 5. Layer 0: key 3 planted (0.6), the rest 0.1 → μ = 0.2, σ = 0.2, μ+3σ = 0.8: no anchor
// under mean+ksigma (max z for n = 5 is 2). Layer 1: rows sum to 0.98 (bf16-like drift): [0.5, 0.12, 0.12, 0.12, 0.12].
function mdm(l1: number[] = [0.5, 0.12, 0.12, 0.12, 0.12], id = "a") {
  return makeTrace({
    sequence: [1, 10, 11, 12, 2],
    settings: { sampleId: id },
    finalProbes: probeMap(probe(0, "received", [5], [0.1, 0.1, 0.1, 0.6, 0.1]), probe(1, "received", [5], l1)),
  });
}

describe("absorption core", () => {
  it("sums the anchor columns; 'total' divides by Σc like upstream's Σ_ij A_ij / T", () => {
    const c = [0.5, 0.12, 0.12, 0.12, 0.12];
    expect(absorptionOf(c, [0])).toBeCloseTo(0.5, 12);
    expect(absorptionOf(c, [0], "total")).toBeCloseTo(0.5 / 0.98, 12);
    expect(absorptionOf(c, [0, 1])).toBeCloseTo(0.62, 12);
  });
  it("mean and population σ over samples per layer, skipping a missing layer", () => {
    // [sample, layer] = [[0.2, 0.5], [0.4, NaN]] → layer 0: mean 0.3, σ 0.1 (a sample σ would be 0.1414); layer 1: 0.5 ± 0 (n = 1)
    const s = summarizeOverSamples([0.2, 0.5, 0.4, NaN], 2, 2);
    expect(s.mean[0]).toBeCloseTo(0.3, 12);
    expect(s.std[0]).toBeCloseTo(0.1, 12);
    expect(s.mean[1]).toBeCloseTo(0.5, 12);
    expect(s.std[1]).toBe(0);
    expect(Array.from(s.n)).toEqual([2, 1]);
  });
});

describe("absorptionRate over traces", () => {
  it("upstream on an MDM = top-1 column divided by the total", () => {
    const { table } = absorptionRate(mdm(), { rule: "upstream" });
    const rows = table.objects() as { layer: number; value: number; anchors: number; positions: number[] }[];
    expect(rows[0].value).toBeCloseTo(0.6 / 1.0, 6);
    expect(rows[0].positions).toEqual([3]);
    expect(rows[1].value).toBeCloseTo(0.5 / 0.98, 6);
    expect(rows.map((r) => r.anchors)).toEqual([1, 1]);
  });
  it("upstream on an ARM = position 0, and warns when position 0 is not a BOS (Qwen)", () => {
    const qwen = makeTrace({
      model: { name: "tiny-qwen", family: "qwen2", causal: true, bosTokenId: undefined },
      sequence: [10, 11, 12],
      finalProbes: probeMap(probe(0, "received", [3], [0.7, 0.2, 0.1])),
    });
    const { table, spec } = absorptionRate(qwen, { rule: "upstream" });
    expect(table.get("value", 0)).toBeCloseTo(0.7, 6);
    expect(spec.warnings?.join(" ")).toMatch(/not a BOS/);
    expect(spec.series[0].paradigm).toBe("ARM");
  });
  it("default mean+ksigma: layer 0 has no anchor (z = 2 < 3) → absorption 0; no renormalisation", () => {
    const { table } = absorptionRate(mdm());
    expect(table.get("value", 0)).toBe(0);
    expect(table.get("anchors", 0)).toBe(0);
    const topk = absorptionRate(mdm(), { rule: "top-k" }).table;
    expect(topk.get("value", 1)).toBeCloseTo(0.5, 6); // not 0.5/0.98
  });
  it("summary per layer over samples with population σ, spec in percent", () => {
    const { summary, spec } = absorptionRate([mdm(undefined, "a"), mdm([0.3, 0.2, 0.2, 0.15, 0.15], "b")], { rule: "top-k" });
    const rows = summary.objects() as { layer: number; mean: number; std: number; n: number }[];
    // layer 1: top-1 values 0.5 and 0.3 → mean 0.4, σ 0.1
    expect(rows[1].mean).toBeCloseTo(0.4, 6);
    expect(rows[1].std).toBeCloseTo(0.1, 6);
    expect(rows[1].n).toBe(2);
    expect(spec.series[0].mean[1]).toBeCloseTo(40, 3);
    expect(spec.series[0].std[1]).toBeCloseTo(10, 3);
    expect(spec.kind).toBe("absorption");
  });
  it("ARMs and MDMs together: each model keeps its own upstream rule; repeated sample ids stay separate samples", () => {
    const llama = makeTrace({
      model: { name: "tiny-llama", family: "llama", causal: true },
      sequence: [1, 10, 11],
      finalProbes: probeMap(probe(0, "received", [3], [0.7, 0.2, 0.1])),
    });
    const { summary, spec } = absorptionRate([mdm(undefined, "q"), mdm([0.3, 0.2, 0.2, 0.15, 0.15], "q"), llama], { rule: "upstream" });
    const rows = summary.objects() as { model: string; rule: string; layer: number; n: number }[];
    expect(rows.find((r) => r.model === "tiny-llama")!.rule).toBe("upstream: first-token");
    expect(rows.find((r) => r.model === "tiny-llada")!.rule).toMatch(/^upstream: rulli-eps \(ε=3, mean scale\), fallback top-1/);
    expect(rows.find((r) => r.model === "tiny-llada" && r.layer === 1)!.n).toBe(2);
    expect(spec.series.map((x) => x.paradigm)).toEqual(["MDM", "ARM"]);
  });
  it("a trace without the received probe → ProbeMissingError naming it and how to record it", () => {
    const bare = makeTrace({ sequence: [1, 2, 3] });
    expect(() => absorptionRate(bare)).toThrow(ProbeMissingError);
    expect(() => absorptionRate(bare)).toThrow(/blocks\.0\.attn\.received[\s\S]*record it with probes: \{ received: true \}/);
    expect(() => absorptionRate(mdm(), { exclude: ["diagonal"] })).toThrow(/blocks\.0\.attn\.self[\s\S]*probes: \{ self: true \}/);
    const partial = makeTrace({ sequence: [1, 2, 3], steps: [step(0, [1, 2, 3], probeMap(probe(0, "received", [3], [0.5, 0.3, 0.2])))] });
    partial.partial = true;
    expect(() => absorptionRate(partial)).toThrow(/partial[\s\S]*pass: 0…0/);
    expect(absorptionRate(partial, { pass: 0, rule: "top-k" }).table.get("value", 0)).toBeCloseTo(0.5, 6);
  });
});

describe("upstream absorption against the script's formula on a full matrix", () => {
  // absorption_comparison.py works on the full T×T map: tot = Σ_ij A_ij; ARM: 100·Σ_i A_i0 / tot;
  // MDM: S = argmax of the column means (the +3 threshold never fires), 100·Σ_i A_iS / tot.
  // Rows here sum to 1 ± 0.4 % (bf16-like), so dividing by tot matters.
  const T = 9;
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const A: number[] = [];
  for (let i = 0; i < T; i++) {
    const row = Array.from({ length: T }, (_, j) => rnd() + (j === 4 ? 1.5 : 0));
    const z = row.reduce((a, b) => a + b) / (1 + (rnd() - 0.5) * 0.008);
    A.push(...row.map((v) => v / z));
  }
  const colSum = Array.from({ length: T }, (_, j) => Array.from({ length: T }, (_, i) => A[i * T + j]).reduce((a, b) => a + b));
  const tot = A.reduce((a, b) => a + b);
  const received = colSum.map((v) => v / T);
  const traceOf = (causal: boolean) =>
    makeTrace({
      model: causal ? { name: "tiny-llama", family: "llama", causal: true } : {},
      sequence: [1, 10, 11, 12, 13, 14, 15, 16, 2],
      finalProbes: probeMap(probe(0, "received", [T], received)),
    });
  it("MDM: 100 · Σ_i A_i,argmax / Σ A", () => {
    const j = colSum.indexOf(Math.max(...colSum));
    expect(j).toBe(4);
    const want = (100 * colSum[j]) / tot;
    expect(100 * absorptionRate(traceOf(false), { rule: "upstream" }).table.get("value", 0)).toBeCloseTo(want, 4);
    expect(Math.abs(100 * received[j] - want)).toBeGreaterThan(1e-3); // without the division it would differ
  });
  it("ARM: 100 · Σ_i A_i0 / Σ A", () => {
    expect(100 * absorptionRate(traceOf(true), { rule: "upstream" }).table.get("value", 0)).toBeCloseTo((100 * colSum[0]) / tot, 4);
  });
});
