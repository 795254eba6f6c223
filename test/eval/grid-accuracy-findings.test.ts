/**
 * The accuracy claims' findings of a merged grid (src/cli/grid-findings.ts `accuracyFindings`): the RAG gain
 * (notebook 06), the accuracy drop from 0 to the most distractors and the spread over gold positions
 * (notebook 08), on hand-made rows whose values are worked by hand; the quantities are the ones the claims'
 * rules read, and rows the findings must not read (failed, intervened) are left out.
 */
import { describe, expect, it } from "vitest";
import { accuracyFindings } from "../../src/cli/grid-findings.js";
import { CLAIMS, judgeClaims } from "../../src/display/claims.js";
import type { MeasuredModel } from "../../src/grid/measures.js";
import type { GridRow } from "../../src/grid/merge.js";

const models: MeasuredModel[] = [
  { name: "arm", family: "llama", paradigm: "ARM", tier: "tiny" },
  { name: "mdm", family: "llada", paradigm: "MDM", tier: "tiny" },
];

/** A row of a merged grid table; `setting` as the grid labels it, k and gold index read from it. */
function row(model: string, setting: string, id: string, accuracy: number, f1 = accuracy, over: Partial<GridRow> = {}): GridRow {
  const m = /^gold@(\w+)\/k(\d+)/.exec(setting);
  const k = m ? Number(m[2]) : null;
  const goldIndex = m ? (/^\d+$/.test(m[1]) ? Number(m[1]) : Number(id.slice(1)) % (k! + 1)) : null;
  return {
    unit: `${model}|qa|${setting}|s0|0-3`,
    model,
    dataset: "qa",
    seed: 0,
    setting,
    intervention: "none",
    k,
    passages: k === null ? 0 : k + 1,
    goldIndex,
    id,
    row: Number(id.slice(1)),
    question: "?",
    answers: ["a"],
    promptTokens: 10,
    response: "a",
    prediction: "a",
    accuracy,
    f1,
    exactMatch: accuracy,
    error: null,
    ...over,
  };
}

// The ARM, three questions q0–q2:
//   closed-book (acc, F1): (0, 0), (1, 1), (0, 0.5); gold among 4 at a cycling position: (1, 1), (1, 1), (0, 0.5)
//     → per question (Δacc + ΔF1)/2 in points: 100, 0, 0; mean 33.33
//   k = 0: 1, 1, 0; k = 10 at positions 0, 5, 10: q0 (1, 0, 0), q1 (1, 1, 1), q2 (0, 0, 0)
//     → per question at k = 10: 1/3, 1, 0; drop = mean(1, 1, 0) − mean(1/3, 1, 0) = 66.67 − 44.44 = 22.22 points
//     → per position: 0: 2/3, 5: 1/3, 10: 1/3; spread = 66.67 − 33.33 = 33.33 points
const armRows: GridRow[] = [
  row("arm", "closed-book", "q0", 0, 0),
  row("arm", "closed-book", "q1", 1, 1),
  row("arm", "closed-book", "q2", 0, 0.5),
  row("arm", "gold@cycle/k4", "q0", 1, 1),
  row("arm", "gold@cycle/k4", "q1", 1, 1),
  row("arm", "gold@cycle/k4", "q2", 0, 0.5),
  ...["q0", "q1", "q2"].map((id, i) => row("arm", "gold@0/k0/pool", id, [1, 1, 0][i])),
  ...["q0", "q1", "q2"].map((id, i) => row("arm", "gold@0/k10/pool", id, [1, 1, 0][i])),
  ...["q0", "q1", "q2"].map((id, i) => row("arm", "gold@5/k10/pool", id, [0, 1, 0][i])),
  ...["q0", "q1", "q2"].map((id, i) => row("arm", "gold@10/k10/pool", id, [0, 1, 0][i])),
];

describe("accuracy findings of a grid", () => {
  it("RAG gain, drop and spread of one model (hand values), each with its 95 % interval and n", () => {
    const fs = accuracyFindings(armRows, models);
    expect(fs.map((f) => [f.claim, f.quantity, +f.value.toFixed(10), f.n])).toEqual([
      [
        "rag-gain-mdm-vs-arm",
        "RAG gain, points (mean of Acc and F1 gains; gold@cycle/k4 vs closed-book, paired over questions)",
        +(100 / 3).toFixed(10),
        3,
      ],
      [
        "robust-distractors",
        "accuracy drop from 0 to 10 distractors (points; per question the mean over gold@0/k10/pool, gold@5/k10/pool, gold@10/k10/pool)",
        +(200 / 9).toFixed(10),
        3,
      ],
      [
        "robust-position",
        "accuracy spread over gold positions 1, 6, 11 among 10 distractors (best − worst, points)",
        +(100 / 3).toFixed(10),
        3,
      ],
    ]);
    for (const f of fs) {
      expect(f).toMatchObject({ model: "arm", family: "llama", tier: "tiny" });
      // A bootstrap interval over 3 questions: around the value, inside what per-question values allow.
      expect(f.ci95![0]).toBeLessThanOrEqual(f.value);
      expect(f.ci95![1]).toBeGreaterThanOrEqual(f.value);
      expect(f.ci95![0]).toBeGreaterThanOrEqual(f.claim === "rag-gain-mdm-vs-arm" ? 0 : -100);
      expect(f.ci95![1]).toBeLessThanOrEqual(100);
      // The claim's rule reads it.
      const rule = CLAIMS[f.claim].rule;
      expect(rule.kind === "within" ? false : rule.quantity.test(f.quantity)).toBe(true);
    }
    // The RAG gain's interval: resampling 3 per-question gains (100, 0, 0) gives means in {0, 33.3, 66.7, 100}.
    const gain = fs[0];
    expect([0, 100 / 3]).toContainEqual(expect.closeTo(gain.ci95![0], 8));
    expect([100 / 3, 200 / 3, 100]).toContainEqual(expect.closeTo(gain.ci95![1], 8));
  });

  it("leaves out failed and intervened rows, and says nothing a grid's settings cannot give", () => {
    const noise = [
      row("arm", "closed-book", "q3", 1, 1, { error: "boom", accuracy: null, f1: null }),
      row("arm", "gold@cycle/k4", "q0", 0, 0, { intervention: "anchors", unit: "arm|qa|gold@cycle/k4|iv=anchors|s0|0-3" }),
    ];
    expect(accuracyFindings([...armRows, ...noise], models)).toEqual(accuracyFindings(armRows, models));
    // Without closed-book: no RAG gain; with one k: no drop; with one position per k: no spread.
    const only = armRows.filter((r) => r.setting === "gold@cycle/k4" || r.setting === "gold@0/k0/pool");
    expect(accuracyFindings(only, models).map((f) => f.claim)).toEqual(["robust-distractors"]);
    expect(
      accuracyFindings(
        armRows.filter((r) => r.setting === "gold@cycle/k4"),
        models,
      ),
    ).toEqual([]);
  });

  it("an ARM and an MDM: the claims' verdicts read the findings (MDM gains more, degrades less)", () => {
    // The MDM on 3 more questions' worth of the same layout: closed-book all wrong, RAG all right (gain 100 each);
    // no drop (right at k = 0 and at every position of k = 10), so no spread either.
    const mdmRows: GridRow[] = ["q0", "q1", "q2"].flatMap((id) => [
      row("mdm", "closed-book", id, 0, 0),
      row("mdm", "gold@cycle/k4", id, 1, 1),
      row("mdm", "gold@0/k0/pool", id, 1),
      row("mdm", "gold@0/k10/pool", id, 1),
      row("mdm", "gold@5/k10/pool", id, 1),
      row("mdm", "gold@10/k10/pool", id, 1),
    ]);
    const fs = accuracyFindings([...armRows, ...mdmRows], models);
    const mdm = fs.filter((f) => f.model === "mdm");
    expect(mdm.map((f) => [f.claim, f.value, f.ci95])).toEqual([
      ["rag-gain-mdm-vs-arm", 100, [100, 100]],
      ["robust-distractors", 0, [0, 0]],
      ["robust-position", 0, [0, 0]],
    ]);
    const verdict = (claim: string) => judgeClaims(fs.map((f) => ({ ...f, source: "grid" }))).find((r) => r.claim === claim)!.verdicts[0];
    // With 3 questions the ARM's intervals reach the MDM's: its gain resamples to 100 (q0 three times, p = 1/27,
    // above 2.5 %), its drop and spread to 0 (no q0, p = 8/27). So each claim is decided the paper's way in the
    // observed values but not in the intervals: inconclusive, pointing the paper's way.
    for (const claim of ["rag-gain-mdm-vs-arm", "robust-distractors", "robust-position"]) {
      const v = verdict(claim);
      expect([claim, v.verdict]).toEqual([claim, "inconclusive at this n"]);
      expect(v.why).toContain("points the paper's way");
      expect(v.n).toEqual([3, 3]);
    }
  });
});
