/**
 * The qk and retrieval grid measures (src/grid/measures-qk-retrieval.ts) on hand-built traces, with the values
 * worked by hand from the definitions (notebook 03's split of the anchors' score advantage, notebook 04's copy
 * events), and their pooling: the fallback to every question when the ROUGE-1 filter keeps none, and an
 * aggregate that does not depend on the order rows come in.
 */
import { describe, expect, it } from "vitest";
import { aggregateMeasures, measureProbes, measureTrace, type MeasuredModel, type MeasuredSample } from "../../src/grid/measures.js";
import {
  angleShare,
  deepMinusShallow,
  goldEvidence,
  poolRetrieval,
  qkLayers,
  qkMeasure,
  retrievalMeasure,
} from "../../src/grid/measures-qk-retrieval.js";
import { GridError } from "../../src/util/errors.js";
import { capitalIsParis, makeTrace, probe, probeMap, step } from "../analysis/make-trace.js";

describe("qk measure", () => {
  it("decomposes notebook 03's layers: the paper's 1, 11, 28 of 32, scaled to the depth", () => {
    expect(qkLayers(32)).toEqual([1, 11, 28]);
    // 30 layers: round(29/31) = 1, round(319/31 = 10.29) = 10, round(812/31 = 26.19) = 26
    expect(qkLayers(30)).toEqual([1, 10, 26]);
    // 6 layers: round(5/31) = 0 → at least 1; round(55/31 = 1.77) = 2; round(140/31 = 4.52) = 5
    expect(qkLayers(6)).toEqual([1, 2, 5]);
    // 2 layers: every fraction lands on layer 1 (never layer 0), kept once
    expect(qkLayers(2)).toEqual([1]);
    expect(measureProbes(["qk"], 30)).toEqual({ received: true, qk: { layers: [1, 10, 26] } });
    expect(() => measureProbes(["qk"])).toThrow(GridError);
  });

  it("splits the anchors' score advantage into the angle and the norm term (hand values)", () => {
    // One head, d = 2, two tokens, layer 1 of 2. Both query rows q = (1, 0). Key 0 = (8, 6): ‖q‖‖k‖ = 10,
    // cos θ = 0.8; key 1 = (3, 4): ‖q‖‖k‖ = 5, cos θ = 0.6. Key 0 receives most attention (0.8 vs 0.2; μ + 3σ
    // cannot fire on two keys, so the top-1 fallback makes it the anchor). Scores are scaled by s = 1/√2.
    // Advantage = s(8 − 3) = 5s; angle term ½(10 + 5)s(0.8 − 0.6) = 1.5s; norm term ½(0.8 + 0.6)(10 − 5)s = 3.5s.
    const trace = makeTrace({
      model: { numLayers: 2, numHeads: 1, numKvHeads: 1, headDim: 2 },
      sequence: [1, 10],
      finalProbes: probeMap(
        probe(1, "q_rot", [1, 2, 2], [1, 0, 1, 0]),
        probe(1, "k_rot", [1, 2, 2], [8, 6, 3, 4]),
        probe(1, "received", [2], [0.8, 0.2]),
      ),
    });
    const s = 1 / Math.sqrt(2);
    const m = qkMeasure(trace);
    const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
    expect(m).toEqual({
      layers: [1],
      advantage: [r6(5 * s)],
      angleTerm: [r6(1.5 * s)],
      normTerm: [r6(3.5 * s)],
      cos: [r6(0.8 - 0.6)],
      norm: [r6(5 * s)],
    });
    // The claim's number: 1.5s / 5s = 30 % carried by the angle.
    expect(angleShare(m)).toBeCloseTo(30, 4);
  });

  it("the angle share of a question sums its layers before dividing (notebook 03's share)", () => {
    // layers: angle 1 of advantage 2, angle 2 of advantage 2 → 3 / 4 = 75 % (not the mean of 50 % and 100 %)
    expect(angleShare({ angleTerm: [1, 2], advantage: [2, 2] })).toBe(75);
  });
});

const { text, offsets, prompt, H, T, argmax } = capitalIsParis;

/**
 * Step 0 unmasks position 5 (token 23, "Paris") from row 5: layer 0 head 0 and both heads of layer 1 point at
 * key 4 ("Paris"): three copy events. Step 1 unmasks EOS: layer 0 head 0 points at key 4 again, but the token
 * differs, so no copy.
 */
function retrievalTrace(answer: string, gold = true) {
  const s0 = probeMap(
    probe(0, "argmax_key", [H, T], argmax([[0, 5, 4]]), true),
    probe(
      1,
      "argmax_key",
      [H, T],
      argmax([
        [0, 5, 4],
        [1, 5, 4],
      ]),
      true,
    ),
  );
  const s1 = probeMap(probe(0, "argmax_key", [H, T], argmax([[0, 6, 4]]), true), probe(1, "argmax_key", [H, T], argmax([]), true));
  return makeTrace({
    sequence: [...prompt, 23, 2],
    promptLength: 5,
    promptText: text,
    offsets,
    answer,
    regions: gold ? [{ name: "gold", tokens: [1, 5], chars: [0, 20] }] : [],
    steps: [
      step(0, [...prompt, 99, 99], s0, { transferred: Int32Array.of(5), tokens: Int32Array.of(23), producingRow: Int32Array.of(5) }),
      step(1, [...prompt, 23, 99], s1, { transferred: Int32Array.of(6), tokens: Int32Array.of(2), producingRow: Int32Array.of(6) }),
    ],
  });
}

describe("retrieval measure", () => {
  it("evidence: the first answer the gold passage contains, else the whole gold passage; none without one", () => {
    expect(goldEvidence(retrievalTrace("Paris"), ["London", "Paris"])).toEqual({ text: "Paris", within: "gold" });
    expect(goldEvidence(retrievalTrace("Paris"), ["Rome"])).toEqual({ region: "gold" });
    expect(goldEvidence(retrievalTrace("Paris", false), ["Paris"])).toBeUndefined();
    expect(retrievalMeasure(retrievalTrace("Paris", false), ["Paris"])).toBeUndefined();
  });

  it("scores each layer's heads by copy events over the evidence length (hand values)", () => {
    // Evidence "Paris" = token 4 (length 1): layer 0 heads (1, 0) → mean 0.5; layer 1 heads (1, 1) → mean 1.
    // The answer "Paris" recalls the evidence's one word: ROUGE-1 recall 1 > 0.5, kept.
    const m = retrievalMeasure(retrievalTrace("Paris"), ["Paris"])!;
    expect(m).toEqual({ kept: true, score: [0.5, 1], events: 3 });
    // Deep half (layer 1 of 2) minus shallow half (layer 0): 1 − 0.5.
    expect(deepMinusShallow(m.score)).toBe(0.5);
    // No answer in the passage: the evidence is the whole gold passage, tokens 1–4 (length 4), so each copy
    // counts 1/4: layer 0 (0.25, 0) → 0.125, layer 1 (0.25, 0.25) → 0.25. "Rome" recalls none of its words.
    expect(retrievalMeasure(retrievalTrace("Rome"), ["Rome"])).toEqual({ kept: false, score: [0.125, 0.25], events: 3 });
  });

  it("deep half minus shallow half splits the layers at L/2 (odd L: the middle layer is shallow)", () => {
    expect(deepMinusShallow([0.1, 0.2, 0.5, 0.7])).toBeCloseTo(0.6 - 0.15, 12);
    // L = 5: shallow l < 2.5 → 0, 1, 2 (mean 0.2); deep 3, 4 (mean 0.8)
    expect(deepMinusShallow([0, 0.3, 0.3, 0.6, 1])).toBeCloseTo(0.8 - 0.2, 12);
  });

  it("a grid row records both measures from one trace, and a closed-book row records no retrieval", () => {
    const t = retrievalTrace("Paris");
    expect(measureTrace(t, ["retrieval"], ["Paris"]).retrieval).toEqual({ kept: true, score: [0.5, 1], events: 3 });
    expect(measureTrace(retrievalTrace("Paris", false), ["retrieval"], ["Paris"])).toEqual({});
  });
});

describe("pooling", () => {
  const models: MeasuredModel[] = [
    { name: "mdm", family: "llada", paradigm: "MDM", tier: "tiny" },
    { name: "arm", family: "llama", paradigm: "ARM", tier: "tiny" },
  ];
  const rows: MeasuredSample[] = [
    { model: "mdm", sample: "u|q1", measures: { retrieval: { kept: true, score: [0, 1], events: 2 } } },
    { model: "mdm", sample: "u|q2", measures: { retrieval: { kept: false, score: [1, 1], events: 4 } } },
    { model: "mdm", sample: "u|q3", measures: { retrieval: { kept: true, score: [0.5, 0.5], events: 1 } } },
    { model: "arm", sample: "u|q1", measures: { retrieval: { kept: false, score: [0.2, 0.6], events: 1 } } },
    { model: "arm", sample: "u|q2", measures: { retrieval: { kept: false, score: [0.4, 0], events: 1 } } },
  ];

  it("reads the kept questions, or every question when the filter kept none (hand values)", () => {
    const r = poolRetrieval(
      rows.map((x) => ({ model: x.model, sample: x.sample, m: x.measures.retrieval! })),
      ["mdm", "arm"],
    );
    expect(r.models).toEqual([
      { model: "mdm", kept: 2, total: 3, read: "kept" },
      { model: "arm", kept: 0, total: 2, read: "all" },
    ]);
    // mdm, kept q1 and q3: layer 0 (0 + 0.5)/2, layer 1 (1 + 0.5)/2; arm, both: (0.2 + 0.4)/2, (0.6 + 0)/2
    expect(r.layers.map((l) => [l.model, l.layer, +l.score.toFixed(12), l.n])).toEqual([
      ["mdm", 0, 0.25, 2],
      ["mdm", 1, 0.75, 2],
      ["arm", 0, 0.3, 2],
      ["arm", 1, 0.3, 2],
    ]);
    expect(r.samples.map((s) => +s.gap.toFixed(12))).toEqual([1, 0, 0, 0.4, -0.4]);
  });

  it("the aggregate does not depend on the order the rows come in", () => {
    const qk = (a: number, b: number) => ({
      layers: [1, 3],
      advantage: [a, b],
      angleTerm: [a / 2, b],
      normTerm: [a / 2, 0],
      cos: [0.1, 0.2],
      norm: [a, b],
    });
    const all: MeasuredSample[] = rows.map((r, i) => ({ ...r, measures: { ...r.measures, qk: qk(i + 1, 2 * i + 0.5) } }));
    const a = aggregateMeasures(all, models);
    expect(aggregateMeasures([...all].reverse(), models)).toEqual(a);
    expect(aggregateMeasures([all[3], all[0], all[4], all[2], all[1]], models)).toEqual(a);
    // mdm's first question: angle (0.5 + 0.5) of advantage (1 + 0.5) → 66.67 %
    expect(a.qk!.samples[0].angleShare).toBeCloseTo(200 / 3, 10);
  });
});
