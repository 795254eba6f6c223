import { describe, expect, it } from "vitest";
import { charsToTokens, copyHits, evidenceSpan, retrievalHeads, rouge1Recall } from "../../src/analysis/retrieval-heads.js";
import { ProbeMissingError, SettingsError } from "../../src/util/errors.js";
import { capitalIsParis, makeTrace, probe, probeMap, step } from "./make-trace.js";

const { text, offsets, prompt, H, T, argmax } = capitalIsParis;
const seq = [...prompt, 23, 2];

function trace(answer: string, over: { dream?: boolean } = {}) {
  const shift = over.dream ? 1 : 0;
  // step 0 unmasks position 5 (token 23) from row 5 − shift; step 1 unmasks 6 (EOS) from row 6 − shift.
  // Step 0: layer 0 head 0 and layer 1 head 1 point at key 4 ("Paris"); layer 0 head 1 at BOS.
  // Step 1: layer 0 head 0 points at key 4 again, but the token is EOS: no copy.
  const r0 = 5 - shift;
  // Dream only: a decoy at row p = 5 of layer 1 head 0, which only a reading that ignores the shift would take.
  const decoy: [number, number, number][] = over.dream ? [[0, 5, 4]] : [];
  const r1 = 6 - shift;
  const s0 = probeMap(
    probe(0, "argmax_key", [H, T], argmax([[0, r0, 4]]), true),
    probe(1, "argmax_key", [H, T], argmax([[1, r0, 4], ...decoy]), true),
  );
  const s1 = probeMap(probe(0, "argmax_key", [H, T], argmax([[0, r1, 4]]), true), probe(1, "argmax_key", [H, T], argmax([]), true));
  // Final pass: row 5 of layer 0 head 1 points at "Paris" (what a row-p reading sees), row 4 at nothing.
  const fin = probeMap(
    probe(
      0,
      "argmax_key",
      [H, T],
      argmax([
        [1, 5, 4],
        [0, 4, 4],
      ]),
      true,
    ),
    probe(1, "argmax_key", [H, T], argmax([]), true),
  );
  return makeTrace({
    model: over.dream ? { name: "tiny-dream", family: "dream", logitShift: 1 } : {},
    sequence: seq,
    promptLength: 5,
    promptText: text,
    offsets,
    answer,
    regions: [{ name: "gold", tokens: [1, 5], chars: [0, 20] }],
    finalProbes: fin,
    steps: [
      step(0, [...prompt, 99, 99], s0, { transferred: Int32Array.of(5), tokens: Int32Array.of(23), producingRow: Int32Array.of(r0) }),
      step(1, [...prompt, 23, 99], s1, { transferred: Int32Array.of(6), tokens: Int32Array.of(2), producingRow: Int32Array.of(r1) }),
    ],
  });
}

describe("retrieval-head pieces", () => {
  it("character spans map to the tokens whose offsets overlap them (BOS's empty span never does)", () => {
    expect(charsToTokens(offsets, [15, 20], 5)).toEqual([4, 5]);
    expect(charsToTokens(offsets, [0, 20], 5)).toEqual([1, 5]);
    expect(charsToTokens(offsets, [12, 16], 5)).toEqual([3, 5]);
    expect(() => charsToTokens(offsets, [21, 25], 5)).toThrow(SettingsError);
  });
  it("evidence from text, region, chars or tokens", () => {
    const t = trace("Paris");
    expect(evidenceSpan(t, { text: "Paris" })).toEqual({ tokens: [4, 5], text: "Paris" });
    expect(evidenceSpan(t, { text: "is Paris", within: "gold" }).tokens).toEqual([3, 5]);
    expect(evidenceSpan(t, { region: "gold" }).tokens).toEqual([1, 5]);
    expect(evidenceSpan(t, { tokens: [2, 4] }).text).toBe(" capital is");
    expect(() => evidenceSpan(t, { text: "Rome" })).toThrow(/not found/);
    expect(() => evidenceSpan(t, undefined)).toThrow(/evidence span/);
  });
  it("copy criterion: inside the span AND same token", () => {
    const a = [4, 3, 4, 4]; // [head, query] with 2 heads × 2 rows
    expect(Array.from(copyHits(a, 2, 2, 0, 23, seq, [4, 5]))).toEqual([1, 1]);
    expect(Array.from(copyHits(a, 2, 2, 1, 23, seq, [4, 5]))).toEqual([0, 1]); // head 0 row 1 → key 3 (outside)
    expect(Array.from(copyHits(a, 2, 2, 0, 22, seq, [4, 5]))).toEqual([0, 0]); // token mismatch
  });
  it("ROUGE-1 recall with SQuAD normalisation", () => {
    expect(rouge1Recall("It is Paris.", "Paris")).toBe(1);
    expect(rouge1Recall("Paris", "the city of Paris")).toBeCloseTo(1 / 3, 12); // "the" dropped: city, of, paris
    expect(rouge1Recall("London", "Paris")).toBe(0);
  });
});

describe("retrievalHeads on a constructed copy event", () => {
  it("LLaDA: layer 0 head 0 and layer 1 head 1 copy 'Paris' → score 1/|span| = 1; EOS step copies nothing", () => {
    const { scores, events } = retrievalHeads(trace("Paris"), { evidence: { text: "Paris" } });
    const s = scores.objects() as { layer: number; head: number; score: number }[];
    expect(s.map((r) => [r.layer, r.head, r.score])).toEqual([
      [0, 0, 1],
      [0, 1, 0],
      [1, 0, 0],
      [1, 1, 1],
    ]);
    expect(events.numRows()).toBe(2);
  });
  it("a 2-token span halves the score; the filter drops a wrong answer; the mean is over kept samples", () => {
    const { scores, spec } = retrievalHeads([trace("Paris"), trace("London")], {
      evidence: { text: "is Paris" },
      filter: "rouge1",
      threshold: 0.4,
    });
    // sample 1: "Paris" recalls 1 of {is, paris} = 0.5 > 0.4 → kept, score 1/2; sample 2 recalls 0 → dropped
    expect(scores.get("score", 0)).toBeCloseTo(0.5, 12);
    expect(spec.kept).toEqual([{ model: "tiny-llada", kept: 1, total: 2 }]);
    const none = retrievalHeads([trace("Paris"), trace("London")], { evidence: { text: "is Paris" }, filter: "none" });
    expect(none.scores.get("score", 0)).toBeCloseTo(0.5, 12); // both samples carry the same copy event
    expect(retrievalHeads(trace("Paris"), { evidence: { text: "Paris" }, normalize: "max" }).spec.normalisation).toBe("max-normalised");
  });
  it("Dream: the producing row is p − 1; the final pass read at row p (the paper's extractor) finds a different head", () => {
    const dream = trace("Paris", { dream: true });
    const step = retrievalHeads(dream, { evidence: { text: "Paris" } }).scores.objects() as { score: number }[];
    expect(step.map((r) => r.score)).toEqual([1, 0, 0, 1]);
    // final pass, row p − 1 = 4: layer 0 head 0 → key 4
    const fin = retrievalHeads(dream, { evidence: { text: "Paris" }, rows: "final" }).scores.objects() as { score: number }[];
    expect(fin.map((r) => r.score)).toEqual([1, 0, 0, 0]);
    // final pass, row p = 5 (unshifted): layer 0 head 1 → key 4
    const unshifted = retrievalHeads(dream, { evidence: { text: "Paris" }, rows: "final-unshifted" }).scores.objects() as {
      score: number;
    }[];
    expect(unshifted.map((r) => r.score)).toEqual([0, 1, 0, 0]);
    // final-pass rows need no step records (a trace recorded with keepSteps: false)
    dream.steps = [];
    const noSteps = retrievalHeads(dream, { evidence: { text: "Paris" }, rows: "final" }).scores.objects() as { score: number }[];
    expect(noSteps.map((r) => r.score)).toEqual([1, 0, 0, 0]);
  });
  it("missing argmax probes → ProbeMissingError naming the probe and probes: { argmax: true }", () => {
    const t = trace("Paris");
    t.steps[0].probes = new Map();
    expect(() => retrievalHeads(t, { evidence: { text: "Paris" } })).toThrow(ProbeMissingError);
    expect(() => retrievalHeads(t, { evidence: { text: "Paris" } })).toThrow(
      /blocks\.0\.attn\.argmax_key[\s\S]*probes: \{ argmax: true \}/,
    );
    t.steps = [];
    expect(() => retrievalHeads(t, { evidence: { text: "Paris" } })).toThrow(/no per-step records/);
  });
});
