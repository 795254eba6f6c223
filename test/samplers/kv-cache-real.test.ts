/**
 * The real ARM (SmolLM2-135M-Instruct, Q4_1 GGUF) decoding through the key/value cache: greedy tokens
 * identical to HF transformers' for 32 tokens on the five golden prompts (test/fixtures/gguf/smollm2-golden.json,
 * made by make_smollm2_golden.py), and, on a ~700-token prompt of the eval data (10 pool distractors, as
 * `floatscope eval --setting distractors --k 10 --source pool` builds it), the same tokens as the full path with
 * every step's confidence within 1e-5. Skipped, loudly, when the model file is absent.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openModel, type OpenModel } from "../../src/model/open.js";
import { buildQaPrompt } from "../../src/qa/prompts.js";
import { buildContext, DistractorPool } from "../../src/qa/contexts.js";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import type { Engine } from "../../src/runtime/types.js";
import { generate } from "../../src/samplers/generate.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const GGUF = path.join(ROOT, ".cache", "real-models", "SmolLM2-135M-Instruct.Q4_1.gguf");
const present = fs.existsSync(GGUF);
if (!present) console.warn(`\n*** REAL-TIER KV-CACHE TEST SKIPPED: ${GGUF} is absent (bash scripts/setup.sh fetches it) ***\n`);

describe.skipIf(!present)("the real ARM through the key/value cache (SmolLM2-135M-Instruct Q4_1)", () => {
  let m: OpenModel;
  beforeAll(async () => {
    m = await openModel(GGUF, { threads: 2 });
  }, 300_000);
  afterAll(async () => m?.dispose());

  it("greedy: HF's 32 tokens on the five golden prompts, one prompt forward then one token per step", async () => {
    expect(m.engine.kvCache).toBe(true);
    const golden = JSON.parse(fs.readFileSync(path.join(ROOT, "test/fixtures/gguf/smollm2-golden.json"), "utf8")) as {
      prompts: { text: string; ids: number[]; greedy: number[] }[];
      greedy_tokens: number;
    };
    let steps = 0;
    const counting: Engine = Object.create(m.engine, {
      forward: { value: () => Promise.reject(new Error("the cached path ran a full forward")) },
      decoder: {
        value: () => {
          const d = m.engine.decoder!();
          return {
            retain: (r: number[]) => d.retain(r),
            step: (i: Parameters<typeof d.step>[0]) => {
              steps++;
              return d.step(i);
            },
          };
        },
      },
    }) as Engine;
    for (const g of golden.prompts) {
      steps = 0;
      const [r] = await generate(
        counting,
        [g.text],
        { genLength: golden.greedy_tokens, stopAtEos: false, addSpecialTokens: false },
        { tokenizer: m.tokenizer },
      );
      expect(r.trace.prompt.ids).toEqual(g.ids);
      expect(Array.from(r.trace.final.sequence.subarray(g.ids.length))).toEqual(g.greedy);
      expect(steps).toBe(golden.greedy_tokens);
    }
  }, 300_000);

  it("a ~700-token prompt (10 pool distractors): the same 16 tokens as the full path, confidences within 1e-5", async () => {
    const file = path.join(ROOT, "models", "world", "eval-heldout.jsonl.gz");
    const all = await loadQaJsonl(file);
    const ctx = buildContext(
      all[0],
      { kind: "distractors", k: 10, goldPosition: 0, source: "pool", seed: 0 },
      { file, pool: new DistractorPool(all) },
    );
    const prompt = buildQaPrompt(m.preset.promptFormat, { question: all[0].question, ...ctx }, m.tokenizer, {});
    const settings = { genLength: 16, stopAtEos: false, addSpecialTokens: prompt.addSpecialTokens };
    const [cached] = await generate(m.engine, [prompt.text], settings, { tokenizer: m.tokenizer });
    const [full] = await generate(m.engine, [prompt.text], settings, { tokenizer: m.tokenizer, kvCache: false });
    expect(cached.trace.prompt.promptLength).toBeGreaterThan(500);
    expect(Array.from(cached.trace.final.sequence)).toEqual(Array.from(full.trace.final.sequence));
    cached.trace.steps.forEach((s, k) =>
      expect(Math.abs(s.confidence[0] - full.trace.steps[k].confidence[0]), `step ${k}`).toBeLessThan(1e-5),
    );
  }, 600_000);
});
