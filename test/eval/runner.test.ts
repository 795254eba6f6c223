import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/runtime/types.js";
import { DistractorPool } from "../../src/qa/contexts.js";
import { loadQaJsonl, type QaRecord } from "../../src/qa/datasets.js";
import { readDoneKeys, readResults, runEval, summarizeResults } from "../../src/qa/runner.js";
import { readTrace } from "../../src/trace/reader.js";
import { FakeEngine, FakeTokenizer, type LogitsFn } from "../support/fake-engine.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-runner-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The fake tokenizer with an "assistant" marker t30 after the user turn. */
class MarkedTokenizer extends FakeTokenizer {
  override applyChatTemplate(messages: ChatMessage[]): string {
    return messages.map((m) => m.content).join(" ") + " t30";
  }
}

/**
 * A "reader" model: the first generated token is the word after the first marker t29 in the
 * prompt (every gold passage is "t29 t<answer>"), then EOS (2), then filler t4. ARM rows predict
 * position p + 1; LLaDA rows predict position p. With no passage it answers t3 (wrong).
 */
function reader(arm: boolean): LogitsFn {
  return (canvas, pos) => {
    const out = new Float32Array(32).fill(-5);
    const start = canvas.indexOf(30) + 1;
    const j = (arm ? pos + 1 : pos) - start;
    const m = canvas.indexOf(29);
    out[j === 0 ? (m >= 0 ? canvas[m + 1] : 3) : j === 1 ? 2 : 4] = 5;
    out[31] = -50;
    return out;
  };
}

async function dataset(n: number, extra: string[] = []): Promise<{ file: string; records: QaRecord[] }> {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      question: `question number ${i}`,
      answers: [`t${23 + (i % 6)}`],
      ctxs: [{ title: "x", text: `t29 t${23 + (i % 6)}`, isgold: true, hasanswer: true }],
    }),
  );
  const file = path.join(tmp, `d${n}-${extra.length}.jsonl`);
  fs.writeFileSync(file, [...lines, ...extra].join("\n") + "\n");
  return { file, records: await loadQaJsonl(file) };
}

const arm = () => new FakeEngine({ family: "llama", logits: reader(true), probes: {} });
const tokenizer = new MarkedTokenizer();

describe("runEval with a fake reader model", () => {
  it("scores closed-book 0, oracle 100, and follows the gold position among pool distractors", async () => {
    const { records } = await dataset(6);
    const pool = new DistractorPool(records);
    const common = { engine: arm(), tokenizer, records, promptFormat: "tiny-world" as const, sampler: { genLength: 4 }, pool };
    const all = [
      ...(await runEval({ ...common, setting: { kind: "closed-book" } })).results,
      ...(await runEval({ ...common, setting: { kind: "oracle" } })).results,
      ...(await runEval({ ...common, setting: { kind: "distractors", k: 2, goldPosition: 0, source: "pool" } })).results,
      ...(await runEval({ ...common, setting: { kind: "distractors", k: 2, goldPosition: 2, source: "pool" } })).results,
    ];
    const oracle = all.filter((r) => r.setting === "oracle");
    expect(oracle.map((r) => r.prediction?.trim())).toEqual(records.map((r) => r.answers[0]));
    const t = summarizeResults(all).objects() as {
      setting: string;
      n: number;
      errors: number;
      accuracy: number;
      f1: number;
      exactMatch: number;
    }[];
    const by = Object.fromEntries(t.map((r) => [r.setting, r]));
    expect(by["closed-book"]).toMatchObject({ n: 6, errors: 0, accuracy: 0, f1: 0, exactMatch: 0 });
    expect(by.oracle).toMatchObject({ n: 6, accuracy: 100, f1: 100, exactMatch: 100 });
    expect(by["gold@0/k2/pool"]).toMatchObject({ accuracy: 100 });
    // The reader takes the FIRST passage; with the gold last it answers a distractor's answer.
    expect(by["gold@2/k2/pool"]).toMatchObject({ n: 6, errors: 0, accuracy: 0 });
    expect(all.every((r) => (r.promptTokens ?? 0) > 5 && r.batchSize === 1)).toBe(true);
  });

  it("batched generation gives the same predictions as one by one", async () => {
    const { records } = await dataset(5);
    const s = { kind: "distractors" as const, k: 2, goldPosition: "random" as const, source: "pool" as const, seed: 7 };
    const common = {
      tokenizer,
      records,
      promptFormat: "tiny-world" as const,
      sampler: { genLength: 4 },
      pool: new DistractorPool(records),
      setting: s,
    };
    const one = await runEval({ ...common, engine: arm() });
    const engine = arm();
    const three = await runEval({ ...common, engine, batchSize: 3 });
    expect(three.results.map((r) => r.prediction)).toEqual(one.results.map((r) => r.prediction));
    expect(three.results.map((r) => r.goldIndex)).toEqual(one.results.map((r) => r.goldIndex));
    expect(Math.max(...engine.calls.map((c) => c.batch))).toBe(3);
  });

  it("records per-question errors (not swallowed), keeps the batch going, and resumes", async () => {
    const longQ = JSON.stringify({
      question: Array(300).fill("word").join(" "),
      answers: ["t23"],
      ctxs: [{ text: "t29 t23", isgold: true }],
    });
    const noGold = JSON.stringify({ question: "no gold here", answers: ["t23"], ctxs: [{ text: "t29 t23" }] });
    const { records, file } = await dataset(4, [longQ, noGold]);
    const results = path.join(tmp, "res.jsonl");
    const seen: number[] = [];
    const common = {
      tokenizer,
      promptFormat: "tiny-world" as const,
      sampler: { genLength: 4 },
      setting: { kind: "oracle" as const },
      resultsFile: results,
      dataFile: file,
      batchSize: 3,
    };
    const first = await runEval({ ...common, engine: arm(), records: records.slice(0, 2) });
    expect(first.progress).toMatchObject({ done: 2, errors: 0, resumed: 0 });
    const second = await runEval({ ...common, engine: arm(), records, onProgress: (p) => seen.push(p.done) });
    expect(second.progress).toMatchObject({ total: 4, done: 4, errors: 2, resumed: 2 });
    expect(seen.at(-1)).toBe(4);
    const errs = second.results.filter((r) => r.error);
    expect(errs.map((r) => r.row).sort()).toEqual([4, 5]);
    expect(errs.find((r) => r.row === 4)!.error).toMatch(/longer than the model's maximum/);
    expect(errs.find((r) => r.row === 5)!.error).toMatch(/no gold passage.*line 6|line 6/s);
    expect(second.results.filter((r) => !r.error).map((r) => r.accuracy)).toEqual([1, 1]);
    // Failed questions are not "done": a rerun retries exactly those.
    expect(readDoneKeys(results).size).toBe(4);
    const third = await runEval({ ...common, engine: arm(), records });
    expect(third.progress).toMatchObject({ total: 2, resumed: 4, errors: 2 });
    const rows = readResults(results);
    expect(rows.length).toBe(6);
    const t = summarizeResults(rows).objects()[0] as { n: number; errors: number; accuracy: number };
    expect(t).toMatchObject({ n: 4, errors: 2, accuracy: 100 });
  });

  it("answer extraction: the whole response vs up to EOS (LLaDA canvas keeps tokens after EOS)", async () => {
    const { records } = await dataset(2);
    const engine = new FakeEngine({ family: "llada", logits: reader(false), probes: {} });
    const common = {
      engine,
      tokenizer,
      records,
      promptFormat: "tiny-world" as const,
      setting: { kind: "oracle" as const },
      sampler: { genLength: 4, steps: 4 },
    };
    const whole = await runEval(common);
    const cut = await runEval({ ...common, extraction: "up-to-eos" });
    expect(whole.results[0].response).toBe(" t23 t4 t4");
    expect(whole.results[0]).toMatchObject({ accuracy: 1, exactMatch: 0 });
    expect(whole.results[0].f1).toBeCloseTo(0.5, 12); // pred [t23, t4, t4] vs [t23]: P 1/3, R 1
    expect(cut.results[0]).toMatchObject({ prediction: " t23", accuracy: 1, exactMatch: 1, f1: 1 });
  });

  it("saves one readable trace per question, with the prompt's regions", async () => {
    const { records } = await dataset(2);
    const engine = new FakeEngine({ family: "llada", logits: reader(false), probes: { received: true } });
    const traceDir = path.join(tmp, "traces");
    const run = await runEval({
      engine,
      tokenizer,
      records,
      promptFormat: "tiny-world",
      setting: { kind: "oracle" },
      sampler: { genLength: 4, steps: 4 },
      traceDir,
      batchSize: 2,
    });
    for (const r of run.results) {
      expect(r.trace).toBe(path.join(traceDir, "oracle", `${r.id}.fstrace`));
      const t = readTrace(r.trace!);
      expect(t.answer).toBe(r.response);
      expect(t.steps.length).toBe(4);
      expect(t.prompt.regions.map((g) => g.name)).toEqual(["doc 1", "gold", "question", "answer"]);
      const gold = t.prompt.regions.find((g) => g.name === "gold")!;
      expect(t.prompt.text.slice(gold.chars[0], gold.chars[1])).toBe(`Passage 1 : ${records[r.row].ctxs[0].text}`);
      expect(t.tokens.slice(gold.tokens[0], gold.tokens[1]).join(" ")).toBe(`Passage 1 : ${records[r.row].ctxs[0].text}`);
    }
  });
});
