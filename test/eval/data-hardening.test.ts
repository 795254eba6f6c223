/**
 * QA data a careful user can hand to `eval` that used to abort the process, hang, crash or pass
 * silently: a gzip bomb (one line inflating to 700 MB), a valid 50 MB line, a 1 MB line that was
 * tokenized whole before the length check, empty and blank files, suspicious records (no answers,
 * two gold passages, a missing title, missing fields), and damaged resume (`--out`) files.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { DatasetError, describeDataReport, loadQaJsonl, newDataReport, readQaJsonl, type QaRecord } from "../../src/qa/datasets.js";
import { readDoneKeys, readResults, ResultsFileError, runEval } from "../../src/qa/runner.js";
import type { ChatMessage, Encoding } from "../../src/runtime/types.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";
import { HELDOUT, PARITY } from "./helpers.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-data-hard-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const rec = (q: string, a: string[], ctxs: object[] = [{ title: "T", text: "p", hasanswer: true, isgold: true }]) =>
  JSON.stringify({ question: q, answers: a, ctxs });

function write(name: string, text: string | Buffer): string {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
}

async function failure(p: Promise<unknown>): Promise<DatasetError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(DatasetError);
  return e as DatasetError;
}

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "",
    err = "";
  const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}

describe("streaming caps", () => {
  it("a gzip whose one line inflates to 700 MB stops at the per-line cap with the line number (no abort, no 700 MB in memory)", async () => {
    // Concatenated gzip members (a valid gzip file): a record opening, 70 × 10 MB of 'a', never a newline.
    const tenMb = zlib.gzipSync(Buffer.alloc(10 * 2 ** 20, 0x61), { level: 9 });
    const parts = [zlib.gzipSync(Buffer.from(rec("ok", ["a"]) + "\n" + '{"question": "')), ...Array.from({ length: 70 }, () => tenMb)];
    const f = write("bomb.jsonl.gz", Buffer.concat(parts));
    expect(fs.statSync(f).size).toBeLessThan(2 ** 20);
    const before = process.memoryUsage().rss;
    const e = await failure(loadQaJsonl(f));
    expect(e.field).toMatch(/^line 2/);
    expect(e.message).toMatch(/longer than/);
    expect(e.found).toMatch(/more than 8388608 bytes/);
    expect(e.hint).toMatch(/maxLineBytes/);
    expect(process.memoryUsage().rss - before).toBeLessThan(300 * 2 ** 20);
  });

  it("a valid 50 MB line is refused by the per-line cap, naming the line", async () => {
    const f = write(
      "long.jsonl",
      rec("q0", ["a"]) + "\n" + rec("q1", ["a"], [{ title: "t", text: "x".repeat(50 * 2 ** 20), hasanswer: true, isgold: true }]) + "\n",
    );
    const e = await failure(loadQaJsonl(f));
    expect(e.field).toMatch(/^line 2/);
    // With a higher cap the same line reads.
    const rs = await loadQaJsonl(f, { maxLineBytes: 64 * 2 ** 20 });
    expect(rs[1].ctxs[0].text.length).toBe(50 * 2 ** 20);
  });

  it("a decompressed-size cap over the whole file, with the line it was reached at", async () => {
    const lines = Array.from({ length: 50 }, (_, i) => rec(`q${i}`, ["a"])).join("\n") + "\n";
    const f = write("many.jsonl.gz", zlib.gzipSync(Buffer.from(lines)));
    const e = await failure(loadQaJsonl(f, { maxBytes: 1000 }));
    expect(e.message).toMatch(/decompressed/);
    expect(e.field).toMatch(/^line \d+/);
    expect(e.hint).toMatch(/maxBytes/);
    expect((await loadQaJsonl(f)).length).toBe(50);
  });

  it("invalid UTF-8 is refused with the line number (not read as replacement characters)", async () => {
    const f = write(
      "latin1.jsonl",
      Buffer.concat([
        Buffer.from(rec("q0", ["a"]) + "\n"),
        Buffer.from('{"question": "caf'),
        Buffer.from([0xe9]),
        Buffer.from('", "answers": ["a"], "ctxs": []}\n'),
      ]),
    );
    const e = await failure(loadQaJsonl(f));
    expect(e.field).toMatch(/^line 2/);
    expect(e.expected).toMatch(/UTF-8/);
  });

  it("CRLF line endings and a last line without newline still read", async () => {
    const f = write("crlf.jsonl", rec("q0", ["a"]) + "\r\n" + rec("q1", ["b"]));
    expect((await loadQaJsonl(f)).map((r) => r.answers[0])).toEqual(["a", "b"]);
  });

  it("a directory given as the data file is a DatasetError", async () => {
    await failure(loadQaJsonl(tmp));
  });
});

describe("empty inputs", () => {
  it("empty and blank-only files read as zero records and the report says so", async () => {
    for (const [name, text] of [
      ["empty.jsonl", ""],
      ["blank.jsonl", "\n  \n\t\n"],
    ] as const) {
      const report = newDataReport();
      expect(await loadQaJsonl(write(name, text), { report })).toEqual([]);
      expect(report.records).toBe(0);
      expect(describeDataReport(report)[0]).toMatch(/no records/);
    }
  });

  it("floatscope eval on an empty or blank data file: exit 1 with a typed message, not ENOENT on the results file", async () => {
    for (const text of ["", "\n\n   \n"]) {
      const data = write("eval-empty.jsonl", text);
      const out = path.join(tmp, "never.jsonl");
      const r = await cli("eval", path.join(PARITY, "llada", "model"), "--data", data, "--out", out);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/DatasetError: QA data file has no records/);
      expect(r.err).not.toMatch(/ENOENT/);
      expect(fs.existsSync(out)).toBe(false);
    }
  });

  it("eval with --skip past the end of the data runs nothing, says so, and does not crash on the absent results file", async () => {
    const out = path.join(tmp, "skip-all.jsonl");
    const r = await cli("eval", path.join(PARITY, "llada", "model"), "--data", HELDOUT, "--skip", "100000", "--out", out);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/No questions to evaluate/);
    expect(r.err).not.toMatch(/ENOENT/);
  });
});

describe("suspicious records are counted and reported with line numbers", () => {
  it("no answers, a blank answer, two gold passages, no gold, a missing title, missing flags, an empty passage", async () => {
    const lines = [
      rec("fine", ["a"]),
      rec("no answers", []),
      "",
      rec(
        "two golds",
        ["a"],
        [
          { title: "A", text: "x", hasanswer: true, isgold: true },
          { title: "B", text: "y", hasanswer: false, isgold: true },
        ],
      ),
      rec("no title", ["a"], [{ text: "x", hasanswer: true, isgold: true }]),
      rec("no flags", ["a"], [{ title: "A", text: "x" }]),
      rec("blank answer", [" "]),
      rec("empty passage", ["a"], [{ title: "A", text: "", hasanswer: false, isgold: true }]),
      rec("no gold", ["a"], [{ title: "A", text: "x", hasanswer: false, isgold: false }]),
    ];
    const report = newDataReport();
    const rs = await loadQaJsonl(write("sus.jsonl", lines.join("\n") + "\n"), { report });
    expect(rs.length).toBe(8); // suspicious records are kept: counting is not rejecting
    expect(report.records).toBe(8);
    expect(report.blankLines).toBe(1);
    expect(report.suspicious).toEqual({
      "no answers": [2],
      "blank answer": [7],
      "several gold passages": [4],
      "no gold passage": [6, 9],
      "passage without title": [5],
      "passage without hasanswer/isgold": [6],
      "empty passage text": [8],
    });
    const text = describeDataReport(report).join("\n");
    expect(text).toMatch(/1 record with no answers \(line 2\)/);
    expect(text).toMatch(/2 records with no gold passage \(lines 6, 9\)/);
    // The records carry their own flags too.
    expect(rs.find((r) => r.question === "two golds")!.issues).toEqual(["several gold passages"]);
    expect(rs[0].issues).toEqual([]);
  });

  it("the two real data files in reach have no suspicious record (no false alarms)", async () => {
    const report = newDataReport();
    const rs = await loadQaJsonl(HELDOUT, { report });
    expect(rs.length).toBe(300);
    expect(report.suspicious).toEqual({});
  });

  it("floatscope eval prints the data report on stderr", async () => {
    const data = write("eval-sus.jsonl", [rec("who", []), rec("what", ["t5"])].join("\n") + "\n");
    const r = await cli(
      "eval",
      path.join(PARITY, "llada", "model"),
      "--data",
      data,
      "--limit",
      "1",
      "--gen-length",
      "2",
      "--steps",
      "2",
      "--setting",
      "closed-book",
    );
    expect(r.err).toMatch(/eval: data: .*1 record with no answers \(line 1\)/);
  });
});

describe("a 1 MB line is refused by length before it is tokenized", () => {
  class CountingTokenizer extends FakeTokenizer {
    longest = 0;
    override encode(text: string): Encoding {
      this.longest = Math.max(this.longest, text.length);
      return super.encode(text);
    }
    override applyChatTemplate(messages: ChatMessage[]): string {
      return messages.map((m) => m.content).join(" ");
    }
  }
  it("runEval marks the question failed (prompt too long for the model) without encoding the megabyte", async () => {
    const big = "t5 ".repeat(350_000); // ≈ 1 MB of text
    const f = write(
      "mb.jsonl",
      [rec("short", ["t5"]), rec("huge", ["t5"], [{ title: "A", text: big, hasanswer: true, isgold: true }])].join("\n") + "\n",
    );
    const records: QaRecord[] = await loadQaJsonl(f);
    const tokenizer = new CountingTokenizer();
    const engine = new FakeEngine({ family: "llama", probes: {} });
    const run = await runEval({
      engine,
      tokenizer,
      records,
      setting: { kind: "oracle" },
      promptFormat: "tiny-world",
      sampler: { genLength: 2 },
    });
    expect(run.results[0].error).toBeUndefined();
    expect(run.results[1].error).toMatch(/too long for the model/);
    expect(run.results[1].error).toMatch(/max_position_embeddings/);
    expect(tokenizer.longest).toBeLessThan(10_000);
  });
});

describe("resume files (--out) are validated before anything is appended", () => {
  const row = (id: string, extra: object = {}) =>
    JSON.stringify({
      id,
      row: 0,
      setting: "oracle",
      model: "m",
      question: "q",
      answers: ["a"],
      passages: 1,
      goldIndex: 0,
      accuracy: 1,
      f1: 1,
      exactMatch: 1,
      ...extra,
    });

  it("a line in the middle that is not JSON → ResultsFileError naming the line", () => {
    const f = write("mid.jsonl", [row("0-a"), "{garbage", row("1-b")].join("\n") + "\n");
    expect(() => readDoneKeys(f)).toThrow(ResultsFileError);
    expect(() => readDoneKeys(f)).toThrow(/line 2/);
    expect(() => readResults(f)).toThrow(/line 2/);
  });

  it("a file that is not a results file at all (binary, one line, no newline) is refused, not skipped and appended to", () => {
    const f = write("binary.jsonl", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x00, 0x00, 0x00]));
    const before = fs.readFileSync(f);
    expect(() => readDoneKeys(f)).toThrow(ResultsFileError);
    expect(fs.readFileSync(f)).toEqual(before);
  });

  it("JSON lines that are not result rows (null, a number, a row without id/setting) are refused", () => {
    for (const bad of ["null", "42", JSON.stringify({ id: 3, setting: "oracle", model: "m" }), JSON.stringify({ hello: "world" })]) {
      const f = write("notrow.jsonl", [row("0-a"), bad, row("1-b")].join("\n") + "\n");
      expect(() => readDoneKeys(f), bad).toThrow(/line 2/);
    }
  });

  it("a torn last line (an interrupted write) is dropped from the file before appending, so the next row is not glued to it", async () => {
    const f = write("torn.jsonl", row("0-a") + "\n" + row("1-b").slice(0, 30));
    expect([...readDoneKeys(f)]).toEqual(["oracle|0-a"]);
    const records = await loadQaJsonl(write("two.jsonl", [rec("q0", ["t5"]), rec("q1", ["t5"])].join("\n") + "\n"));
    const engine = new FakeEngine({ family: "llama", probes: {} });
    await runEval({
      engine,
      tokenizer: new FakeTokenizer(),
      records,
      setting: { kind: "oracle" },
      promptFormat: "tiny-world",
      sampler: { genLength: 2 },
      resultsFile: f,
      chatTemplate: false,
      modelName: "m",
    });
    const lines = fs.readFileSync(f, "utf8").split("\n").filter(Boolean);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(readResults(f).length).toBe(3); // 0-a from before, and the two new ids
  });

  it("rows of another model do not count as done for this one", async () => {
    const f = write("other-model.jsonl", "");
    const records = await loadQaJsonl(write("one.jsonl", rec("q0", ["t5"]) + "\n"));
    const engine = new FakeEngine({ family: "llama", probes: {} });
    const common = {
      engine,
      tokenizer: new FakeTokenizer(),
      records,
      setting: { kind: "oracle" } as const,
      promptFormat: "tiny-world" as const,
      sampler: { genLength: 2 },
      resultsFile: f,
      chatTemplate: false,
    };
    expect((await runEval({ ...common, modelName: "A" })).progress.done).toBe(1);
    const b = await runEval({ ...common, modelName: "B" });
    expect(b.progress.resumed).toBe(0);
    expect(b.progress.done).toBe(1);
    expect((await runEval({ ...common, modelName: "B" })).progress.resumed).toBe(1);
  });

  it("a results path that is a directory is a ResultsFileError", () => {
    expect(() => readDoneKeys(tmp)).toThrow(ResultsFileError);
  });

  it("streaming stops the file at the cap even when the reader is abandoned early (limit)", async () => {
    let n = 0;
    for await (const _ of readQaJsonl(HELDOUT, { limit: 2 })) n++;
    expect(n).toBe(2);
  });
});
