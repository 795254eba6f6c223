/**
 * ARM decoding through the key/value cache (src/samplers/cached-passes.ts) against the full path
 * (`generate(..., { kvCache: false })`, every step re-running the prefix) on models/tiny-llama and
 * models/tiny-qwen: greedy tokens identical over several prompts and 24 tokens, each step's
 * confidence within 1e-5; sampled decoding (temperature, top-k, top-p, a seed) gives the same tokens
 * with every step's logits within 1e-4; padded batches whose rows stop at different steps give what
 * each row gives alone; and the cached run really is one prompt forward then one single-token
 * forward per step. Also against the HF reference generations of test/fixtures/samplers (tiny
 * parity checkpoints, a padded batch of two prompts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openModel, type OpenModel } from "../../src/model/open.js";
import type { Engine, ForwardInput, ForwardOutput, KvDecoder } from "../../src/runtime/types.js";
import { generate, type GenerateResult } from "../../src/samplers/generate.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const PROMPTS = ["The capital of France is", "Question: who wrote Hamlet?\nAnswer:", "1, 2, 3, 4,", "Once upon a time"];

/** The engine with every forward and decoder step recorded (inputs, and the logits rows that came back). */
function recording(engine: Engine) {
  const forwards: ForwardInput[] = [];
  const steps: ForwardInput[] = [];
  const logits: Float32Array[] = [];
  const keep = (o: ForwardOutput) => {
    logits.push(Float32Array.from(o.logits));
    return o;
  };
  const spy: Engine = {
    spec: engine.spec,
    probes: engine.probes,
    device: engine.device,
    logitRows: engine.logitRows,
    interventions: engine.interventions,
    preflight: engine.preflight?.bind(engine),
    dispose: () => engine.dispose(),
    forward: async (input) => {
      forwards.push(input);
      return keep(await engine.forward(input));
    },
  };
  if (engine.decoder) {
    spy.decoder = (): KvDecoder => {
      const d = engine.decoder!();
      return {
        get batch() {
          return d.batch;
        },
        get length() {
          return d.length;
        },
        retain: (rows) => d.retain(rows),
        step: async (input) => {
          steps.push(input);
          return keep(await d.step(input));
        },
      };
    };
  }
  return { spy, forwards, steps, logits };
}

const seqOf = (r: GenerateResult) => Array.from(r.trace.final.sequence);

for (const model of ["tiny-llama", "tiny-qwen"]) {
  describe(`ARM decoding with and without the key/value cache (models/${model})`, () => {
    let m: OpenModel;
    beforeAll(async () => {
      m = await openModel(path.join(ROOT, "models", model), { threads: 1 });
    }, 120_000);
    afterAll(async () => m?.dispose());

    it("greedy: the same 24 tokens for each prompt; cached = one prompt forward, then one token per step", async () => {
      expect(m.engine.kvCache).toBe(true);
      const settings = { genLength: 24, stopAtEos: false };
      for (const prompt of PROMPTS) {
        const c = recording(m.engine),
          f = recording(m.engine);
        const [cached] = await generate(c.spy, [prompt], settings, { tokenizer: m.tokenizer });
        const [full] = await generate(f.spy, [prompt], settings, { tokenizer: m.tokenizer, kvCache: false });
        expect(seqOf(cached), prompt).toEqual(seqOf(full));
        expect(cached.trace.steps.length).toBe(24);
        cached.trace.steps.forEach((s, k) => {
          expect(Math.abs(s.confidence[0] - full.trace.steps[k].confidence[0]), `${prompt} step ${k}`).toBeLessThan(1e-5);
          expect(Array.from(s.canvas)).toEqual(Array.from(full.trace.steps[k].canvas));
        });
        const P = cached.trace.prompt.promptLength;
        expect(c.forwards).toEqual([]); // no final pass either: the engine records no probe
        expect(c.steps.map((s) => s.seq)).toEqual([P, ...new Array<number>(23).fill(1)]);
        expect(f.steps).toEqual([]);
        expect(f.forwards.map((s) => s.seq)).toEqual(Array.from({ length: 24 }, (_, k) => P + k));
      }
    });

    it("sampled (τ 0.8, top-k 20, top-p 0.9, seed 5): the same tokens, each step's logits within 1e-4", async () => {
      const settings = { genLength: 20, stopAtEos: false, alg: "sample", temperature: 0.8, topK: 20, topP: 0.9, seed: 5 };
      for (const prompt of PROMPTS.slice(0, 2)) {
        const c = recording(m.engine),
          f = recording(m.engine);
        const [cached] = await generate(c.spy, [prompt], settings, { tokenizer: m.tokenizer });
        const [full] = await generate(f.spy, [prompt], settings, { tokenizer: m.tokenizer, kvCache: false });
        expect(seqOf(cached), prompt).toEqual(seqOf(full));
        expect(c.logits.length).toBe(20);
        expect(f.logits.length).toBe(20);
        c.logits.forEach((row, k) => {
          expect(row.length).toBe(m.spec.vocabSize); // one selected row per step, both ways
          let d = 0;
          for (let v = 0; v < row.length; v++) d = Math.max(d, Math.abs(row[v] - f.logits[k][v]));
          expect(d, `${prompt} step ${k}`).toBeLessThan(1e-4);
        });
      }
    });

    it("a padded batch whose rows stop at different steps: each row as alone, both ways", async () => {
      // make one row stop early: the token row 0 writes at step 3 becomes the EOS of a copy of the model
      const settings = { genLength: 16 };
      const probe = await generate(m.engine, PROMPTS.slice(0, 3), { ...settings, stopAtEos: false }, { tokenizer: m.tokenizer });
      const P0 = probe[0].trace.prompt.promptLength;
      const gen0 = Array.from(probe[0].trace.final.sequence.subarray(P0));
      const eos = gen0[3];
      const stop = gen0.indexOf(eos) + 1; // row 0 stops after its first such token (step ≤ 4)
      const engine: Engine = Object.create(m.engine, { spec: { value: { ...m.engine.spec, eosTokenIds: [eos] } } }) as Engine;
      const c = recording(engine);
      const batched = await generate(c.spy, PROMPTS.slice(0, 3), settings, { tokenizer: m.tokenizer });
      const full = await generate(engine, PROMPTS.slice(0, 3), settings, { tokenizer: m.tokenizer, kvCache: false });
      expect(batched[0].trace.steps.length).toBe(stop); // stopped on its EOS
      expect(c.steps[0].batch).toBe(3);
      expect(c.steps.some((s) => s.batch < 3)).toBe(true); // rows left the batch as they stopped
      for (let i = 0; i < 3; i++) {
        const [alone] = await generate(engine, [PROMPTS[i]], settings, { tokenizer: m.tokenizer });
        expect(seqOf(batched[i]), PROMPTS[i]).toEqual(seqOf(alone));
        expect(seqOf(full[i]), PROMPTS[i]).toEqual(seqOf(alone));
        expect(batched[i].trace.steps.length).toBe(full[i].trace.steps.length);
      }
    });
  });
}

describe("cached ARM decoding vs HF's reference generations (test/fixtures/samplers/arm-reference.json)", () => {
  const ref = JSON.parse(fs.readFileSync(path.join(ROOT, "test/fixtures/samplers/arm-reference.json"), "utf8")) as {
    runs: {
      family: string;
      checkpoint: string;
      max_new_tokens: number;
      samples: { prompt: string; prompt_ids: number[]; final: number[] }[];
    }[];
  };
  for (const run of ref.runs) {
    it(`${run.family}: ${run.max_new_tokens} greedy tokens for each prompt, one left-padded batch`, async () => {
      const m = await openModel(path.join(ROOT, run.checkpoint), { threads: 1 });
      try {
        expect(m.engine.kvCache).toBe(true);
        const c = recording(m.engine);
        const res = await generate(
          c.spy,
          run.samples.map((s) => s.prompt),
          { genLength: run.max_new_tokens },
          { tokenizer: m.tokenizer },
        );
        expect(c.steps.length).toBeGreaterThan(1);
        expect(c.steps.slice(1).every((s) => s.seq === 1)).toBe(true);
        run.samples.forEach((sample, i) => {
          expect(res[i].trace.prompt.ids).toEqual(sample.prompt_ids);
          expect(seqOf(res[i])).toEqual(sample.final);
        });
      } finally {
        await m.dispose();
      }
    });
  }
});
