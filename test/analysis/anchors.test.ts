import { describe, expect, it } from "vitest";
import { adjustReceived, detectAnchors, meanStd, resolveRule, upstreamRule } from "../../src/analysis/anchors.js";
import { SettingsError } from "../../src/util/errors.js";

// A planted anchor column: 20 keys, key 2 receives 0.62, the other 19 receive 0.02 each (Σ = 1).
// By hand: μ = 1/20 = 0.05; σ² = (0.57² + 19·0.03²)/20 = (0.3249 + 0.0171)/20 = 0.0171, σ = 0.130767;
// μ + 3σ = 0.4423 < 0.62, and 0.02 is below it.
const planted = Array.from({ length: 20 }, (_, j) => (j === 2 ? 0.62 : 0.02));
// The same with the anchor on a BOS at position 0.
const bosPlanted = Array.from({ length: 20 }, (_, j) => (j === 0 ? 0.62 : 0.02));
const ids = Array.from({ length: 20 }, (_, j) => (j === 0 ? 1 : 10 + j));
const ctx = { ids, bosTokenId: 1, maskTokenId: 99, eosTokenIds: [2], padTokenId: 3 };

const find = (
  c: number[],
  opts: Parameters<typeof resolveRule>[0],
  analysis: "absorption" | "drift" | "qk" = "absorption",
  causal = false,
) => Array.from(detectAnchors(c, resolveRule(opts, analysis, causal), ctx));

describe("anchor rules find a planted anchor column", () => {
  it("population mean and σ match the hand values", () => {
    const { mean, std } = meanStd(planted);
    expect(mean).toBeCloseTo(0.05, 12);
    expect(std).toBeCloseTo(Math.sqrt(0.0171), 12);
  });
  it("mean+ksigma (k = 3) marks key 2 only; the Greek alias is the same rule", () => {
    expect(find(planted, { rule: "mean+ksigma" })).toEqual([2]);
    expect(find(planted, { rule: "mean+kσ", k: 3 })).toEqual([2]);
  });
  it("mean+ksigma uses population σ: with k = 4.3 it still fires (max z = √19 = 4.359), with k = 4.4 it cannot", () => {
    // z of key 2 = 0.57 / 0.130767 = 4.3589; a sample σ (ddof 1) would give 4.249 and miss at k = 4.3.
    expect(find(planted, { rule: "mean+ksigma", k: 4.3 })).toEqual([2]);
    expect(find(planted, { rule: "mean+ksigma", k: 4.4 })).toEqual([]);
    expect(find(planted, { rule: "mean+ksigma", k: 4.4, fallback: "top-1" })).toEqual([2]);
  });
  it("top-k: k = 1 finds key 2; k = 2 adds the lowest-index tie (key 0)", () => {
    expect(find(planted, { rule: "top-k" })).toEqual([2]);
    expect(find(planted, { rule: "top-k", topK: 2 })).toEqual([0, 2]);
  });
  it("first-token and bos find the column planted on the BOS at 0", () => {
    expect(find(bosPlanted, { rule: "first-token" })).toEqual([0]);
    expect(find(bosPlanted, { rule: "bos" })).toEqual([0]);
    // bos is about the token, not the place: no BOS id in the sequence → empty
    expect(Array.from(detectAnchors(bosPlanted, resolveRule({ rule: "bos" }), { ids: ids.map((t) => t + 100), bosTokenId: 1 }))).toEqual(
      [],
    );
  });
  it("rulli-eps on the sum scale: 0.62·20 = 12.4 > mean of the others (0.4) + 3", () => {
    expect(find(planted, { rule: "rulli-eps" })).toEqual([2]);
    expect(find(planted, { rule: "rulli-ε", epsilon: 3 })).toEqual([2]);
    // The margin is 12.4 − 0.4 = 12: ε = 11.9 passes (12.4 > 12.3), ε = 12.1 does not (12.4 > 12.5 is false).
    expect(find(planted, { rule: "rulli-eps", epsilon: 11.9 })).toEqual([2]);
    expect(find(planted, { rule: "rulli-eps", epsilon: 12.1 })).toEqual([]);
  });
  it("rulli-eps on the mean scale never fires on probabilities (the upstream absorption bug)", () => {
    expect(find(planted, { rule: "rulli-eps", scale: "mean" })).toEqual([]);
  });
  it("upstream: MDM absorption = additive ε on probabilities → top-1 fallback; ARM = position 0", () => {
    expect(find(planted, { rule: "upstream" }, "absorption", false)).toEqual([2]);
    expect(find(planted, { rule: "upstream" }, "absorption", true)).toEqual([0]);
    const r = upstreamRule("absorption", false);
    expect([r.rule, r.scale, r.epsilon, r.fallback]).toEqual(["rulli-eps", "mean", 3, "top-1"]);
  });
  it("upstream drift (no fallback) vs upstream qk (argmax fallback) on a flat column", () => {
    const flat = [0.25, 0.25, 0.25, 0.25];
    expect(find(flat, { rule: "upstream" }, "drift")).toEqual([]);
    expect(find(flat, { rule: "upstream" }, "qk")).toEqual([0]);
  });
});

describe("exclusions", () => {
  it("key-side: a mask token at the planted key cannot be an anchor; top-1 moves on", () => {
    const masked = ids.map((t, j) => (j === 2 ? 99 : t));
    const r = resolveRule({ rule: "top-k", exclude: ["mask"] });
    // keys 0.. all 0.02 except 2 → lowest index among the rest
    expect(Array.from(detectAnchors(planted, r, { ...ctx, ids: masked }))).toEqual([0]);
    const r2 = resolveRule({ rule: "mean+ksigma", exclude: ["first-token", "bos"] });
    expect(Array.from(detectAnchors(bosPlanted, r2, ctx))).toEqual([]);
  });
  it("query-side: causal 3×3 map without row 0 and/or the diagonal, worked by hand", () => {
    // A = [[1,0,0],[0.6,0.4,0],[0.5,0.3,0.2]]; column means c = [2.1, 0.7, 0.2]/3, self = [1, 0.4, 0.2].
    const c = [2.1 / 3, 0.7 / 3, 0.2 / 3];
    const self = [1, 0.4, 0.2];
    const noRow0 = adjustReceived(c, { firstRow: true, causal: true });
    expect(Array.from(noRow0).map((v) => +v.toFixed(12))).toEqual([0.55, 0.35, 0.1]);
    const noDiag = adjustReceived(c, { diagonal: true, self });
    expect(Array.from(noDiag).map((v) => +v.toFixed(12))).toEqual([0.55, 0.15, 0]);
    // both: key 1 keeps only row 2 (0.3); key 2 keeps only row 1 (0); key 0 keeps rows 1, 2.
    const both = adjustReceived(c, { diagonal: true, self, firstRow: true, causal: true });
    expect(Array.from(both).map((v) => +v.toFixed(12))).toEqual([0.55, 0.3, 0]);
    // row 0 is not trivial without a causal mask: no change
    expect(Array.from(adjustReceived(c, { firstRow: true, causal: false }))).toEqual(c);
  });
  it("bad rule names and options are SettingsErrors that list what is allowed", () => {
    expect(() => resolveRule({ rule: "top1" as never })).toThrow(SettingsError);
    expect(() => resolveRule({ rule: "top1" as never })).toThrow(/"mean\+ksigma"/);
    expect(() => resolveRule({ exclude: ["bogus" as never] })).toThrow(/exclude/);
    expect(() => resolveRule({ rule: "top-k", topK: 0 })).toThrow(SettingsError);
    expect(() => adjustReceived(planted, { diagonal: true })).toThrow(/self/);
  });
});
