/**
 * Step-by-step parity of the LLaDA sampler with an independent reference: LLaDA's official
 * `generate` algorithm re-written in torch over the HF reference model of the tiny LLaDA parity
 * checkpoint (test/fixtures/samplers/make_llada_reference.py → llada-reference.json). Here the
 * same checkpoint runs through our real checkpoint → graph → ONNX Runtime engine, with both prompts
 * in one left-padded batch.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { loadTokenizer } from "../../src/checkpoint/tokenizer.js";
import { createEngine } from "../../src/runtime/engine.js";
import type { Engine } from "../../src/runtime/types.js";
import { generate } from "../../src/samplers/generate.js";
import type { TextTokenizer } from "../../src/runtime/types.js";

interface RefStep {
  step: number;
  block: number;
  canvas: number[];
  transferred: number[];
  tokens: number[];
  confidence: number[];
}
interface RefRun {
  name: string;
  gen_length: number;
  block_length: number;
  steps: number;
  cfg_scale: number;
  samples: { prompt: string; prompt_ids: number[]; final: number[]; steps: RefStep[] }[];
}

const root = path.resolve(import.meta.dirname, "..", "..");
const ref = JSON.parse(fs.readFileSync(path.join(root, "test/fixtures/samplers/llada-reference.json"), "utf8")) as { runs: RefRun[] };
const ckptDir = path.join(root, "test/fixtures/parity/llada/model");

describe("LLaDA sampler vs the reference run (tiny LLaDA checkpoint, real engine)", () => {
  let engine: Engine;
  let tokenizer: TextTokenizer;
  beforeAll(async () => {
    const ckpt = openCheckpoint(ckptDir);
    engine = await createEngine(ckpt, { threads: 1 });
    tokenizer = loadTokenizer(ckpt.tokenizer!, { bosTokenId: engine.spec.bosTokenId, eosTokenIds: engine.spec.eosTokenIds });
  });
  afterAll(async () => engine?.dispose());

  for (const run of ref.runs) {
    it(`${run.name}: G ${run.gen_length}, B ${run.block_length}, S ${run.steps}, cfg ${run.cfg_scale} — every step's canvas, positions, tokens and confidences`, async () => {
      const res = await generate(
        engine,
        run.samples.map((s) => s.prompt),
        {
          sampler: "llada",
          genLength: run.gen_length,
          blockLength: run.block_length,
          steps: run.steps,
          cfgScale: run.cfg_scale,
          temperature: 0,
        },
        { tokenizer },
      );
      run.samples.forEach((sample, i) => {
        const t = res[i].trace;
        expect(t.prompt.ids, "our tokenizer gives HF's prompt ids").toEqual(sample.prompt_ids);
        expect(t.steps.length).toBe(sample.steps.length);
        sample.steps.forEach((rs, k) => {
          const s = t.steps[k];
          const where = `${run.name} prompt ${i} step ${k}`;
          expect(s.block, where).toBe(rs.block);
          expect(Array.from(s.canvas), where).toEqual(rs.canvas);
          expect(Array.from(s.transferred), where).toEqual(rs.transferred);
          expect(Array.from(s.tokens), where).toEqual(rs.tokens);
          rs.confidence.forEach((c, j) => expect(Math.abs(s.confidence[j] - c), where).toBeLessThan(1e-4));
        });
        expect(Array.from(t.final.sequence)).toEqual(sample.final);
      });
    });
  }
});
