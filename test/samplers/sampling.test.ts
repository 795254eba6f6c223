import { describe, expect, it } from "vitest";
import { Rng } from "../../src/util/rng.js";
import {
  argmax,
  armChoose,
  dreamSampleToken,
  filterTopK,
  filterTopP,
  lladaChoose,
  softmax,
  softmaxAt,
} from "../../src/samplers/sampling.js";

describe("token choice", () => {
  it("top-p keeps the smallest prefix whose mass reaches p, including the first token over it", () => {
    // Hand computation (and torch's top_p_logits on the same numbers): softmax of [2, 0.5, 1, −0.5]
    // sorted → cumulative [0.598, 0.818, 0.951, 1]; > 0.8 from rank 1, shifted right → drop ranks 2, 3.
    const l = Float64Array.from([2.0, 0.5, 1.0, -0.5]);
    filterTopP(l, 0.8);
    expect(Array.from(l)).toEqual([2.0, -Infinity, 1.0, -Infinity]);
    const k = Float64Array.from([2.0, 0.5, 1.0, -0.5]);
    filterTopP(k, 0.5); // the top token alone already exceeds 0.5 and always survives
    expect(Array.from(k)).toEqual([2.0, -Infinity, -Infinity, -Infinity]);
  });

  it("top-k keeps values ≥ the k-th largest (ties at the threshold survive)", () => {
    const l = Float64Array.from([1, 3, 2, 3, 0]);
    filterTopK(l, 2);
    expect(Array.from(l)).toEqual([-Infinity, 3, -Infinity, 3, -Infinity]);
    const m = Float64Array.from([1, 3, 2, 2, 0]);
    filterTopK(m, 2);
    expect(Array.from(m)).toEqual([-Infinity, 3, 2, 2, -Infinity]);
  });

  it("argmax takes the first maximum; softmax and softmaxAt agree", () => {
    expect(argmax([1, 5, 5, 2])).toBe(1);
    const p = softmax([0, Math.log(3)]);
    expect(p[1]).toBeCloseTo(0.75, 12);
    expect(softmaxAt([0, Math.log(3)], 1)).toBeCloseTo(0.75, 12);
  });

  it("LLaDA τ = 0: argmax with its un-noised softmax confidence, and no random draw", () => {
    const rng = new Rng(1);
    const before = new Rng(1).nextUint32();
    const c = lladaChoose([0, Math.log(3), 0], 0, "low_confidence", rng);
    expect(c).toEqual({ token: 1, confidence: expect.closeTo(0.6, 12) });
    expect(rng.nextUint32()).toBe(before);
  });

  it("LLaDA τ > 0: Gumbel-max samples softmax(l/τ); confidence stays the τ-free softmax", () => {
    const logits = [0, 1, 2];
    const tau = 2;
    const want = softmax(logits.map((x) => x / tau));
    const rng = new Rng(11);
    const counts = [0, 0, 0];
    const n = 30_000;
    for (let i = 0; i < n; i++) {
      const c = lladaChoose(logits, tau, "low_confidence", rng);
      counts[c.token]++;
      if (i < 50) expect(c.confidence).toBeCloseTo(softmaxAt(logits, c.token), 12);
    }
    for (let v = 0; v < 3; v++) expect(Math.abs(counts[v] / n - want[v])).toBeLessThan(0.015);
  });

  it("LLaDA random remasking: confidence is a uniform draw, independent of the logits", () => {
    const rng = new Rng(4);
    const confs = Array.from({ length: 2000 }, () => lladaChoose([0, 10], 0, "random", rng).confidence);
    expect(confs.every((c) => c > 0 && c < 1)).toBe(true);
    expect(Math.abs(confs.reduce((a, b) => a + b, 0) / confs.length - 0.5)).toBeLessThan(0.03);
  });

  it("Dream confidences: maskgit_plus p(x0), topk_margin p1 − p2, entropy Σ p·log(p + 1e-10)", () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
    const s = { temperature: 0 };
    const rng = new Rng(0);
    expect(dreamSampleToken(logits, s, "maskgit_plus", rng)).toEqual({ token: 0, confidence: expect.closeTo(0.5, 12) });
    expect(dreamSampleToken(logits, s, "topk_margin", rng).confidence).toBeCloseTo(0.2, 12);
    // torch: (p * log(p + 1e-10)).sum() for p = [0.5, 0.3, 0.2] → −1.02965
    expect(dreamSampleToken(logits, s, "entropy", rng).confidence).toBeCloseTo(-1.029653, 6);
  });

  it("Dream with top_p: sampled tokens never come from the dropped tail", () => {
    const logits = [2.0, 0.5, 1.0, -0.5];
    const rng = new Rng(9);
    const seen = new Set<number>();
    for (let i = 0; i < 500; i++) seen.add(dreamSampleToken(logits, { temperature: 1, topP: 0.8 }, "entropy", rng).token);
    expect([...seen].sort()).toEqual([0, 2]);
  });

  it("ARM greedy is argmax; sampled with top_k 1 is argmax too", () => {
    const rng = new Rng(2);
    expect(armChoose([0, 3, 1], null, rng).token).toBe(1);
    for (let i = 0; i < 20; i++) expect(armChoose([0, 3, 1], { temperature: 1.5, topK: 1 }, rng).token).toBe(1);
  });
});
