/**
 * scripts/lib/frontier-measure.ts (the frontier measurement's pure parts) and scripts/measure-frontier.ts
 * --table: per-sample rows pooled into numbers with intervals on two hand-worked samples, the findings
 * CLAIMS.md reads, the rows file read back after a killed run, the Markdown table of a hand-written findings
 * file, and the README's table block equal to the renderer's output for the committed findings file.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { emptyLayerStats } from "../../src/analysis/frontier.js";
import { collectFindings } from "../../src/display/claims.js";
import { FloatscopeError } from "../../src/util/errors.js";
import {
  FRONTIER_FINDINGS,
  FRONTIER_PENDING,
  FRONTIER_SETTINGS,
  frontierFindings,
  frontierTable,
  parseRows,
  poolRows,
  reportOf,
  rowKey,
  type FrontierRow,
  type FrontierTraceStats,
} from "../../scripts/lib/frontier-measure.js";

const ROOT = path.resolve(__dirname, "../..");
const FIXTURE = path.join(__dirname, "fixtures/frontier.findings.json");

type Layer = FrontierTraceStats["layers"][number];
const zero: Layer = emptyLayerStats(0, 4);
function row(record: string, layer: Partial<Layer>): FrontierRow {
  return {
    setting: "long64",
    model: "m",
    family: "dream",
    causal: false,
    fingerprint: "sha256:x",
    record,
    answer: "",
    steps: 4,
    promptLength: 10,
    stats: { model: "m", sample: record, rule: "top-k (k = 1)", radius: 2, layers: [{ ...zero, ...layer }] },
  };
}

// Two samples, one layer each, worked by hand. Every measure is a ratio of sums over samples; with two
// samples a bootstrap resample is AA, AB or BB, so the 95 % interval runs from the AA value to the BB value.
//   A: 3 distinct anchors, top-1 moved; 4 anchors at a frontier, 1 within 2 (chance 2 of 4), distance 8 (chance 12);
//      2 steps write a fact, both anchors in its source (shuffled 1)
//   B: 1 distinct anchor, never moved; 6 anchors, all 6 within (chance 3), distance 0 (chance 18); no fact written
const A = row("a", {
  distinct: 3,
  moves: 2,
  anchors: 4,
  within: 1,
  distance: 8,
  chanceWithin: 2,
  chanceDistance: 12,
  sourceSteps: 2,
  sourceHits: 2,
  sourceShuffled: 1,
});
const B = row("b", { distinct: 1, moves: 0, anchors: 6, within: 6, distance: 0, chanceWithin: 3, chanceDistance: 18 });

describe("poolRows", () => {
  const report = poolRows([A, B], { long64: FRONTIER_SETTINGS.long64 });
  const g = report.groups[0];

  it("pools ratios of sums over samples, with the interval from the AA to the BB resample", () => {
    expect(report.groups).toHaveLength(1);
    expect(g.samples).toBe(2);
    expect(g.measures.distinct).toMatchObject({ value: 2, lo: 1, hi: 3, baseline: null, n: 2 }); // (3 + 1) / 2 layers
    expect(g.measures.moves).toMatchObject({ value: 0.5, lo: 0, hi: 1, n: 2 }); // A's layer moved, B's did not
    const w = g.measures.frontierWithin!;
    expect(w.value).toBeCloseTo(0.7, 12); // (1 + 6) / (4 + 6)
    expect([w.lo, w.hi]).toEqual([0.25, 1]); // AA 1/4, BB 6/6
    expect(w.baseline).toEqual([0.5, 0.5, 0.5]); // (2 + 3) / 10, and 2/4 = 3/6 in every resample
    expect(w.difference![0]).toBeCloseTo(0.2, 12);
    expect([w.difference![1], w.difference![2]]).toEqual([-0.25, 0.5]);
    const d = g.measures.frontierDistance!;
    expect(d.value).toBeCloseTo(0.8, 12); // 8 / 10
    expect(d.baseline![0]).toBeCloseTo(3, 12); // (12 + 18) / 10
    expect(d.difference![0]).toBeCloseTo(-2.2, 12);
  });

  it("counts only samples with a denominator, and leaves out measures without one", () => {
    // Only A writes a fact: 2 hits of 2 steps, shuffled 1 of 2; BB resamples have no step and are dropped.
    expect(g.measures.source).toMatchObject({ value: 1, lo: 1, hi: 1, baseline: [0.5, 0.5, 0.5], n: 1 });
    expect(g.measures.unmaskedWithin).toBeNull(); // no step unmasked anything
  });

  it("turns the pooled numbers into findings in percent, each with its baseline and difference", () => {
    const f = frontierFindings(report, "real-base");
    const by = (q: RegExp) => f.filter((x) => q.test(x.quantity));
    const within = by(/within 2 positions of the frontier/);
    expect(within.map((x) => x.value)).toEqual([expect.closeTo(70, 9), 50, expect.closeTo(20, 9)]);
    expect(within[0].ci95).toEqual([25, 100]);
    expect(within[1].quantity).toMatch(/, chance$/);
    expect(within[2].quantity).toMatch(/, minus chance \(points\)$/);
    expect(within[2].ci95).toEqual([-25, 50]);
    expect(by(/distinct top-1/)[0]).toMatchObject({ value: 2, ci95: [1, 3], n: 2, claim: "anchors-float-mdm", tier: "real-base" });
    expect(by(/fact written/).map((x) => x.n)).toEqual([1, 1, 1]);
    expect(by(/tokens unmasked/)).toEqual([]);
    // What CLAIMS.md reads passes the findings checks.
    expect(collectFindings([{ file: "x.findings.json", json: { notebook: "measure-frontier", findings: f } }])).toHaveLength(f.length);
  });

  it("labels the causal twin's rows by how it decodes, not by the setting's order", () => {
    const twin = { ...A, model: "twin", causal: true };
    const r = poolRows([A, twin], { long64: FRONTIER_SETTINGS.long64 });
    expect(r.groups.map((x) => x.label)).toEqual([
      "64 tokens in 64 steps, long answers, Dream entropy order",
      "64 new tokens, greedy left to right, long answers",
    ]);
  });

  it("pools the long answers' fact recall and precision (the cards' rule) over the samples that carry them", () => {
    // A states every fact with half its claims supported, B half the facts with every claim: means 0.75, and a
    // resample is AA (1 / 0.5), AB or BB (0.5 / 1); a row without scores (written before them) is left out
    const a = { ...A, facts: { total: 4, stated: 4, missing: 0, recall: 1, precision: 0.5 } };
    const b = { ...B, facts: { total: 4, stated: 2, missing: 0, recall: 0.5, precision: 1 } };
    const old = { ...B, record: "c", facts: { total: 4, stated: 2, missing: 0 } };
    const r = poolRows([a, b, old], { long64: FRONTIER_SETTINGS.long64 }).groups[0];
    expect(r.answers?.recall).toMatchObject({ value: 0.75, lo: 0.5, hi: 1, n: 2 });
    expect(r.answers?.precision).toMatchObject({ value: 0.75, lo: 0.5, hi: 1, n: 2 });
    const f = frontierFindings({ ...report, groups: [r] }, "real-base").filter((x) => /fact recall/.test(x.quantity));
    expect(f).toEqual([expect.objectContaining({ value: 75, ci95: [50, 100], n: 2 })]);
    expect(g.answers).toBeUndefined(); // rows without scores: no answers entry, the table shows "—"
  });

  it("refuses rows measured with another radius", () => {
    const C = row("c", { anchors: 1 });
    C.stats.radius = 3;
    expect(() => poolRows([A, C], { long64: FRONTIER_SETTINGS.long64 })).toThrow(/radius 2/);
  });
});

describe("parseRows", () => {
  const line = (r: FrontierRow) => JSON.stringify(r);

  it("reads the rows back and leaves out a last line cut short by a killed run", () => {
    const text = `${line(A)}\n${line(B)}\n${line(A).slice(0, 40)}`;
    const { rows, truncated } = parseRows(text, "rows.jsonl");
    expect(rows.map(rowKey)).toEqual([rowKey(A), rowKey(B)]);
    expect(truncated).toBe(true);
    expect(parseRows(`${line(A)}\n`, "rows.jsonl").truncated).toBe(false);
  });

  it("names the file and the line of a bad row in the middle", () => {
    const bad = () => parseRows(`${line(A)}\n{"setting": 1}\n${line(B)}\n`, "rows.jsonl");
    expect(bad).toThrow(FloatscopeError);
    expect(bad).toThrow(/rows\.jsonl/);
    expect(bad).toThrow(/line 2/);
    expect(() => parseRows(`not json\n${line(B)}\n`, "rows.jsonl")).toThrow(/line 1/);
  });
});

// The table of the hand-written fixture, written out by hand from its numbers and the claims table's number
// format (3 significant digits, ties to the larger: 18.75 → 18.8).
const HEAD =
  "| setting | model | n | distinct top-1 anchor positions per layer over the steps | layers whose top-1 anchor moves at least once (%) | top-1 anchors within 2 positions of the frontier (%) vs chance | top-1 anchor's distance to the frontier (positions) vs chance | deep-layer top-1 anchors inside the passage span of the fact written at that step (%) vs steps shuffled | long-answer fact recall / precision (%) |";
const EXPECTED = [
  HEAD,
  "|---|---|---|---|---|---|---|---|---|",
  "| 32 tokens in 32 steps, LLaDA low-confidence order | smollm2-135m-dream-world (MDM) | 100 | 1.50 [1.25, 1.75] | 12.5 [6.25, 18.8] | 6.25 [3.13, 9.38]; chance 12.5 [12.5, 12.5]; difference -6.25 [-9.38, -3.13] | 48 [40, 56]; chance 32 [30, 34]; difference 16 [8, 24] | — | — |",
  "| 64 new tokens, greedy left to right, long answers | smollm2-135m-causal-world (causal twin, greedy) | 100 | 1 [1, 1] | 0 [0, 0] | — | — | 50 [37.5, 62.5]; steps shuffled 25 [18.8, 31.3]; difference 25 [12.5, 37.5] (n = 80) | 50 [40, 60] / 75 [70, 80] |",
].join("\n");

describe("frontierTable", () => {
  const fixture = JSON.parse(fs.readFileSync(FIXTURE, "utf8")) as unknown;

  it("renders the hand-written findings file as the hand-written table", () => {
    expect(frontierTable(reportOf(fixture, FIXTURE))).toBe(EXPECTED);
  });

  it("escapes model names", () => {
    const r = reportOf(fixture, FIXTURE);
    const odd = { ...r, groups: [{ ...r.groups[0], model: "a|b*c" }] };
    expect(frontierTable(odd)).toContain("| a\\|b\\*c (MDM) |");
  });

  it("is what `measure-frontier.ts --table` prints; a file without a report is one message naming it", () => {
    const run = (file: string) =>
      spawnSync(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/measure-frontier.ts"), "--table", file], {
        encoding: "utf8",
        cwd: ROOT,
      });
    const ok = run(FIXTURE);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(EXPECTED + "\n");
    const notFrontier = path.join(ROOT, "test/scripts/fixtures/frontier-no-report.findings.json");
    fs.writeFileSync(notFrontier, JSON.stringify({ notebook: "x", findings: [] }));
    try {
      const bad = run(notFrontier);
      expect(bad.status).toBe(1);
      expect(bad.stderr).toMatch(/frontier-no-report\.findings\.json/);
      expect(bad.stderr).toMatch(/report/);
      expect(bad.stderr).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      fs.rmSync(notFrontier);
    }
  });
});

describe("measure-frontier.ts usage", () => {
  it("refuses a family it does not measure with the usage line and exit 2, before opening any model", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/measure-frontier.ts"), "--families", "dream,gpt"], {
      encoding: "utf8",
      cwd: ROOT,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--families is dream, llama or both, got "gpt"/);
    expect(r.stderr).toMatch(/usage: .*--families dream,llama/);
    expect(r.stdout).toBe("");
  });
});

describe("README's model-tier section", () => {
  const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
  const block = /<!-- frontier-table[^>]*-->\n([\s\S]*?)\n<!-- \/frontier-table -->/.exec(readme)?.[1];

  it("holds the frontier table block and the command that makes it", () => {
    expect(block, "README.md has a <!-- frontier-table --> … <!-- /frontier-table --> block").toBeDefined();
    expect(readme).toContain(`npx tsx scripts/measure-frontier.ts --table ${FRONTIER_FINDINGS}`);
  });

  it("shows the renderer's table of the committed findings file (or says it is not measured yet)", () => {
    const file = path.join(ROOT, FRONTIER_FINDINGS);
    const expected = fs.existsSync(file) ? frontierTable(reportOf(JSON.parse(fs.readFileSync(file, "utf8")), file)) : FRONTIER_PENDING;
    expect(block).toBe(expected);
  });
});
