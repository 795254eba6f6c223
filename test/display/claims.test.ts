/**
 * CLAIMS.md from fixture notebooks (findings outputs as an executed notebook carries them): claims
 * with no finding say "not measured", verdicts follow the intervals, and every number traces back.
 */
import { describe, expect, it } from "vitest";
import { buildClaims, formatClaimNumber } from "../../src/display/claims.js";
import { CLAIM_IDS, findings, type Finding } from "../../src/display/findings.js";
import { untracedNumbers } from "./claims-trace.js";

/** A notebook whose last cell shows `findings(name, rows)`, as tslab saves it. */
function notebook(name: string, rows: Finding[]) {
  const bundle = findings(name, rows).toMimeBundle();
  return {
    file: `${name}.ipynb`,
    json: {
      cells: [
        { cell_type: "markdown", source: "# x" },
        { cell_type: "code", source: "show(findings(…))", outputs: [{ output_type: "display_data", data: bundle, metadata: {} }] },
      ],
    },
  };
}
const f = (
  claim: Finding["claim"],
  model: string,
  family: string,
  quantity: string,
  value: number,
  ci95: [number, number] | null,
  n = 8,
  tier = "tiny",
): Finding => ({ claim, model, family, tier, quantity, value, ci95, n });

const nbs = [
  notebook("02-absorption", [
    f("absorption-arm-vs-mdm", "tiny-llama", "llama", "absorption, % (rule upstream, mean over layers)", 61.25, [55.5, 66.125]),
    f("absorption-arm-vs-mdm", "tiny-qwen", "qwen2", "absorption, % (rule upstream, mean over layers)", 48.3, [44.01, 52.7]),
    f("absorption-arm-vs-mdm", "tiny-llada", "llada", "absorption, % (rule upstream, mean over layers)", 9.21, [8.57, 9.91]),
    f("absorption-arm-vs-mdm", "tiny-dream", "dream", "absorption, % (rule upstream, mean over layers)", 4.2, [3.97, 4.43]),
    // another rule's number: listed, but not what the verdict reads
    f("absorption-arm-vs-mdm", "tiny-dream", "dream", "absorption, % (rule mean+ksigma, mean over layers)", 70.5, [60.25, 80.75]),
  ]),
  notebook("06-qa-rag", [
    f("rag-gain-mdm-vs-arm", "tiny-llama", "llama", "RAG gain, points (mean of Acc and F1 gains)", 47.5, [34.17, 59.58], 60),
    f("rag-gain-mdm-vs-arm", "tiny-dream", "dream", "RAG gain, points (mean of Acc and F1 gains)", 62.9, [49.58, 75], 60),
  ]),
  notebook("07-floating-token-types", [
    f(
      "shallow-structural-deep-content",
      "tiny-llada",
      "llada",
      "structural share of anchors, %, shallow band (layers 0–1)",
      86.6,
      [76.7, 95.8],
    ),
    f(
      "shallow-structural-deep-content",
      "tiny-llada",
      "llada",
      "structural share of anchors, %, deep band (layers 4–5)",
      47.7,
      [33.1, 64.6],
    ),
  ]),
  notebook("08-robustness", [
    f("robust-distractors", "tiny-llama", "llama", "accuracy drop from 0 to 10 distractors (points)", 20, [5, 35], 20),
    f("robust-distractors", "tiny-llada", "llada", "accuracy drop from 0 to 10 distractors (points)", 80, [65, 95], 20),
    f("robust-distractors", "llada-8b", "llada", "accuracy drop from 0 to 10 distractors (points)", 12.5, [2.5, 22.5], 40, "real"),
    f("robust-distractors", "llama-8b", "llama", "accuracy drop from 0 to 10 distractors (points)", 30, [20, 40], 40, "real"),
  ]),
];

describe("CLAIMS.md", () => {
  const { markdown, results } = buildClaims(nbs);
  const verdictOf = (claim: string, tier = "tiny") => results.find((r) => r.claim === claim)!.verdicts.find((v) => v.tier === tier)!;
  const verdict = (claim: string, tier = "tiny") => verdictOf(claim, tier).verdict;

  it("has every claim on every tier any notebook reported; a claim without findings is 'not measured', saying why", () => {
    expect(results.map((r) => r.claim)).toEqual([...CLAIM_IDS]);
    for (const c of ["sink-fixed-arm", "anchors-float-mdm", "angle-vs-norm", "retrieval-heads-deep", "robust-position"]) {
      expect(results.find((r) => r.claim === c)!.verdicts.map((v) => [v.tier, v.verdict])).toEqual([
        ["tiny", "not measured"],
        ["real", "not measured"],
      ]);
    }
    expect(verdictOf("sink-fixed-arm").why).toMatch(/no ARM on this tier reported this quantity$/);
    expect(verdictOf("absorption-arm-vs-mdm", "real").why).toMatch(/no ARM on this tier reported this quantity$/);
    expect(markdown).toMatch(
      /\| MDMs depend less on the gold passage's position \| qualitative \(paper Fig\. 6, positional bias\) \| tiny: not measured; real: not measured \|/,
    );
    expect(buildClaims([]).results.every((r) => r.verdicts.length === 1 && r.verdicts[0].verdict === "not measured")).toBe(true);
  });

  it("verdicts follow the intervals, per tier, with the n each read", () => {
    // every ARM interval above every MDM interval (the ksigma row is not the quantity the rule reads)
    expect(verdict("absorption-arm-vs-mdm")).toBe("reproduced");
    expect(verdictOf("absorption-arm-vs-mdm").n).toEqual([8, 8]);
    // shallow band [76.7, 95.8] above deep band [33.1, 64.6]
    expect(verdict("shallow-structural-deep-content")).toBe("reproduced");
    // tiny: the MDM drops far more (ARM [5, 35] below MDM [65, 95]: separated the wrong way)
    expect(verdict("robust-distractors")).toBe("not reproduced");
    expect(verdictOf("robust-distractors").why).toMatch(/separated the other way: tiny-llama below tiny-llada$/);
  });

  it("an overlap is 'inconclusive at this n' with the n the observed difference needs (hand-worked)", () => {
    // Dream 62.9 [49.58, 75] vs Llama 47.5 [34.17, 59.58], n = 60 each: d = 15.4, facing halves 13.32 and 12.08,
    // x = 60 · (25.4 / 15.4)² = 163.2, n* = ⌊x⌋ + 1 = 164.
    const rag = verdictOf("rag-gain-mdm-vs-arm");
    expect(rag).toMatchObject({ verdict: "inconclusive at this n", neededN: 164, n: [60, 60] });
    expect(rag.why).toMatch(
      /overlap for tiny-dream vs tiny-llama \(the observed difference points the paper's way\).*about n = 164 per model/,
    );
    // real: Llama drop 30 [20, 40] vs LLaDA 12.5 [2.5, 22.5], n = 40: d = 17.5, halves 10 and 10, x = 40 · (20/17.5)² = 52.2, n* = 53
    expect(verdictOf("robust-distractors", "real")).toMatchObject({ verdict: "inconclusive at this n", neededN: 53 });
    expect(markdown).toContain("- **tiny tier: inconclusive at this n** (n = 60) — RAG gain, MDM &gt; ARM: intervals overlap");
    // …and the summary table says it too
    expect(markdown).toMatch(
      /\| MDMs gain more from retrieved passages than ARMs \| [^|]+ \| tiny: inconclusive at this n \(needs n = 164\); real: not measured \|/,
    );
  });

  it("lists ours per model and tier with the paper's number beside them", () => {
    expect(markdown).toContain("paper Table 1, average gain with RAG: Llama +7.37, Qwen +9.64, Dream +13.23, LLaDA +25.68 points");
    expect(markdown).toContain(
      `| tiny-llama | llama | tiny | absorption, % (rule upstream, mean over layers) | ${formatClaimNumber(61.25)} | [${formatClaimNumber(55.5)}, ${formatClaimNumber(66.125)}] | 8 | 02-absorption.ipynb |`,
    );
    expect(markdown).toContain(
      "| llada-8b | llada | real | accuracy drop from 0 to 10 distractors (points) | 12.5 | [2.50, 22.5] | 40 | 08-robustness.ipynb |",
    );
  });

  it("every number traces to a notebook output (or the paper's side)", () => {
    expect(untracedNumbers(markdown, nbs)).toEqual([]);
    // …and the check can fail: a number typed into the table is caught.
    expect(untracedNumbers(markdown.replace("| 12.5 |", "| 12.7 |"), nbs)).toEqual(["12.7"]);
    expect(untracedNumbers(markdown + "\nours: 33.3 %", nbs)).toEqual(["33.3"]);
    // …a needed n is allowed only where the findings give it: 164 is re-derived, 165 is not.
    expect(markdown).toContain("n = 164");
    expect(untracedNumbers(markdown.replace("n = 164", "n = 165"), nbs)).toEqual(["165"]);
    // A notebook with no findings is named in the header; its name's digits are not measurements.
    const silent = { file: "03-qk-decomposition.ipynb", json: { cells: [] } };
    expect(untracedNumbers(buildClaims([...nbs, silent]).markdown, [...nbs, silent])).toEqual([]);
  });
});
