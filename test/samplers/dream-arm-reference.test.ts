/**
 * Dream and ARM samplers vs independent reference runs over the tiny parity checkpoints
 * (test/fixtures/samplers/make_dream_arm_reference.py: HF modules + the upstream algorithms in
 * torch). Our side: the real checkpoint → graph → ONNX Runtime engine, both prompts in one
 * left-padded batch. Dream's confidences are compared to 1e-4; tokens and positions exactly.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { loadTokenizer } from "../../src/checkpoint/tokenizer.js";
import { createEngine } from "../../src/runtime/engine.js";
import { generate } from "../../src/samplers/generate.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(root, "test/fixtures/samplers", name), "utf8"));

async function open(rel: string) {
  const ckpt = openCheckpoint(path.join(root, rel));
  const engine = await createEngine(ckpt, { threads: 1 });
  const tokenizer = loadTokenizer(ckpt.tokenizer!, { bosTokenId: engine.spec.bosTokenId, eosTokenIds: engine.spec.eosTokenIds });
  return { engine, tokenizer };
}

interface Sample {
  prompt: string;
  prompt_ids: number[];
  final: number[];
  steps?: { step: number; canvas: number[]; transferred: number[]; tokens: number[]; confidence: number[] }[];
}

describe("Dream sampler vs the reference diffusion_generate (tiny Dream checkpoint, real engine, τ 0)", () => {
  const ref = fixture("dream-reference.json") as {
    checkpoint: string;
    runs: { alg: string; gen_length: number; steps: number; top_p: number | null; samples: Sample[] }[];
  };
  for (const run of ref.runs) {
    it(`${run.alg}: G ${run.gen_length}, S ${run.steps}, top_p ${run.top_p} — every step`, async () => {
      const { engine, tokenizer } = await open(ref.checkpoint);
      try {
        const res = await generate(
          engine,
          run.samples.map((s) => s.prompt),
          {
            sampler: "dream",
            alg: run.alg,
            genLength: run.gen_length,
            steps: run.steps,
            temperature: 0,
            topP: run.top_p,
          },
          { tokenizer },
        );
        run.samples.forEach((sample, i) => {
          const t = res[i].trace;
          expect(t.prompt.ids).toEqual(sample.prompt_ids);
          sample.steps!.forEach((rs, k) => {
            const s = t.steps[k];
            const where = `${run.alg} prompt ${i} step ${k}`;
            expect(Array.from(s.canvas), where).toEqual(rs.canvas);
            expect(Array.from(s.transferred), where).toEqual(rs.transferred);
            expect(Array.from(s.tokens), where).toEqual(rs.tokens);
            expect(Array.from(s.producingRow), where).toEqual(rs.transferred.map((p) => p - 1));
            rs.confidence.forEach((c, j) => expect(Math.abs(s.confidence[j] - c), where).toBeLessThan(1e-4));
          });
          expect(Array.from(t.final.sequence)).toEqual(sample.final);
        });
      } finally {
        await engine.dispose();
      }
    });
  }
});

describe("ARM greedy decoding vs the reference loop (tiny llama / qwen2 checkpoints, real engine)", () => {
  const ref = fixture("arm-reference.json") as {
    runs: { family: string; checkpoint: string; max_new_tokens: number; samples: Sample[] }[];
  };
  for (const run of ref.runs) {
    it(`${run.family}: ${run.max_new_tokens} greedy tokens for each prompt, batched`, async () => {
      const { engine, tokenizer } = await open(run.checkpoint);
      try {
        const res = await generate(
          engine,
          run.samples.map((s) => s.prompt),
          { genLength: run.max_new_tokens },
          { tokenizer },
        );
        run.samples.forEach((sample, i) => {
          expect(res[i].trace.prompt.ids).toEqual(sample.prompt_ids);
          expect(Array.from(res[i].trace.final.sequence)).toEqual(sample.final);
        });
      } finally {
        await engine.dispose();
      }
    });
  }
});
