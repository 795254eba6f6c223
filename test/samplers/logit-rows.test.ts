/**
 * Row selection and in-graph summaries change nothing the samplers record: on the tiny parity
 * checkpoints, an engine with the row-selectable head (default) and one with the plain head
 * (`logitRows: false`: every row, chosen in JS) give identical traces — canvases, positions,
 * tokens, confidences (bit for bit as stored, f32), producing rows and probes — for the same seed,
 * two prompts of different lengths batched (left padding). Covered: the summary paths (LLaDA
 * τ 0, Dream τ 0 with each confidence, ARM greedy), the row paths (τ > 0, top-p, sampled ARM),
 * and CFG (the same rows gathered from both halves, mixed in JS).
 */
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { loadTokenizer } from "../../src/checkpoint/tokenizer.js";
import { createEngine, type OnnxEngine } from "../../src/runtime/engine.js";
import type { Engine, ForwardInput, TextTokenizer } from "../../src/runtime/types.js";
import { generate } from "../../src/samplers/generate.js";
import type { Trace } from "../../src/trace/types.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const prompts = ["the cat sat on the mat.", "What is the capital of France?"];

/** Records what each forward asked for. */
function spy(engine: Engine): { engine: Engine; inputs: ForwardInput[] } {
  const inputs: ForwardInput[] = [];
  return {
    inputs,
    engine: {
      spec: engine.spec,
      probes: engine.probes,
      device: engine.device,
      logitRows: engine.logitRows,
      dispose: () => engine.dispose(),
      forward: (input) => {
        inputs.push(input);
        return engine.forward(input);
      },
    },
  };
}

function expectSameTrace(a: Trace, b: Trace, where: string): void {
  expect(a.steps.length, where).toBe(b.steps.length);
  a.steps.forEach((s, k) => {
    const t = b.steps[k];
    const at = `${where}, step ${k}`;
    expect(Array.from(s.canvas), at).toEqual(Array.from(t.canvas));
    expect(Array.from(s.transferred), at).toEqual(Array.from(t.transferred));
    expect(Array.from(s.tokens), at).toEqual(Array.from(t.tokens));
    expect(Array.from(s.producingRow), at).toEqual(Array.from(t.producingRow));
    expect(
      Buffer.from(s.confidence.buffer).equals(Buffer.from(t.confidence.buffer)),
      `${at}: confidences ${s.confidence} vs ${t.confidence}`,
    ).toBe(true);
    for (const [name, p] of s.probes) expect(Array.from(p.data), `${at} ${name}`).toEqual(Array.from(t.probes.get(name)!.data));
  });
  expect(Array.from(a.final.sequence), where).toEqual(Array.from(b.final.sequence));
  for (const [name, p] of a.final.probes)
    expect(Array.from(p.data), `${where} final ${name}`).toEqual(Array.from(b.final.probes.get(name)!.data));
}

const cases: [string, string, Record<string, unknown>, "summaries" | "rows"][] = [
  ["llada", "LLaDA τ 0 low_confidence, 2 blocks", { genLength: 8, blockLength: 4, steps: 4 }, "summaries"],
  ["llada", "LLaDA τ 0 random remasking", { genLength: 8, blockLength: 4, steps: 4, alg: "random" }, "summaries"],
  ["llada", "LLaDA τ 0.7", { genLength: 8, blockLength: 4, steps: 4, temperature: 0.7 }, "rows"],
  ["llada", "LLaDA τ 0, CFG 1.5", { genLength: 8, blockLength: 4, steps: 4, cfgScale: 1.5 }, "rows"],
  ["dream", "Dream entropy τ 0", { genLength: 8, steps: 4, temperature: 0, topP: null }, "summaries"],
  ["dream", "Dream topk_margin τ 0", { genLength: 8, steps: 4, temperature: 0, topP: null, alg: "topk_margin" }, "summaries"],
  ["dream", "Dream maskgit_plus τ 0", { genLength: 8, steps: 4, temperature: 0, topP: null, alg: "maskgit_plus" }, "summaries"],
  ["dream", "Dream origin τ 0", { genLength: 8, steps: 4, temperature: 0, topP: null, alg: "origin" }, "summaries"],
  ["dream", "Dream entropy τ 0.2, top-p 0.95 (defaults)", { genLength: 8, steps: 4 }, "rows"],
  ["llama", "LLaMA greedy", { genLength: 6, stopAtEos: false }, "summaries"],
  ["qwen2", "Qwen2 sampled τ 0.8, top-k 20", { genLength: 6, stopAtEos: false, alg: "sample", temperature: 0.8, topK: 20 }, "rows"],
];

describe("samplers give identical traces with and without logits row selection", () => {
  const engines = new Map<string, { sel: OnnxEngine; plain: OnnxEngine; tokenizer: TextTokenizer }>();
  beforeAll(async () => {
    for (const family of new Set(cases.map((c) => c[0]))) {
      const ckpt = openCheckpoint(path.join(root, "test/fixtures/parity", family, "model"));
      const probes = { received: true, argmax: true };
      const sel = await createEngine(ckpt, { threads: 1, probes });
      const plain = await createEngine(ckpt, { threads: 1, probes, logitRows: false });
      const tokenizer = loadTokenizer(ckpt.tokenizer!, { bosTokenId: sel.spec.bosTokenId, eosTokenIds: sel.spec.eosTokenIds });
      engines.set(family, { sel, plain, tokenizer });
    }
  });
  afterAll(async () => {
    for (const e of engines.values()) {
      await e.sel.dispose();
      await e.plain.dispose();
    }
  });

  it.each(cases)("%s: %s", async (family, label, settings, path_) => {
    const { sel, plain, tokenizer } = engines.get(family)!;
    const spied = spy(sel);
    const fast = await generate(spied.engine, prompts, { ...settings, seed: 7 }, { tokenizer, stopOnInterrupt: false });
    const slow = await generate(plain, prompts, { ...settings, seed: 7 }, { tokenizer, stopOnInterrupt: false });
    for (let i = 0; i < prompts.length; i++) expectSameTrace(fast[i].trace, slow[i].trace, `${label}, prompt ${i}`);
    // the optimisation was in use: every step asked for fewer rows than the batch holds
    const steps = spied.inputs.slice(0, -1); // the last forward is the final probe pass (one row)
    expect(steps.length).toBeGreaterThan(0);
    for (const input of steps) {
      expect(input.logitRows!.length).toBeLessThan(input.batch * input.seq);
      expect(input.summaries === true, label).toBe(path_ === "summaries");
    }
    expect(spied.inputs.at(-1)!.logitRows!.length).toBe(spied.inputs.at(-1)!.batch);
  });
});
