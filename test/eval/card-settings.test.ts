/**
 * The model-card evaluators' settings beyond the four (scripts/eval-common.ts): `setting@G` canvases and the
 * long-answer settings, their intervals, and the harness path they run through (src/qa: the all-golds /
 * all-ctxs contexts, the row label, fact scoring), on a fake engine whose output is known by construction.
 * Interval golds are hand-worked from Wilson's formula; fact scores by the documented claim rule.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/runtime/types.js";
import { buildContext } from "../../src/qa/contexts.js";
import { loadQaJsonl, longFacts } from "../../src/qa/datasets.js";
import { readResults, runEval, type EvalResult } from "../../src/qa/runner.js";
import {
  canvasMatters,
  longCardScores,
  meanInterval,
  parseCardSetting,
  runCardSetting,
  samplerAtCanvas,
  shortCardScores,
  wilsonInterval,
} from "../../scripts/eval-common.js";
import { FakeEngine, FakeTokenizer, type LogitsFn } from "../support/fake-engine.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-card-settings-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("parseCardSetting", () => {
  it("keeps the four settings' labels, adds @G for a canvas, maps long settings to every gold / every ctx", () => {
    expect(parseCardSetting("oracle")).toMatchObject({ base: "oracle", canvas: undefined, long: false, label: "oracle" });
    expect(parseCardSetting("gold_4")).toMatchObject({ label: "gold@cycle/k4", canvas: undefined });
    expect(parseCardSetting("oracle@32")).toMatchObject({ base: "oracle", canvas: 32, long: false, label: "oracle@32" });
    expect(parseCardSetting("long_oracle@64")).toMatchObject({
      base: "long_oracle",
      canvas: 64,
      long: true,
      label: "all-golds@64",
      setting: { kind: "all-golds" },
    });
    expect(parseCardSetting("long_full@64")).toMatchObject({ long: true, label: "all-ctxs@64", setting: { kind: "all-ctxs" } });
  });

  it("refuses unknown settings, bad canvases and a long setting without its canvas, naming the option", () => {
    for (const [key, msg] of [
      ["oracel", /Unknown card setting[\s\S]*field: --n[\s\S]*"oracel"/],
      ["oracle@0", /Bad canvas size[\s\S]*"oracle@0"/],
      ["oracle@3x", /Bad canvas size/],
      ["oracle@-8", /Bad canvas size/],
      ["oracle@32@1", /Unknown card setting/],
      ["oracle@9999", /Bad canvas size[\s\S]*\[1, 512\]/],
      ["long_oracle", /needs its canvas[\s\S]*long_oracle@64/],
    ] as const)
      expect(() => parseCardSetting(key), key).toThrow(msg);
  });
});

describe("samplerAtCanvas / canvasMatters (training/real/decode.py `generate`)", () => {
  const dream = { sampler: "dream" as const, alg: "entropy", genLength: 8, steps: 8, temperature: 0 };
  const arm = { sampler: "arm" as const, alg: "greedy", genLength: 10, stopAtEos: true };
  it("MDM: G masks in G steps; greedy: at most max(its limit, G) new tokens; no canvas: the preset", () => {
    expect(samplerAtCanvas(dream, 32)).toEqual({ ...dream, genLength: 32, steps: 32 });
    expect(samplerAtCanvas(dream, undefined)).toBe(dream);
    expect(samplerAtCanvas(arm, 64)).toEqual({ ...arm, genLength: 64 });
    expect(samplerAtCanvas(arm, 8)).toEqual({ ...arm, genLength: 10 });
    expect(samplerAtCanvas({ sampler: "llada", genLength: 4, steps: 4, blockLength: 4 }, 32)).toMatchObject({
      genLength: 32,
      steps: 32,
      blockLength: 32,
    });
  });
  it("a canvas means nothing to greedy decoding of short answers, and everything else runs", () => {
    expect(canvasMatters(arm, parseCardSetting("oracle@32"))).toBe(false);
    expect(canvasMatters(arm, parseCardSetting("oracle"))).toBe(true);
    expect(canvasMatters(arm, parseCardSetting("long_oracle@64"))).toBe(true);
    expect(canvasMatters(dream, parseCardSetting("oracle@32"))).toBe(true);
  });
});

describe("intervals", () => {
  // Wilson with z = 1.959964, hand-worked: z² = 3.841459; for n = 10, z²/n = 0.3841459, d = 1.3841459.
  //   0/10:  centre = 0.1920729/1.3841459 = 0.138767, half = z·√(0 + 0.0096036)/d = 0.138767 → [0, 0.277535]
  //   10/10: mirror image → [0.722465, 1]
  //   5/10:  centre 0.5, half = z·√(0.025 + 0.0096036)/d = 1.959964 · 0.186021 / 1.3841459 = 0.263410 → [0.236590, 0.763410]
  // n = 300, 282 (94 %): z²/n = 0.0128049, d = 1.0128049, centre = (0.94 + 0.0064024)/d = 0.934439,
  //   half = z·√(0.94·0.06/300 + 3.841459/360000)/d = 1.959964 · √(0.000188 + 0.0000106707)/d = 1.959964 · 0.0140951/1.0128049 = 0.0272764
  //   → [0.907163, 0.961715]
  it("Wilson's score interval matches hand-worked values", () => {
    const close = (got: [number, number] | null, want: [number, number]) => {
      expect(got).not.toBeNull();
      expect(got![0]).toBeCloseTo(want[0], 5);
      expect(got![1]).toBeCloseTo(want[1], 5);
    };
    close(wilsonInterval(0, 10), [0, 0.277535]);
    close(wilsonInterval(10, 10), [0.722465, 1]);
    close(wilsonInterval(5, 10), [0.23659, 0.76341]);
    close(wilsonInterval(282, 300), [0.907163, 0.961715]);
    expect(wilsonInterval(0, 0)).toBeNull();
  });

  it("the mean's bootstrap interval: none below 2 values, a point for constant values, around the mean otherwise", () => {
    expect(meanInterval([0.5])).toBeNull();
    expect(meanInterval([0.75, 0.75, 0.75])).toEqual([0.75, 0.75]);
    const xs = [1, 1, 1, 0.5, 0.75, 1, 0, 1, 0.25, 1];
    const [lo, hi] = meanInterval(xs)!;
    const m = xs.reduce((a, b) => a + b, 0) / xs.length; // 0.75
    expect(lo).toBeLessThan(m);
    expect(hi).toBeGreaterThan(m);
    expect(hi).toBeLessThanOrEqual(1);
    expect(meanInterval(xs)).toEqual([lo, hi]); // seeded: the same interval every time
  });

  it("card scores: errors left out, Wilson on the 0/1 accuracy, means and intervals of recall / precision", () => {
    const row = (o: Partial<EvalResult>): EvalResult =>
      ({ id: "x", row: 0, setting: "s", model: "m", question: "q", answers: [], passages: 1, goldIndex: 0, ms: 2000, ...o }) as EvalResult;
    const short = shortCardScores([
      ...Array.from({ length: 5 }, () => row({ accuracy: 1, f1: 1, exactMatch: 1 })),
      ...Array.from({ length: 5 }, () => row({ accuracy: 0, f1: 0, exactMatch: 0 })),
      row({ error: "SettingsError: too long", ms: undefined }),
    ]);
    expect(short).toMatchObject({ n: 10, errors: 1, accuracy: 0.5, seconds: 20, seconds_per_question: 2 });
    expect(short.accuracy_ci![0]).toBeCloseTo(0.23659, 5);
    const long = longCardScores([
      row({ recall: 1, precision: 1, factF1: 1, complete: 1 }),
      row({ recall: 0.5, precision: 1, factF1: 2 / 3, complete: 0 }),
      row({ error: "DatasetError: no facts" }),
    ]);
    expect(long).toMatchObject({ n: 2, errors: 1, recall: 0.75, precision: 1, complete: 0.5, seconds: 4, seconds_per_question: 2 });
    expect(long.f1).toBeCloseTo(5 / 6, 12);
    expect(long.precision_ci).toEqual([1, 1]);
  });
});

// ------------------------------------------------------------------ the harness path, on a fake engine

/** The fake tokenizer with an "assistant" marker t30 after the user turn (as runner.test.ts). */
class MarkedTokenizer extends FakeTokenizer {
  override applyChatTemplate(messages: ChatMessage[]): string {
    return messages.map((m) => m.content).join(" ") + " t30";
  }
}

/**
 * A greedy "writer": after the marker t30 it writes t20 t21 t9 t22 t23, then EOS (2) — unless its prompt holds
 * the distractor's word t27, when it ends at once (an empty answer).
 */
const WRITTEN = [20, 21, 9, 22, 23];
const writer: LogitsFn = (canvas, pos) => {
  const out = new Float32Array(32).fill(-5);
  const j = pos + 1 - (canvas.indexOf(30) + 1);
  const next = canvas.includes(27) ? 2 : j >= 0 && j < WRITTEN.length ? WRITTEN[j] : 2;
  out[next] = 5;
  out[31] = -50;
  return out;
};

/**
 * One long record: facts "{s} t20 {v}" = t21 and "{s} t22 {v}" = t23 in gold passage 1, "{s} t24 {v}" = t25 in gold
 * passage 2, then a distractor holding t27. The writer's answer " t20 t21 t9 t22 t23" is ONE claim (no
 * punctuation, no "and"): it states facts 0 and 1 (object and the template's fixed word present), not fact 2.
 * Hand-worked: recall 2/3, precision 1/1 (the one claim states a new fact), F1 0.8, complete 0.
 */
async function longFile(): Promise<string> {
  const fact = (object: string, word: string, ctx: number) => ({
    relation: word,
    object,
    ctx,
    statement: `t5 ${word} ${object}`,
    templates: [`{s} ${word} {v} .`],
  });
  const rec = {
    question: "t6 t7",
    answers: ["t5 t20 t21 . t5 t22 t23 . t5 t24 t25 ."],
    ctxs: [
      { title: "a", text: "t5 t20 t21 . t5 t22 t23 .", hasanswer: true, isgold: true },
      { title: "a", text: "t5 t24 t25 .", hasanswer: true, isgold: true },
      { title: "b", text: "t8 t27 t26 .", hasanswer: false, isgold: false },
    ],
    kind: "long",
    facts: [fact("t21", "t20", 0), fact("t23", "t22", 0), fact("t25", "t24", 1)],
  };
  const bad = { ...rec, question: "t6 t9", facts: [{ object: "t21" }] };
  const file = path.join(tmp, "long.jsonl");
  fs.writeFileSync(file, [rec, bad].map((r) => JSON.stringify(r)).join("\n") + "\n");
  return file;
}

describe("long-answer settings through the harness", () => {
  it("all-golds holds every gold passage in file order, all-ctxs every ctx; longFacts reads the facts or names the line", async () => {
    const [rec, bad] = await loadQaJsonl(await longFile());
    expect(buildContext(rec, { kind: "all-golds" }).passages.map((p) => p.text)).toEqual(["t5 t20 t21 . t5 t22 t23 .", "t5 t24 t25 ."]);
    expect(buildContext(rec, { kind: "all-ctxs" }).passages).toHaveLength(3);
    expect(longFacts(rec).map((f) => f.object)).toEqual(["t21", "t23", "t25"]);
    expect(() => longFacts(bad, "long.jsonl")).toThrow(/malformed facts[\s\S]*long\.jsonl[\s\S]*line 2: facts\[0\]\.templates/);
  });

  it("runCardSetting scores long answers by facts under the setting's own label, and resumes from its rows", async () => {
    const file = await longFile();
    const records = await loadQaJsonl(file);
    const resultsFile = path.join(tmp, "rows.jsonl");
    const m = { engine: new FakeEngine({ family: "llama", logits: writer, probes: {} }), tokenizer: new MarkedTokenizer() };
    const preset = {
      promptFormat: "tiny-world" as const,
      sampler: { sampler: "arm" as const, alg: "greedy", genLength: 10, stopAtEos: true },
      extraction: "up-to-eos" as const,
    };
    const o = { name: "fake", records, preset, data: file, batchSize: 2, resultsFile };
    const first = await runCardSetting(m, parseCardSetting("long_oracle@64"), o);
    expect(first.run.progress).toMatchObject({ done: 2, errors: 1, resumed: 0 });
    const good = first.run.results.find((r) => r.row === 0)!; // a record that fails before decoding is written first
    const bad = first.run.results.find((r) => r.row === 1)!;
    expect(good).toMatchObject({
      setting: "all-golds@64",
      passages: 2,
      prediction: " t20 t21 t9 t22 t23",
      claims: 1,
      recall: 2 / 3,
      precision: 1,
      complete: 0,
    });
    expect(good.factF1).toBeCloseTo(0.8, 12);
    expect(bad.error).toMatch(/^DatasetError: Long-answer record has malformed facts/);
    // The distractor is in the prompt under long_full: the writer stops at once → nothing stated.
    const full = await runCardSetting(m, parseCardSetting("long_full@64"), o);
    expect(full.run.results.find((r) => r.row === 0)).toMatchObject({
      setting: "all-ctxs@64",
      passages: 3,
      prediction: "",
      recall: 0,
      precision: 0,
    });
    // Rerun: the good rows resume, the failed one runs again.
    const again = await runCardSetting(m, parseCardSetting("long_oracle@64"), o);
    expect(again.run.progress).toMatchObject({ done: 1, resumed: 1 });
    expect(readResults(resultsFile).filter((r) => r.setting === "all-golds@64" && r.error === undefined)).toHaveLength(1);
  });

  it("oracle@32 decodes an MDM's 32 masks in 32 steps, in rows apart from the 8-slot oracle's", async () => {
    const file = path.join(tmp, "short.jsonl");
    fs.writeFileSync(
      file,
      JSON.stringify({ question: "t6", answers: ["t21"], ctxs: [{ title: "a", text: "t5 t21", isgold: true, hasanswer: true }] }) + "\n",
    );
    const records = await loadQaJsonl(file);
    const resultsFile = path.join(tmp, "short-rows.jsonl");
    const engine = new FakeEngine({ family: "dream", probes: {} });
    const tokenizer = new MarkedTokenizer();
    const preset = {
      promptFormat: "tiny-world" as const,
      sampler: { sampler: "dream" as const, alg: "entropy", genLength: 8, steps: 8, temperature: 0, topP: null, topK: null, algTemp: 0 },
      extraction: "up-to-eos" as const,
    };
    const promptLength = tokenizer.encode(tokenizer.applyChatTemplate([{ role: "user", content: "Passage 1 : t5 t21\nQuestion : t6" }])).ids
      .length;
    const o = { name: "fake", records, preset, data: file, batchSize: 1, resultsFile };
    await runCardSetting({ engine, tokenizer }, parseCardSetting("oracle"), o);
    const at8 = engine.calls.length;
    expect(engine.calls[0].seq).toBe(promptLength + 8);
    await runCardSetting({ engine, tokenizer }, parseCardSetting("oracle@32"), o);
    const at32 = engine.calls.slice(at8);
    expect(at32[0].seq).toBe(promptLength + 32);
    expect(at32[0].ids.slice(promptLength).every((t) => t === engine.spec.maskTokenId)).toBe(true);
    // One pass per step that has something to write (a step that writes nothing reuses the logits) + the final pass.
    expect(at32.length).toBeGreaterThan(at8);
    expect(at32.length).toBeLessThanOrEqual(32 + 1);
    expect(
      readResults(resultsFile)
        .map((r) => r.setting)
        .sort(),
    ).toEqual(["oracle", "oracle@32"]);
    // Through runEval directly, the label is what resumes: the 8-slot row does not stand in for the 32-slot one.
    const direct = await runEval({
      engine,
      tokenizer,
      records,
      setting: { kind: "oracle" },
      ...preset,
      modelName: "fake",
      resultsFile,
      label: "oracle@32",
    });
    expect(direct.progress).toMatchObject({ resumed: 1, done: 0 });
  });
});
