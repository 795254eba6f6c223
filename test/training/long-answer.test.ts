/**
 * The long-answer task: the fact scorer agrees with its hand-worked vectors in TypeScript
 * (src/qa/metrics.ts) and in Python (training/qa_metrics.py), and the committed held-out file
 * models/world/eval-heldout-long.jsonl.gz is what training/world.py writes, with records the scorer can read.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { factScores, splitClaims, templateParts, type LongFact } from "../../src/qa/metrics.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const VECTORS = path.join(ROOT, "test/training/long-answer-vectors.json");
const PY = ["python3", "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import sys; assert sys.version_info >= (3, 10)"]).status === 0);

interface Case {
  pred: string;
  why: string;
  recall: number;
  precision: number;
  f1: number;
  complete: number;
  claims: number;
  stated: number[];
}
const V = JSON.parse(fs.readFileSync(VECTORS, "utf8")) as { facts: LongFact[]; cases: Case[] };

describe("long-answer fact scorer", () => {
  it("template parts and claims follow the documented rule", () => {
    expect(templateParts("The favourite colour of {s} is {v} .")).toEqual(["favourite colour of", "is"]);
    expect(templateParts("{s} is a {v} .")).toEqual(["is"]);
    expect(splitClaims("X was born in 1995 and is a carpenter . Grandma, hi")).toEqual([
      "x was born in 1995",
      "is carpenter",
      "grandma",
      "hi",
    ]);
  });

  for (const c of V.cases) {
    it(`TS: ${c.why}`, () => {
      const r = factScores(c.pred, V.facts);
      expect(r.recall).toBeCloseTo(c.recall, 12);
      expect(r.precision).toBeCloseTo(c.precision, 12);
      expect(r.f1).toBeCloseTo(c.f1, 12);
      expect(r.complete).toBe(c.complete);
      expect(r.claims).toBe(c.claims);
      expect(r.stated).toEqual(c.stated);
    });
  }

  it.skipIf(!PY)("Python's fact_scores gives the same vectors", () => {
    const code = `
import json, sys
sys.path.insert(0, "training")
from qa_metrics import fact_scores
v = json.load(open(sys.argv[1]))
print(json.dumps([fact_scores(c["pred"], v["facts"]) for c in v["cases"]]))
`;
    const r = spawnSync(PY!, ["-c", code, VECTORS], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout) as Case[];
    V.cases.forEach((c, i) => {
      expect(got[i].recall, c.why).toBeCloseTo(c.recall, 12);
      expect(got[i].precision, c.why).toBeCloseTo(c.precision, 12);
      expect(got[i].f1, c.why).toBeCloseTo(c.f1, 12);
      expect(got[i].claims, c.why).toBe(c.claims);
      expect(got[i].stated, c.why).toEqual(c.stated);
    });
  });
});

describe("models/world/eval-heldout-long.jsonl.gz", () => {
  const lines = zlib
    .gunzipSync(fs.readFileSync(path.join(ROOT, "models/world/eval-heldout-long.jsonl.gz")))
    .toString("utf8")
    .trim()
    .split("\n");
  const recs = lines.map((l) => JSON.parse(l));

  it("holds 200 long-answer questions about test people whose reference answers score recall 1 and precision 1", () => {
    expect(recs.length).toBe(200);
    const split = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(ROOT, "models/world/split.json.gz"))).toString("utf8"));
    const test = new Set<string>(split.test);
    for (const r of recs) {
      expect(r.kind).toBe("long");
      expect(test.has(r.subject)).toBe(true);
      expect(r.facts.length).toBeGreaterThanOrEqual(3);
      expect(r.facts.length).toBeLessThanOrEqual(6);
      // ctxs[:gold_count] are the gold passages (about the subject), then 4 distractors (other people)
      expect(r.ctxs.map((c: { isgold: boolean }) => c.isgold)).toEqual([...Array(r.gold_count).fill(true), ...Array(4).fill(false)]);
      for (const c of r.ctxs.slice(r.gold_count)) expect(c.title).not.toBe(r.subject);
      for (const f of r.facts) expect(r.ctxs[f.ctx].text).toContain(f.statement);
      const s = factScores(r.answers[0], r.facts);
      expect([s.recall, s.precision]).toEqual([1, 1]);
    }
  });

  it("reads with the harness's QA reader without issues (several golds are by design in a long record)", async () => {
    const rs = await loadQaJsonl(path.join(ROOT, "models/world/eval-heldout-long.jsonl.gz"));
    expect(rs.length).toBe(200);
    expect(rs.filter((r) => r.extra.gold_count !== 1).length).toBeGreaterThan(0); // the case the reader must accept
    expect(rs.flatMap((r) => r.issues ?? [])).toEqual([]);
  });

  it.skipIf(!PY)("is what training/world.py writes (and the short files stay as committed)", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "long-world-"));
    try {
      const r = spawnSync(PY!, ["training/world.py", "--out", out], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      const read = (p: string) => zlib.gunzipSync(fs.readFileSync(p));
      expect(
        read(path.join(out, "eval-heldout-long.jsonl.gz")).equals(read(path.join(ROOT, "models/world/eval-heldout-long.jsonl.gz"))),
      ).toBe(true);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
