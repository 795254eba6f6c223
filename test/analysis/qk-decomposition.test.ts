import { describe, expect, it } from "vitest";
import { floatingAdvantage, kvHeadOf, qkDecomposition, qkParts } from "../../src/analysis/qk-decomposition.js";
import { ProbeMissingError } from "../../src/util/errors.js";
import { makeTrace, probe, probeMap } from "./make-trace.js";

describe("GQA head mapping", () => {
  it("28 query heads on 4 KV heads (7:1): consecutive groups of 7; upstream's h mod 4 differs", () => {
    const grouped = Array.from({ length: 28 }, (_, h) => kvHeadOf(h, 28, 4));
    expect(grouped).toEqual([...Array(7).fill(0), ...Array(7).fill(1), ...Array(7).fill(2), ...Array(7).fill(3)]);
    expect([kvHeadOf(6, 28, 4), kvHeadOf(7, 28, 4), kvHeadOf(27, 28, 4)]).toEqual([0, 1, 3]);
    expect([kvHeadOf(6, 28, 4, "upstream"), kvHeadOf(7, 28, 4, "upstream"), kvHeadOf(27, 28, 4, "upstream")]).toEqual([2, 3, 3]);
    // 7 heads on 1 KV head: all share it
    expect(Array.from({ length: 7 }, (_, h) => kvHeadOf(h, 7, 1))).toEqual([0, 0, 0, 0, 0, 0, 0]);
    // no GQA (LLaDA): both mappings are the identity
    expect(kvHeadOf(15, 32, 32)).toBe(15);
    expect(kvHeadOf(15, 32, 32, "upstream")).toBe(15);
  });
});

describe("QK parts", () => {
  it("q = (3,4), k0 = (1,0), k1 = (0,2): scores 3, 8; norms 5, 10; cos 0.6, 0.8; parts multiply back (scaled)", () => {
    const p = qkParts([3, 4], [1, 0, 0, 2], 1, 2, 2, { scale: 1 / Math.sqrt(2) });
    expect(Array.from(p.score)).toEqual([3 / Math.sqrt(2), 8 / Math.sqrt(2)]);
    expect(Array.from(p.normProd).map((v) => v * Math.sqrt(2))).toEqual([5, 10].map((v) => expect.closeTo(v, 12)));
    expect(Array.from(p.cos)).toEqual([expect.closeTo(0.6, 12), expect.closeTo(0.8, 12)]);
    for (let i = 0; i < 2; i++) expect(p.normProd[i] * p.cos[i]).toBeCloseTo(p.score[i], 12);
  });
  it("causal: keys after the query are NaN", () => {
    const p = qkParts([1, 0, 0, 1], [1, 0, 0, 1], 2, 2, 2, { causal: true });
    expect(Array.from(p.score)).toEqual([1, NaN, 0, 1]);
  });
  it("advantage splits exactly into angle and norm terms (hand values)", () => {
    // one row; floating key 0: ‖q‖‖k‖ = 10, cos 0.8 (s = 8); other key 1: 5, 0.6 (s = 3).
    // advantage 5 = angle ½(10+5)(0.8−0.6) = 1.5 + norm ½(0.8+0.6)(10−5) = 3.5
    const s = floatingAdvantage(
      { score: Float64Array.from([8, 3]), cos: Float64Array.from([0.8, 0.6]), normProd: Float64Array.from([10, 5]), dims: [1, 2] },
      [0],
    );
    expect(s.advantage).toBeCloseTo(5, 12);
    expect(s.angleTerm).toBeCloseTo(1.5, 12);
    expect(s.normTerm).toBeCloseTo(3.5, 12);
    expect([s.cosFloating, s.cosOther, s.normFloating, s.normOther]).toEqual([0.8, 0.6, 10, 5]);
  });
});

// T = 2, d = 2, two heads. Head 0: q rows (1,0), keys (1,0),(0,1). Head 1: q rows (0,1), keys (0,1),(1,0).
// Per-head scores (unscaled): head 0 [[1,0],[1,0]], head 1 [[1,0],[1,0]] → score-mean [[1,0],[1,0]].
// Vector means: q̄ = (½,½), k̄ = (½,½) for both keys → every score ½.
function twoHeads(over: Parameters<typeof makeTrace>[0]["model"] = {}) {
  return makeTrace({
    model: { numHeads: 2, numKvHeads: 2, headDim: 2, ...over },
    sequence: [1, 10],
    finalProbes: probeMap(
      probe(0, "q_rot", [2, 2, 2], [1, 0, 1, 0, 0, 1, 0, 1]),
      probe(0, "k_rot", [2, 2, 2], [1, 0, 0, 1, 0, 1, 1, 0]),
      probe(0, "received", [2], [0.8, 0.2]),
    ),
  });
}

describe("qkDecomposition over a trace", () => {
  it("score-mean (default) vs vector-mean (the paper's) give the hand values", () => {
    const sm = qkDecomposition(twoHeads(), { scaled: false });
    expect(Array.from(sm.table.array("score") as Float64Array)).toEqual([1, 0, 1, 0]);
    const vm = qkDecomposition(twoHeads(), { scaled: false, heads: "vector-mean" });
    expect(Array.from(vm.table.array("score") as Float64Array).map((v) => +v.toFixed(12))).toEqual([0.5, 0.5, 0.5, 0.5]);
    // default scaling: 1/√2
    expect(qkDecomposition(twoHeads()).table.get("score", 0)).toBeCloseTo(1 / Math.sqrt(2), 12);
  });
  it("floating set: μ+3σ cannot fire on 2 keys → argmax fallback (key 0); summary advantage = 1", () => {
    const { summary, spec } = qkDecomposition(twoHeads(), { scaled: false });
    expect(spec.panels[0].anchors).toEqual([0]);
    expect(summary.get("advantage", 0)).toBeCloseTo(1, 12);
    expect(summary.get("angleTerm", 0) + summary.get("normTerm", 0)).toBeCloseTo(1, 12);
    expect(summary.get("angleShare", 0)).toBeCloseTo(summary.get("angleTerm", 0), 12); // advantage = 1
  });
  it("per head on a 28:4 trace: head 7 reads KV head 1 (score 2), upstream reads KV head 3 (score 4)", () => {
    // every query head: rows (1,0); KV head g: keys (g+1, 0), (0, 1)
    const q = Array.from({ length: 28 }, () => [1, 0, 1, 0]).flat();
    const k = Array.from({ length: 4 }, (_, g) => [g + 1, 0, 0, 1]).flat();
    const tr = makeTrace({
      model: { name: "tiny-dream", family: "dream", numHeads: 28, numKvHeads: 4, headDim: 2 },
      sequence: [1, 10],
      finalProbes: probeMap(probe(0, "q_rot", [28, 2, 2], q), probe(0, "k_rot", [4, 2, 2], k), probe(0, "received", [2], [0.5, 0.5])),
    });
    expect(qkDecomposition(tr, { heads: 7, scaled: false }).table.get("score", 0)).toBe(2);
    const up = qkDecomposition(tr, { heads: 7, upstream: true });
    expect(up.table.get("score", 0)).toBe(4);
    // upstream treats a non-"llada" model as causal: key 1 of query 0 is blank
    expect(up.table.get("score", 1)).toBeNaN();
    expect(up.spec.warnings?.join(" ")).toMatch(/h mod 4[\s\S]*causal/);
  });
  it("upstream on LLaDA: vector-mean, unscaled, bidirectional", () => {
    const up = qkDecomposition(twoHeads(), { upstream: true });
    expect(Array.from(up.table.array("score") as Float64Array).map((v) => +v.toFixed(12))).toEqual([0.5, 0.5, 0.5, 0.5]);
    expect(up.spec.heads).toBe("vector-mean");
    expect(up.spec.scaled).toBe(false);
  });
  it("upstream crops to the token window [0, 256); ours keeps the whole sequence unless asked", () => {
    const T = 260;
    const tr = makeTrace({
      model: { numHeads: 1, numKvHeads: 1, headDim: 1 },
      sequence: Array.from({ length: T }, (_, i) => 10 + i),
      finalProbes: probeMap(
        probe(0, "q_rot", [1, T, 1], new Array(T).fill(1)),
        probe(0, "k_rot", [1, T, 1], new Array(T).fill(1)),
        probe(0, "received", [T], new Array(T).fill(1 / T)),
      ),
    });
    expect(qkDecomposition(tr, { upstream: true }).spec.panels[0].score.shape).toEqual([256, 256]);
    expect(qkDecomposition(tr, { layers: [0] }).spec.panels[0].score.shape).toEqual([T, T]);
    const w = qkDecomposition(tr, { window: [250, 400] });
    expect(w.spec.panels[0].start).toBe(250);
    expect(w.table.get("query", 0)).toBe(250);
    expect(w.table.numRows()).toBe(100);
  });
  it("pre-RoPE needs the q/k probes; missing ones name the probe and the request", () => {
    expect(() => qkDecomposition(twoHeads(), { rope: "pre" })).toThrow(ProbeMissingError);
    expect(() => qkDecomposition(twoHeads(), { rope: "pre" })).toThrow(/blocks\.0\.attn\.q[\s\S]*preRope: true/);
    const noQ = makeTrace({ sequence: [1, 2], finalProbes: probeMap(probe(3, "received", [2], [0.5, 0.5])) });
    expect(() => qkDecomposition(noQ, { layers: [1] })).toThrow(/blocks\.1\.attn\.q_rot[\s\S]*qk: \{ layers: \[1\] \}/);
  });
});
