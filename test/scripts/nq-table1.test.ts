/**
 * scripts/lib/nq-table1.ts (the NQ-open Table 1 analog's arithmetic) and scripts/measure-nq.ts's inputs:
 * the Wilson interval and the paired gain worked by hand, the findings file read back by
 * scripts/render-claims.ts, and bad input as one message naming the file and the field (no stack trace).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readGrid } from "../../src/grid/grid.js";
import { REAL_BASE_MODEL_NAMES, REAL_MODEL_NAMES } from "../../src/notebook/models.js";
import { settingLabel, type EvalSetting } from "../../src/qa/contexts.js";
import {
  accuracyCell,
  estimateSeconds,
  meanCell,
  NQ_GAIN_QUANTITY,
  nqFindings,
  nqTier,
  pairScores,
  paperNq,
  table1Row,
  wilsonInterval,
  type ScoredRow,
} from "../../scripts/lib/nq-table1.js";

const ROOT = path.resolve(__dirname, "../..");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "nq-table1-"));
afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }));

describe("Wilson interval (hand-worked, z = 1.95996)", () => {
  it("5 of 10: centre 0.5, half-width z·√(0.025 + z²/400)/(1 + z²/10) = 0.26341", () => {
    // z² = 3.84146; 0.025 + 0.0096036 = 0.0346036, √ = 0.186020, × z = 0.364592, / 1.384146 = 0.263405.
    const [lo, hi] = wilsonInterval(5, 10);
    expect(lo).toBeCloseTo(0.236595, 5);
    expect(hi).toBeCloseTo(0.763405, 5);
  });
  it("0 of 10 is not [0, 0]: the upper end is (z²/n)/(1 + z²/n) = 0.27753; 10 of 10 mirrors it", () => {
    const [lo, hi] = wilsonInterval(0, 10);
    expect(lo).toBe(0);
    expect(hi).toBeCloseTo(0.384146 / 1.384146, 5);
    const [lo1, hi1] = wilsonInterval(10, 10);
    expect(lo1).toBeCloseTo(1 - 0.384146 / 1.384146, 5);
    expect(hi1).toBe(1);
  });
  it("accuracy cells are in %, and refuse scores that are not 0/1", () => {
    const c = accuracyCell([1, 0, 1, 0, 1, 0, 1, 0, 1, 0]);
    expect(c.value).toBe(50);
    expect(c.ci95![0]).toBeCloseTo(23.6595, 3);
    expect(c.ci95![1]).toBeCloseTo(76.3405, 3);
    expect(c.n).toBe(10);
    expect(() => accuracyCell([0.5])).toThrow(/0 or 1/);
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
  });
});

describe("bootstrap cells and the paired RAG gain", () => {
  it("two values 0 and 100: resampled means are 0, 50, 100 with chances ¼, ½, ¼, so the 95 % interval is [0, 100]", () => {
    const c = meanCell([0, 100]);
    expect(c.value).toBe(50);
    expect(c.ci95).toEqual([0, 100]);
    expect(meanCell([7]).ci95).toBeNull();
  });

  // Four questions; with retrieval every F1 is 0.1 higher, one accuracy flips from 0 to 1.
  const rows: ScoredRow[] = [
    { model: "m", setting: "closed-book", id: "q1", accuracy: 0, f1: 0 },
    { model: "m", setting: "closed-book", id: "q2", accuracy: 0, f1: 0.2 },
    { model: "m", setting: "closed-book", id: "q3", accuracy: 1, f1: 0.5 },
    { model: "m", setting: "closed-book", id: "q4", accuracy: 1, f1: 0.8 },
    // RAG rows in another order: pairing is by id.
    { model: "m", setting: "rag", id: "q4", accuracy: 1, f1: 0.9 },
    { model: "m", setting: "rag", id: "q3", accuracy: 1, f1: 0.6 },
    { model: "m", setting: "rag", id: "q2", accuracy: 0, f1: 0.3 },
    { model: "m", setting: "rag", id: "q1", accuracy: 1, f1: 0.1 },
    // Another model's rows are not read.
    { model: "other", setting: "rag", id: "q1", accuracy: 0, f1: 0 },
  ];

  it("gains are per question: F1 +10 on every question gives the interval [10, 10], though the two F1 intervals overlap", () => {
    const row = table1Row(pairScores(rows, "m", "closed-book", "rag"), { model: "m", family: "dream", tier: "real-base" })!;
    expect(row.gain.f1.value).toBeCloseTo(10, 9);
    expect(row.gain.f1.ci95![0]).toBeCloseTo(10, 9);
    expect(row.gain.f1.ci95![1]).toBeCloseTo(10, 9);
    // Unpaired, the settings' own intervals overlap widely (closed 37.5, RAG 47.5 over the same spread).
    expect(row.closedBook.f1.value).toBeCloseTo(37.5, 9);
    expect(row.rag.f1.value).toBeCloseTo(47.5, 9);
    expect(row.rag.f1.ci95![0]).toBeLessThan(row.closedBook.f1.ci95![1]);
    // Accuracy gains per question 100, 0, 0, 0 → 25; the claim's gain (Acc + F1)/2 per question 55, 5, 5, 5 → 17.5.
    expect(row.gain.accuracy.value).toBe(25);
    expect(row.gain.mean.value).toBeCloseTo(17.5, 9);
    expect(row.closedBook.accuracy.value).toBe(50);
    expect(row.rag.accuracy.value).toBe(75);
    expect(row.gain.mean.n).toBe(4);
    expect(row.unpaired).toBe(0);
  });

  it("a question that failed or is missing in one setting is left out of both; the last row of an id wins", () => {
    const more: ScoredRow[] = [
      ...rows,
      { model: "m", setting: "closed-book", id: "q5", accuracy: 1, f1: 1 }, // no RAG row
      { model: "m", setting: "rag", id: "q2", error: "SettingsError: too long" }, // q2's RAG row now failed
      { model: "m", setting: "closed-book", id: "q1", accuracy: 1, f1: 0 }, // q1 rerun: this row counts
    ];
    const p = pairScores(more, "m", "closed-book", "rag");
    expect(p.ids).toEqual(["q1", "q3", "q4"]);
    expect(p.closed.accuracy).toEqual([1, 1, 1]);
    expect(p.rag.f1).toEqual([0.1, 0.6, 0.9]);
    expect(p.unpaired).toBe(2);
    expect(table1Row(pairScores(more, "nobody", "closed-book", "rag"), { model: "x", family: "llama", tier: "real" })).toBeNull();
  });

  it("the paper's NQ cells for the family's paper model: Llama gain ((35.92 − 15.69) + (50.63 − 32.07))/2 = 19.395", () => {
    expect(paperNq("llama")).toMatchObject({
      model: "Llama",
      closedBook: { accuracy: 15.69, f1: 32.07 },
      rag: { accuracy: 35.92, f1: 50.63 },
    });
    expect(paperNq("llama")!.gain).toBeCloseTo(19.395, 9);
    expect(paperNq("dream")!.gain).toBeCloseTo((38.66 - 17.48 + (53.22 - 27.13)) / 2, 9); // 23.635
    expect(paperNq("gpt2")).toBeNull();
  });

  it("the n = 300 estimate is Σ models (load + Σ settings median × n)", () => {
    const s = estimateSeconds(
      [
        { loadSeconds: 10, msPerQuestion: { a: 1000, b: 2000 } },
        { loadSeconds: 5, msPerQuestion: { a: 500 } },
      ],
      300,
    );
    expect(s).toBe(10 + 300 + 600 + 5 + 150);
  });
});

/** Scores for a tier where the MDM gains clearly more than its ARM twin. */
function pairRows(model: string, gainEvery: number, n: number): ScoredRow[] {
  const out: ScoredRow[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ model, setting: "closed-book", id: `q${i}`, accuracy: 0, f1: 0.1 });
    out.push({
      model,
      setting: "gold@cycle/k4/pool",
      id: `q${i}`,
      accuracy: i % gainEvery === 0 ? 1 : 0,
      f1: i % gainEvery === 0 ? 0.9 : 0.1,
    });
  }
  return out;
}

function runScript(script: string, args: string[], env: Record<string, string | undefined> = {}) {
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts", script), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, FLOATSCOPE_NQ: "", ...env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the findings file, read back by render-claims", () => {
  it("gives the rag-gain verdict on the NQ tier and lists the Table 1 cells with the paper's numbers", () => {
    const rows = [...pairRows("smollm2-135m-dream-world", 2, 40), ...pairRows("smollm2-135m-causal-world", 10, 40)];
    const table = [
      table1Row(pairScores(rows, "smollm2-135m-dream-world", "closed-book", "gold@cycle/k4/pool"), {
        model: "smollm2-135m-dream-world",
        family: "dream",
        tier: "real-base",
      })!,
      table1Row(pairScores(rows, "smollm2-135m-causal-world", "closed-book", "gold@cycle/k4/pool"), {
        model: "smollm2-135m-causal-world",
        family: "llama",
        tier: "real-base",
      })!,
    ];
    // MDM: gains on 20 of 40 questions (per question (100 + 80)/2 = 90) → 45; twin: 4 of 40 → 9.
    expect(table[0].gain.mean.value).toBeCloseTo(45, 9);
    expect(table[1].gain.mean.value).toBeCloseTo(9, 9);
    const findings = nqFindings(table, "gold among 4 distractors");
    expect(findings).toHaveLength(10);
    expect(new Set(findings.map((f) => f.tier))).toEqual(new Set([nqTier("real-base")]));
    const file = path.join(TMP, "nq-table1.findings.json");
    fs.writeFileSync(
      file,
      JSON.stringify({ notebook: "measure-nq", findings, provenance: { commit: "x", wallSeconds: 1 }, report: { table } }),
    );
    const r = runScript("render-claims.ts", [file]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const md = r.stdout;
    // The verdict line of the NQ tier: the MDM's interval lies above the twin's.
    expect(md).toMatch(/- \*\*real-base · NQ-open tier: reproduced\*\* \(n = 40\)/);
    // Our gain with its interval, and the paper's gain for the family's paper model, in the findings table.
    const gainLine = md.split("\n").find((l) => l.startsWith("| smollm2-135m-dream-world") && l.includes(NQ_GAIN_QUANTITY))!;
    expect(gainLine).toContain("paper's Dream: 23.64");
    expect(gainLine).toContain("| 45 |");
    expect(md).toContain("NQ-open accuracy closed-book, %; paper's Llama: 15.69");
    expect(md).toContain("NQ-open F1 with gold among 4 distractors, %; paper's Dream: 53.22");
  });
});

describe("measure-nq --merged: the table from a grid's merged rows", () => {
  it("writes the findings the library computes from the same rows, with the provenance block", () => {
    const rows = [...pairRows("smollm2-135m-causal-world", 10, 40), ...pairRows("smollm2-135m-dream-world", 2, 40)];
    const merged = path.join(TMP, "grid-merged.jsonl");
    // Merged rows carry more columns (unit, dataset, seed, …): they are read and ignored.
    fs.writeFileSync(merged, rows.map((r) => JSON.stringify({ unit: "u", dataset: "nq", seed: 0, ...r })).join("\n") + "\n");
    const out = path.join(TMP, "merged.findings.json");
    const r = runScript("measure-nq.ts", ["--merged", merged, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const file = JSON.parse(fs.readFileSync(out, "utf8")) as Record<string, any>;
    const expected = (["smollm2-135m-dream-world", "smollm2-135m-causal-world"] as const).map((model) =>
      table1Row(pairScores(rows, model, "closed-book", "gold@cycle/k4/pool"), {
        model,
        family: model.includes("dream") ? "dream" : "llama",
        tier: "real-base",
      })!,
    );
    expect(file.notebook).toBe("measure-nq");
    expect(file.findings).toEqual(nqFindings(expected, "gold among 4 distractors"));
    expect(Object.keys(file.provenance).sort()).toEqual(["command", "commit", "date", "dirty", "machine", "settings", "wallSeconds"]);
    expect(file.provenance.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(file.provenance.settings).toMatchObject({ k: 4, closedBook: "closed-book", rag: "gold@cycle/k4/pool" });
    expect(file.verdicts).toEqual([expect.objectContaining({ tier: "real-base · NQ-open", verdict: "reproduced" })]);
  });
});

describe("measure-nq: bad input is one message naming the file and the field", () => {
  const noStack = (s: string) => expect(s).not.toMatch(/^\s+at /m);

  it("no data path: usage error naming the variable (exit 2)", () => {
    const r = runScript("measure-nq.ts", []);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("give --path <nq-open-oracle.jsonl.gz> or set FLOATSCOPE_NQ");
    noStack(r.stderr);
  });

  it("a missing file (from the variable), a malformed line and a record without a gold passage name the file and the field", () => {
    const missing = path.join(TMP, "absent.jsonl.gz");
    let r = runScript("measure-nq.ts", [], { FLOATSCOPE_NQ: missing });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`file: ${missing}`);
    noStack(r.stderr);

    const bad = path.join(TMP, "bad.jsonl");
    fs.writeFileSync(
      bad,
      '{"question": "q", "answers": ["a"], "ctxs": [{"title": "t", "text": "x", "isgold": true}]}\n{"question": "q2", "answers": "a"}\n',
    );
    r = runScript("measure-nq.ts", ["--path", bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`file: ${bad}`);
    expect(r.stderr).toContain("field: line 2: answers");
    noStack(r.stderr);

    const noGold = path.join(TMP, "no-gold.jsonl");
    fs.writeFileSync(noGold, '{"question": "q", "answers": ["a"], "ctxs": [{"title": "t", "text": "x", "isgold": false}]}\n');
    r = runScript("measure-nq.ts", ["--path", noGold, "--n", "1"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Record has no gold passage");
    expect(r.stderr).toContain("field: line 1: ctxs[*].isgold");
    noStack(r.stderr);

    // More questions than the file has: the flag is the field.
    r = runScript("measure-nq.ts", ["--path", bad.replace("bad", "no-gold"), "--n", "2"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("field: --n");
    expect(r.stderr).toContain("expected: at most 1");
  });

  it("a bad flag value and a bad merged table", () => {
    let r = runScript("measure-nq.ts", ["--n", "many", "--path", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--n needs an integer ≥ 1, got "many"');
    const merged = path.join(TMP, "merged.jsonl");
    fs.writeFileSync(merged, '{"model": "m", "setting": "closed-book", "id": "q1", "accuracy": 1, "f1": 1}\nnot json\n');
    r = runScript("measure-nq.ts", ["--merged", merged]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`file: ${merged}`);
    expect(r.stderr).toContain("field: line 2");
    noStack(r.stderr);
  });
});

describe("the committed grid file runs the same questions", () => {
  it("findings/nq-table1.grid.json names the real tiers' models and the script's two settings, 300 questions of ${FLOATSCOPE_NQ}", () => {
    const before = process.env.FLOATSCOPE_NQ;
    process.env.FLOATSCOPE_NQ = path.join(TMP, "nq.jsonl.gz");
    try {
      const g = readGrid(path.join(ROOT, "findings", "nq-table1.grid.json"));
      // Model names are the folder names measure-nq gives its rows, so `--merged` finds their tier and family.
      expect(g.models.map((m) => m.name).sort()).toEqual(
        [...Object.values(REAL_MODEL_NAMES), ...Object.values(REAL_BASE_MODEL_NAMES)].sort(),
      );
      expect(Object.fromEntries(g.models.map((m) => [m.name, m.tier]))).toEqual({
        ...Object.fromEntries(Object.values(REAL_MODEL_NAMES).map((n) => [n, "real"])),
        ...Object.fromEntries(Object.values(REAL_BASE_MODEL_NAMES).map((n) => [n, "real-base"])),
      });
      expect(g.datasets).toMatchObject([{ name: "nq", path: process.env.FLOATSCOPE_NQ, skip: 0, limit: 300 }]);
      expect(g.seeds).toEqual([0]);
      // measure-nq's settings (k = 4): closed-book and the gold passage among 4 pool distractors, gold position row mod 5.
      const script: EvalSetting[] = [
        { kind: "closed-book" },
        { kind: "distractors", k: 4, goldPosition: "cycle", source: "pool", seed: 0 },
      ];
      expect(g.settings.map((s) => settingLabel(s))).toEqual(script.map(settingLabel));
      expect(script.map(settingLabel)).toEqual(["closed-book", "gold@cycle/k4/pool"]);
    } finally {
      if (before === undefined) delete process.env.FLOATSCOPE_NQ;
      else process.env.FLOATSCOPE_NQ = before;
    }
  });
});
