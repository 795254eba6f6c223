import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { buildContext, DistractorPool, goldPositionSweep, settingLabel, validateSetting } from "../../src/qa/contexts.js";
import { DatasetError, loadQaJsonl, readQaJsonl, recordId, type QaRecord } from "../../src/qa/datasets.js";
import { normalizeAnswer } from "../../src/qa/metrics.js";
import { HELDOUT } from "./helpers.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-eval-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const rec = (q: string, a: string[], gold: string, extra: object = {}) =>
  JSON.stringify({ question: q, answers: a, ctxs: [{ title: q, text: gold, hasanswer: true, isgold: true }], ...extra });

function write(name: string, lines: string[], gz = false): string {
  const f = path.join(tmp, name);
  const data = Buffer.from(lines.join("\n") + "\n");
  fs.writeFileSync(f, gz ? zlib.gzipSync(data) : data);
  return f;
}

describe("readQaJsonl", () => {
  const lines = [rec("q0", ["a0"], "p0"), "", rec("q1", ["a1", "b1"], "p1", { id: "x" }), rec("q2", ["a2"], "p2")];
  it("reads plain and gzip (by magic bytes, not name) alike, keeps extra fields, skips blank lines", async () => {
    const a = await loadQaJsonl(write("d.jsonl", lines));
    const b = await loadQaJsonl(write("d-gz.jsonl", lines, true));
    expect(b).toEqual(a);
    expect(a.map((r) => [r.row, r.line, r.question])).toEqual([
      [0, 1, "q0"],
      [1, 3, "q1"],
      [2, 4, "q2"],
    ]);
    expect(a[1].extra).toEqual({ id: "x" });
    expect(a[1].id).toBe(recordId(1, "q1", ["a1", "b1"]));
    expect(a[1].id).toMatch(/^1-[0-9a-f]{10}$/);
    expect(a[0].id).not.toBe(recordId(0, "q0", ["other"]));
  });
  it("limit / skip and progress", async () => {
    const f = write("p.jsonl", lines);
    const seen: number[] = [];
    const got = await loadQaJsonl(f, { skip: 1, limit: 1, progressEvery: 1, onProgress: (p) => seen.push(p.records) });
    expect(got.map((r) => r.question)).toEqual(["q1"]);
    expect(seen.length).toBeGreaterThan(0);
    const all: number[] = [];
    await loadQaJsonl(f, { onProgress: (p) => all.push(p.bytesRead) });
    expect(all.at(-1)).toBe(fs.statSync(f).size);
  });
  const bad: [string, string, RegExp][] = [
    ["not json", "{oops", /line 2/],
    ["missing question", JSON.stringify({ answers: [], ctxs: [] }), /line 2: question/],
    ["answers not strings", JSON.stringify({ question: "q", answers: [1], ctxs: [] }), /line 2: answers/],
    ["ctx text missing", JSON.stringify({ question: "q", answers: ["a"], ctxs: [{ title: "t" }] }), /line 2: ctxs\[0\]\.text/],
    [
      "isgold not bool",
      JSON.stringify({ question: "q", answers: ["a"], ctxs: [{ text: "t", isgold: "yes" }] }),
      /line 2: ctxs\[0\]\.isgold/,
    ],
  ];
  for (const [what, line, re] of bad) {
    it(`rejects ${what} with file and line`, async () => {
      const f = write("bad.jsonl", [rec("q", ["a"], "p"), line]);
      const err = await loadQaJsonl(f).catch((e) => e);
      expect(err).toBeInstanceOf(DatasetError);
      expect(err.file).toBe(f);
      expect(err.field).toMatch(re);
    });
  }
  it("names a missing file", async () => {
    const err = await loadQaJsonl(path.join(tmp, "nope.jsonl")).catch((e) => e);
    expect(err).toBeInstanceOf(DatasetError);
    expect(err.message).toMatch(/FLOATSCOPE_NQ/);
  });
  it("a corrupt or truncated gzip file is a DatasetError, not a hang or a silent short read", async () => {
    const bad = path.join(tmp, "bad.jsonl.gz");
    fs.writeFileSync(bad, Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from("garbage garbage garbage")]));
    await expect(loadQaJsonl(bad)).rejects.toBeInstanceOf(DatasetError);
    const full = zlib.gzipSync(Buffer.from((rec("q", ["a"], "p") + "\n").repeat(2000)));
    const trunc = path.join(tmp, "trunc.jsonl.gz");
    fs.writeFileSync(trunc, full.subarray(0, full.length >> 1));
    await expect(loadQaJsonl(trunc)).rejects.toBeInstanceOf(DatasetError);
  });
  it("stops reading early with a limit (streaming)", async () => {
    let n = 0;
    for await (const r of readQaJsonl(HELDOUT, { limit: 3 })) n += r.ctxs.length > 0 ? 1 : 0;
    expect(n).toBe(3);
  });
});

describe("contexts", () => {
  const recs: QaRecord[] = [];
  const pool = async () => {
    if (recs.length === 0) {
      const lines = Array.from({ length: 30 }, (_, i) =>
        rec(`q${i}`, [`ans${i}`], `passage ${i} says ans${i}` + (i === 5 ? " and ans7" : "")),
      );
      recs.push(...(await loadQaJsonl(write("pool.jsonl", lines))));
    }
    return new DistractorPool(recs);
  };
  it("closed-book and oracle", async () => {
    await pool();
    expect(buildContext(recs[0], { kind: "closed-book" })).toEqual({ passages: [], goldIndex: null });
    expect(buildContext(recs[0], { kind: "oracle" }).passages.map((p) => p.text)).toEqual(["passage 0 says ans0"]);
  });
  it("pool distractors: gold at the asked position, distinct, not the question's own, none containing its answer, deterministic", async () => {
    const p = await pool();
    for (const pos of [0, 2, 4]) {
      const c = buildContext(recs[7], { kind: "distractors", k: 4, goldPosition: pos, source: "pool", seed: 3 }, { pool: p });
      expect(c.goldIndex).toBe(pos);
      expect(c.passages[pos].text).toBe("passage 7 says ans7");
      const others = c.passages.filter((_, i) => i !== pos);
      expect(new Set(others.map((x) => x.text)).size).toBe(4);
      for (const o of others) expect(normalizeAnswer(o.text).includes("ans7")).toBe(false); // passage 5 mentions ans7
    }
    const a = buildContext(recs[7], { kind: "distractors", k: 4, goldPosition: 1, source: "pool", seed: 3 }, { pool: p });
    const c = buildContext(recs[7], { kind: "distractors", k: 4, goldPosition: 1, source: "pool", seed: 4 }, { pool: p });
    expect(buildContext(recs[7], { kind: "distractors", k: 4, goldPosition: 1, source: "pool", seed: 3 }, { pool: p })).toEqual(a);
    expect(c.passages.map((x) => x.text)).not.toEqual(a.passages.map((x) => x.text));
  });
  it("pool exclusion is token-bounded: a one-letter answer does not reject every passage", async () => {
    const lines = [
      rec("which letter", ["S"], "the shape is an S"),
      rec("q1", ["x1"], "stars shine"),
      rec("q2", ["x2"], "U.S. is a country"),
      rec("q3", ["x3"], "grass is green"),
      rec("q4", ["x4"], "the letter S again"),
    ];
    const rs = await loadQaJsonl(write("letters.jsonl", lines));
    const c = buildContext(rs[0], { kind: "distractors", k: 3, goldPosition: 0, source: "pool" }, { pool: new DistractorPool(rs) });
    // All three candidates without a standalone "s" ("U.S." normalises to "us"); "the letter S again" is excluded.
    expect(
      c.passages
        .slice(1)
        .map((p) => p.text)
        .sort(),
    ).toEqual(["U.S. is a country", "grass is green", "stars shine"]);
    expect(() =>
      buildContext(rs[0], { kind: "distractors", k: 4, goldPosition: 0, source: "pool" }, { pool: new DistractorPool(rs) }),
    ).toThrow(/Not enough distractor/);
  });
  it("record distractors with the cycle position (as training/evaluate.py)", async () => {
    const world = await loadQaJsonl(HELDOUT, { limit: 7 });
    for (const r of world) {
      const c = buildContext(r, { kind: "distractors", k: 4, goldPosition: "cycle", source: "record" });
      expect(c.goldIndex).toBe(r.row % 5);
      expect(c.passages[c.goldIndex!]).toEqual(r.ctxs[0]);
      expect(c.passages.filter((_, i) => i !== c.goldIndex)).toEqual(r.ctxs.slice(1, 5));
    }
  });
  it("gold-position sweep", () => {
    expect(goldPositionSweep(2, "pool").map(settingLabel)).toEqual(["gold@0/k2/pool", "gold@1/k2/pool", "gold@2/k2/pool"]);
    expect(goldPositionSweep(9, "record", { positions: [0, 4, 9] }).map(settingLabel)).toEqual(["gold@0/k9", "gold@4/k9", "gold@9/k9"]);
    expect(() => goldPositionSweep(3, "pool", { positions: [4] })).toThrow(/gold position/i);
  });
  it("validates settings and labels them", () => {
    expect(() => validateSetting({ kind: "distractors", k: 4, goldPosition: 5, source: "pool" })).toThrow(/gold position/i);
    expect(() => validateSetting({ kind: "distractors", k: -1, goldPosition: 0, source: "pool" })).toThrow(/distractor count/i);
    expect(settingLabel({ kind: "distractors", k: 9, goldPosition: 4, source: "record" })).toBe("gold@4/k9");
    expect(settingLabel({ kind: "distractors", k: 9, goldPosition: "cycle", source: "pool" })).toBe("gold@cycle/k9/pool");
  });
  it("a record without a gold passage fails in oracle, naming the line", async () => {
    const [r] = await loadQaJsonl(write("nogold.jsonl", [JSON.stringify({ question: "q", answers: ["a"], ctxs: [{ text: "t" }] })]));
    expect(() => buildContext(r, { kind: "oracle" }, { file: "nogold.jsonl" })).toThrow(/line 1/);
  });
});
