/**
 * The verdict machinery of CLAIMS.md on hand-built findings: the needed-n formula on hand-worked numbers,
 * "models disagree" naming the models and the way each comparison went, "not measured" naming what the tier
 * lacks, and no "inconclusive" where every interval is separated or the models disagree.
 */
import { describe, expect, it } from "vitest";
import {
  buildClaims,
  collectFindings,
  comparison,
  decide,
  judgeClaims,
  neededN,
  separation,
  type SourcedFinding,
} from "../../src/display/claims.js";
import { FloatscopeError } from "../../src/util/errors.js";
import type { Finding } from "../../src/display/findings.js";

const f = (
  claim: Finding["claim"],
  model: string,
  family: string,
  quantity: string,
  value: number,
  ci95: [number, number] | null,
  n = 8,
  tier = "tiny",
): SourcedFinding => ({ claim, model, family, tier, quantity, value, ci95, n, source: "x.ipynb" });

describe("neededN: the n at which the observed difference would separate the intervals", () => {
  it("symmetric intervals, equal n: n · ((h_a + h_b) / d)²", () => {
    // a = 30 [20, 40], b = 12.5 [2.5, 22.5], n = 40: d = 17.5, h = 10 + 10 → 40 · (20/17.5)² = 52.24 → 53
    expect(neededN({ value: 30, ci95: [20, 40], n: 40 }, { value: 12.5, ci95: [2.5, 22.5], n: 40 })).toBe(53);
  });
  it("asymmetric intervals and unequal n use the halves that face each other", () => {
    // a = 10 [6, 20] (n 4) below b = 14 [12, 30] (n 9): facing halves are a's upper 10 and b's lower 2;
    // (10·√4 + 2·√9) / 4 = 26/4 = 6.5 → 6.5² = 42.25 → 43
    expect(neededN({ value: 10, ci95: [6, 20], n: 4 }, { value: 14, ci95: [12, 30], n: 9 })).toBe(43);
    // the same pair the other way round faces the same halves
    expect(neededN({ value: 14, ci95: [12, 30], n: 9 }, { value: 10, ci95: [6, 20], n: 4 })).toBe(43);
  });
  it("against a bound: n · (h / d)²", () => {
    // 60 [45, 75] (n 10) vs 50: d = 10, h = 15 → 10 · 2.25 = 22.5 → 23
    expect(neededN({ value: 60, ci95: [45, 75], n: 10 }, 50)).toBe(23);
  });
  it("an exact square needs one more: at x the facing halves only touch, separation is strict", () => {
    // (h_a + h_b)/d = (1 + 1)/1 = 2 with n = 4 → x = 16: at n = 16 the intervals touch, at 17 they separate;
    // also when the halves come out of 0.1 + 0.2-style sums a hair off
    expect(neededN({ value: 3, ci95: [2, 4], n: 4 }, { value: 2, ci95: [1, 3], n: 4 })).toBe(17);
    expect(neededN({ value: 0.3, ci95: [0.2, 0.4], n: 4 }, { value: 0.1 + 0.1, ci95: [0.1, 0.3], n: 4 })).toBe(17);
    // a bound met exactly by the lower end (58.3 [50, 66.7] vs 50, n 2): x = 2 → 3, not the n it already has
    expect(neededN({ value: 58.3, ci95: [50, 66.6], n: 2 }, 50)).toBe(3);
  });
  it("no n separates a zero difference, nor two values without intervals", () => {
    expect(neededN({ value: 5, ci95: [4, 6], n: 8 }, { value: 5, ci95: [3, 7], n: 8 })).toBeNull();
    expect(neededN({ value: 5, ci95: null, n: 8 }, 3)).toBeNull();
  });
});

describe("separation", () => {
  it("supports only when the intervals do not touch; a bound only strictly above", () => {
    expect(separation({ value: 5, ci95: [4, 6], n: 8 }, { value: 2, ci95: [1, 3.9], n: 8 })).toBe("supports");
    expect(separation({ value: 5, ci95: [4, 6], n: 8 }, { value: 2, ci95: [1, 4], n: 8 })).toBe("unclear");
    expect(separation({ value: 1, ci95: [0, 2], n: 8 }, { value: 5, ci95: [4, 6], n: 8 })).toBe("contradicts");
    expect(separation({ value: 60, ci95: [50, 70], n: 8 }, 50)).toBe("unclear");
    expect(separation({ value: 50, ci95: null, n: 1 }, 50)).toBe("contradicts");
    expect(separation({ value: 51, ci95: null, n: 1 }, 50)).toBe("supports");
  });
});

describe("judgeClaims", () => {
  const Q = "absorption, % (rule upstream, mean over layers)";
  it("models disagree: names the pairs separated each way", () => {
    const out = judgeClaims([
      f("absorption-arm-vs-mdm", "arm-a", "llama", Q, 60, [55, 65]),
      f("absorption-arm-vs-mdm", "arm-c", "qwen2", Q, 18, [14, 22]),
      f("absorption-arm-vs-mdm", "mdm-b", "dream", Q, 30, [25, 35]),
    ]);
    const v = out.find((r) => r.claim === "absorption-arm-vs-mdm")!.verdicts[0];
    expect(v.verdict).toBe("models disagree");
    expect(v.why).toMatch(/separated the paper's way: arm-a above mdm-b; separated the other way: arm-c below mdm-b$/);
    expect(v.neededN).toBeUndefined();
  });

  it("some separated the paper's way, others overlapping: inconclusive, with what is decided and the n the rest need", () => {
    const out = judgeClaims([
      f("absorption-arm-vs-mdm", "arm-a", "llama", Q, 60, [55, 65]),
      // arm-d 36 [31, 41] vs mdm-b 30 [25, 35], n 8: d = 6, halves 5 + 5 → 8 · (10/6)² = 22.2 → 23
      f("absorption-arm-vs-mdm", "arm-d", "qwen2", Q, 36, [31, 41]),
      f("absorption-arm-vs-mdm", "mdm-b", "dream", Q, 30, [25, 35]),
    ]);
    const v = out.find((r) => r.claim === "absorption-arm-vs-mdm")!.verdicts[0];
    expect(v).toMatchObject({ verdict: "inconclusive at this n", neededN: 23, n: [8, 8] });
    expect(v.why).toMatch(/overlap for arm-d vs mdm-b .*already separated the paper's way: arm-a above mdm-b; .*n = 23 per model/);
  });

  it("lists the tiers smallest models first, a data variant after its tier, whatever order the findings come in", () => {
    const at = (tier: string) => f("absorption-arm-vs-mdm", `m-${tier}`, "llama", Q, 60, [55, 65], 8, tier);
    const out = judgeClaims(["real-base", "real · NQ-open", "elsewhere", "tiny", "real"].map(at));
    const tiers = out.find((r) => r.claim === "absorption-arm-vs-mdm")!.verdicts.map((v) => v.tier);
    expect(tiers).toEqual(["tiny", "real", "real · NQ-open", "real-base", "elsewhere"]);
  });

  it("not measured says what the tier lacks: no MDM on it, or no such number", () => {
    const out = judgeClaims([
      f("absorption-arm-vs-mdm", "smollm", "llama", Q, 60, [55, 65], 2, "real"),
      f("absorption-arm-vs-mdm", "tiny-llama", "llama", Q, 60, [55, 65]),
      f("absorption-arm-vs-mdm", "tiny-llada", "llada", Q, 10, [5, 15]),
    ]);
    const byTier = (claim: string) => Object.fromEntries(out.find((r) => r.claim === claim)!.verdicts.map((v) => [v.tier, v]));
    expect(byTier("absorption-arm-vs-mdm").real).toMatchObject({ verdict: "not measured" });
    expect(byTier("absorption-arm-vs-mdm").real.why).toMatch(/this tier has no MDM$/);
    expect(byTier("absorption-arm-vs-mdm").tiny.verdict).toBe("reproduced");
    expect(byTier("anchors-float-mdm").real.why).toMatch(/this tier has no MDM$/);
    expect(byTier("anchors-float-mdm").tiny.why).toMatch(/no MDM on this tier reported this quantity$/);
    expect(byTier("sink-fixed-arm").real.why).toMatch(/no ARM on this tier reported this quantity$/);
  });

  it("the sink claim is decided on attention: top-1 key at position 0 over 50 % of (step, layer) cells, per ARM only", () => {
    const q = "top-1 key at position 0, % of (step, layer) cells";
    const out = judgeClaims([
      f("sink-fixed-arm", "tiny-llama", "llama", q, 92, [85, 97]),
      f("sink-fixed-arm", "tiny-qwen", "qwen2", q, 71, [60, 80]),
      // the MDM beside them is listed but not read by the rule
      f("sink-fixed-arm", "tiny-llada", "llada", q, 3, [0, 8]),
      // an intervention's accuracy change is evidence listed with the claim, not the quantity the rule reads
      f("sink-fixed-arm", "tiny-llama", "llama", "QA accuracy change when position 0 is hidden (points vs none)", -40, [-50, -30]),
    ]);
    expect(out.find((r) => r.claim === "sink-fixed-arm")!.verdicts).toEqual([
      expect.objectContaining({ tier: "tiny", verdict: "reproduced", n: [8, 8] }),
    ]);
    const against = judgeClaims([
      f("sink-fixed-arm", "tiny-llama", "llama", q, 20, [10, 30]),
      f("sink-fixed-arm", "tiny-qwen", "qwen2", q, 92, [85, 97]),
    ]);
    expect(against.find((r) => r.claim === "sink-fixed-arm")!.verdicts[0].verdict).toBe("models disagree");
    expect(against.find((r) => r.claim === "sink-fixed-arm")!.verdicts[0].why).toMatch(
      /tiny-qwen above the bound.*tiny-llama at or below the bound/,
    );
  });

  it("a model with several findings the rule reads is named with the quantity; only the shallow layer's anchors must float", () => {
    const q = (where: string) => `distinct anchor positions (${where}, 16 steps)`;
    const out = judgeClaims([
      f("anchors-float-mdm", "tiny-llada", "llada", q("shallow layer 0"), 5, null, 16),
      f("anchors-float-mdm", "tiny-llada", "llada", q("deep layer 5"), 1, null, 16), // the paper's deep picture: listed, not read
      f("absorption-arm-vs-mdm", "x", "dream", Q, 30, [25, 35]),
      f("absorption-arm-vs-mdm", "y", "llama", Q, 60, [55, 65]),
      f("absorption-arm-vs-mdm", "y", "llama", Q.replace("mean over layers", "mean over layers, second run"), 70, [55, 85]),
    ]);
    expect(out.find((r) => r.claim === "anchors-float-mdm")!.verdicts[0]).toMatchObject({ verdict: "reproduced", n: [16, 16] });
    expect(out.find((r) => r.claim === "absorption-arm-vs-mdm")!.verdicts[0].why).toBe(
      "absorption with the paper's rule (upstream), ARM > MDM: every comparison is separated the paper's way",
    );
    const two = judgeClaims([
      f("absorption-arm-vs-mdm", "x", "dream", Q, 30, [25, 35]),
      f("absorption-arm-vs-mdm", "y", "llama", Q, 60, [55, 65]),
      f("absorption-arm-vs-mdm", "y", "llama", "absorption, % (rule upstream, deep half)", 20, [15, 22]),
    ]);
    expect(two.find((r) => r.claim === "absorption-arm-vs-mdm")!.verdicts[0].why).toMatch(
      /paper's way: y \(absorption, % \(rule upstream, mean over layers\)\) above x; separated the other way: y \(absorption, % \(rule upstream, deep half\)\) below x$/,
    );
    const tie = decide("rule", [comparison({ value: 5, ci95: [4, 6], n: 8 }, { value: 5, ci95: [3, 7], n: 8 }, "a", "b")]);
    expect(tie).toMatchObject({ verdict: "inconclusive at this n", neededN: null });
    expect(tie.why).toMatch(/points neither way.*no n would separate them/);
  });

  it("within a model: shallow band vs deep band, named", () => {
    const out = judgeClaims([
      f("shallow-structural-deep-content", "m", "llada", "structural share of anchors, %, shallow band (layers 0–1)", 30, [20, 40]),
      f("shallow-structural-deep-content", "m", "llada", "structural share of anchors, %, deep band (layers 4–5)", 70, [60, 80]),
    ]);
    expect(out.find((r) => r.claim === "shallow-structural-deep-content")!.verdicts[0]).toMatchObject({
      verdict: "not reproduced",
      why: expect.stringMatching(/separated the other way: m: shallow band below deep band$/),
    });
  });
});

describe("decide never says 'inconclusive' where the intervals already decide", () => {
  it("over every mix of outcomes: inconclusive ⇔ some overlap and none separated the other way", () => {
    const kinds = [
      { value: 10, ci95: [9, 11] as [number, number], n: 8 }, // vs 5 [4, 6]: supports
      { value: 5.5, ci95: [4.5, 6.5] as [number, number], n: 8 }, // overlaps
      { value: 1, ci95: [0, 2] as [number, number], n: 8 }, // contradicts
    ];
    const b = { value: 5, ci95: [4, 6] as [number, number], n: 8 };
    const outcomes = kinds.map((k) => separation(k, b));
    expect(outcomes).toEqual(["supports", "unclear", "contradicts"]);
    for (let mask = 1; mask < 27; mask++) {
      const picks = [mask % 3, Math.floor(mask / 3) % 3, Math.floor(mask / 9) % 3];
      const cmps = picks.map((p, i) => comparison(kinds[p], b, `m${i}`, "b"));
      const got = decide("rule", cmps).verdict;
      const has = (o: string) => picks.some((p) => outcomes[p] === o);
      const expected =
        !has("unclear") && !has("contradicts")
          ? "reproduced"
          : has("supports") && has("contradicts")
            ? "models disagree"
            : has("contradicts")
              ? "not reproduced"
              : "inconclusive at this n";
      expect(got, `outcomes ${picks.map((p) => outcomes[p]).join(", ")}`).toBe(expected);
    }
  });
});

describe("findings files beside notebooks", () => {
  const record = {
    notebook: "measure-sink",
    findings: [
      {
        claim: "sink-fixed-arm",
        model: "arm",
        family: "llama",
        tier: "real",
        quantity: "top-1 key at position 0, % of (step, layer) cells",
        value: 60,
        ci95: [58, 62],
        n: 100,
      },
    ],
  };
  it("a findings record read as a source gives its findings, checked as a notebook's are", () => {
    const fs = collectFindings([{ file: "sink.findings.json", json: record }]);
    expect(fs).toEqual([{ ...record.findings[0], source: "sink.findings.json" }]);
    expect(buildClaims([{ file: "sink.findings.json", json: record }]).results[0].verdicts[0]).toMatchObject({
      tier: "real",
      verdict: "reproduced",
      n: [100, 100],
    });
  });
  it("a bad finding in a findings file is a typed error naming the file and the field", () => {
    const bad = { ...record, findings: [{ ...record.findings[0], n: 0 }] };
    expect(() => collectFindings([{ file: "sink.findings.json", json: bad }])).toThrow(FloatscopeError);
    expect(() => collectFindings([{ file: "sink.findings.json", json: bad }])).toThrow(/invalid finding/);
    const err = (() => {
      try {
        collectFindings([{ file: "sink.findings.json", json: bad }]);
      } catch (e) {
        return e as FloatscopeError;
      }
    })();
    expect(err).toMatchObject({ file: "sink.findings.json findings[0]", field: "n" });
    expect(() => collectFindings([{ file: "x.json", json: { neither: 1 } }])).toThrow(/not a notebook/);
  });
});
