/**
 * `decodePaperSettings` (src/notebook/paper-setting.ts), the real-base sections of notebooks 02, 03 and 07, on the
 * tiny Dream model and the tiny LLaMA: the MDM decoded at 32 tokens in 32 steps under each order, the causal model
 * once (greedy), then a long-answer question at 64 in 64 with every gold passage in the prompt; each entry labelled
 * with what was run.
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadQaSet, notebookSettings } from "../../src/notebook/notebook.js";
import { decodePaperSettings, PAPER_ORDERS } from "../../src/notebook/paper-setting.js";

const MODELS = path.resolve(__dirname, "../../models");
const T = {
  ...notebookSettings({ families: ["dream", "llama"], samples: 1, env: { FLOATSCOPE_MODELS: MODELS } }),
  data: path.join(MODELS, "world/eval-heldout.jsonl.gz"),
};

describe("decodePaperSettings", () => {
  it("decodes each order at 32/32 (MDM), the causal model once, then one long answer at 64/64", async () => {
    const runs = await decodePaperSettings(T, { probes: { received: true }, context: "oracle" });
    expect(runs.map((r) => [r.run.family, r.setting, r.tokens, r.long])).toEqual([
      ["dream", "32 tokens in 32 steps, LLaDA low-confidence order, 1 question(s)", 32, false],
      ["dream", "32 tokens in 32 steps, Dream entropy order, 1 question(s)", 32, false],
      ["llama", "up to 32 tokens, greedy (causal), 1 question(s)", 32, false],
      ["dream", "long answers, 64 tokens in 64 steps, Dream entropy order, 1 question(s)", 64, true],
      ["llama", "long answers, up to 64 tokens, greedy (causal), 1 question(s)", 64, true],
    ]);
    const trace = (i: number) => runs[i].run.traces[0];
    // the MDM under each order, one block, one step per token
    Object.values(PAPER_ORDERS).forEach((order, i) => {
      expect(trace(i).settings).toMatchObject({ ...order, genLength: 32, steps: 32, blockLength: 32 });
      expect(trace(i).steps).toHaveLength(32);
    });
    // LLaDA's schedule writes exactly one slot per step at 32 in 32
    expect(trace(0).steps.map((s) => s.transferred.length)).toEqual(Array(32).fill(1));
    expect(trace(2).settings).toMatchObject({ sampler: "arm", alg: "greedy", genLength: 32 });
    expect(trace(3).settings).toMatchObject({ sampler: "dream", alg: "entropy", genLength: 64, steps: 64 });
    expect(trace(3).steps).toHaveLength(64);
    expect(trace(4).settings).toMatchObject({ sampler: "arm", genLength: 64 });
    // the long question comes from the long-answer file beside the tier's data, every gold passage in its prompt
    const long = await loadQaSet(T, { file: path.join(MODELS, "world/eval-heldout-long.jsonl.gz"), limit: 1 });
    const golds = long.records[0].ctxs.filter((c) => c.isgold === true).map((c) => c.text);
    expect(golds.length).toBeGreaterThan(0);
    for (const g of golds) expect(trace(3).prompt.text).toContain(g);
    expect(trace(3).prompt.text).toContain(long.records[0].question);
  }, 300_000);

  it("leaves out the long answers when asked, and decodes the short ones in the given context", async () => {
    const runs = await decodePaperSettings(T, { probes: { received: true }, context: "closed-book", longSamples: 0 });
    expect(runs.map((r) => r.long)).toEqual([false, false, false]);
    expect(runs[0].run.traces[0].prompt.text).not.toContain("Passage");
  }, 300_000);
});
