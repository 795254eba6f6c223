/**
 * The decoding the frontier measurement and notebook 01 ask of `decodeQaWith`: the MDM under another
 * unmasking order (`order`), a causal model left alone by it, and long answers with every gold passage
 * in the prompt (`context: "all-golds"`), on the tiny models.
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeQaWith, loadQaSet, notebookSettings } from "../../src/notebook/notebook.js";
import { DatasetError } from "../../src/qa/datasets.js";

const MODELS = path.resolve(__dirname, "../../models");
const S = notebookSettings({ families: ["dream", "llama"], samples: 3, env: { FLOATSCOPE_MODELS: MODELS } });

describe("decodeQaWith's order and all-golds context", () => {
  it("decodes the Dream model under LLaDA's low-confidence order, one token per step; the causal model keeps greedy", async () => {
    const qa = await loadQaSet({ ...S, samples: 1, data: path.join(MODELS, "world/eval-heldout.jsonl.gz") });
    const order = { sampler: "llada" as const, alg: "low_confidence" };
    const mdm = (await decodeQaWith(S, "dream", qa, { probes: { received: true }, tokens: 8, order, viewProbes: "none" })).traces[0];
    expect(mdm.settings).toMatchObject({ sampler: "llada", alg: "low_confidence", genLength: 8, steps: 8, blockLength: 8 });
    // LLaDA's schedule writes exactly one slot per step at 8 tokens in 8 steps (Dream's own writes none at its first).
    expect(mdm.steps.map((s) => s.transferred.length)).toEqual(Array(8).fill(1));
    const own = (await decodeQaWith(S, "dream", qa, { probes: { received: true }, tokens: 8, viewProbes: "none" })).traces[0];
    expect(own.settings).toMatchObject({ sampler: "dream", alg: "entropy" });
    const arm = (await decodeQaWith(S, "llama", qa, { probes: { received: true }, tokens: 8, order, viewProbes: "none" })).traces[0];
    expect(arm.settings).toMatchObject({ sampler: "arm", alg: "greedy" });
  }, 120_000);

  it('puts every gold passage of a long-answer record into the prompt, in file order ("oracle" keeps one)', async () => {
    const qa = await loadQaSet({ ...S, data: path.join(MODELS, "world/eval-heldout-long.jsonl.gz") });
    const rec = qa.records[2]; // the third held-out long question has two gold passages
    const golds = rec.ctxs.filter((c) => c.isgold === true).map((c) => c.text);
    expect(golds).toHaveLength(2);
    const one = { ...qa, records: [rec] };
    const t = (await decodeQaWith(S, "dream", one, { probes: { received: true }, context: "all-golds", tokens: 4, viewProbes: "none" }))
      .traces[0];
    const at = golds.map((g) => t.prompt.text.indexOf(g));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect(at[0]).toBeLessThan(at[1]);
    const oracle = (await decodeQaWith(S, "dream", one, { probes: { received: true }, context: "oracle", tokens: 4, viewProbes: "none" }))
      .traces[0];
    expect(oracle.prompt.text).toContain(golds[0]);
    expect(oracle.prompt.text).not.toContain(golds[1]);
    // A record without a gold passage is a typed error naming the file and the line.
    const none = { ...qa, records: [{ ...rec, ctxs: rec.ctxs.map((c) => ({ ...c, isgold: false })) }] };
    const err = await decodeQaWith(S, "dream", none, { probes: { received: true }, context: "all-golds", tokens: 4 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DatasetError);
    expect(String((err as Error).message)).toMatch(/eval-heldout-long\.jsonl\.gz/);
    expect(String((err as Error).message)).toMatch(/line 3/);
  }, 120_000);
});
