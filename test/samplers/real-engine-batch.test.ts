/**
 * Every probe kind survives batching: with the real engine over the tiny LLaDA checkpoint, each
 * prompt's per-step probes (received, received_heads, self, argmax, region_sum, pattern) recorded in
 * a left-padded batch equal the ones recorded when the prompt runs alone, and the trace file holds
 * them with the right axes.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { loadTokenizer } from "../../src/checkpoint/tokenizer.js";
import { createEngine } from "../../src/runtime/engine.js";
import { generate, type PromptInput } from "../../src/samplers/generate.js";
import { readTrace } from "../../src/trace/reader.js";

const root = path.resolve(import.meta.dirname, "..", "..");

describe("real engine: batched traces equal solo traces for every probe kind", () => {
  it("tiny LLaDA, 2 prompts of different lengths, 2 blocks", async () => {
    const ckpt = openCheckpoint(path.join(root, "test/fixtures/parity/llada/model"));
    const probes = { received: true, receivedHeads: true, self: true, argmax: true, regionSum: { regions: 2 }, pattern: { layers: [1] } };
    const engine = await createEngine(ckpt, { threads: 1, probes });
    const tokenizer = loadTokenizer(ckpt.tokenizer!, { bosTokenId: engine.spec.bosTokenId, eosTokenIds: engine.spec.eosTokenIds });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-real-"));
    try {
      const texts = ["the cat sat on the mat.", "What is the capital of France?"];
      const prompts: PromptInput[] = texts.map((text) => {
        const n = tokenizer.encode(text).ids.length;
        return {
          text,
          regions: [
            { name: "prompt", tokens: [0, n], chars: [0, text.length] },
            { name: "answer", tokens: [n, n + 8], chars: [text.length, text.length] },
          ],
        };
      });
      const settings = { genLength: 8, blockLength: 4, steps: 4 };
      const files = [path.join(dir, "a.fstrace"), path.join(dir, "b.fstrace")];
      await generate(engine, prompts, settings, { tokenizer, traceFiles: files });
      for (let i = 0; i < 2; i++) {
        const [solo] = await generate(engine, [prompts[i]], settings, { tokenizer });
        const a = readTrace(files[i]);
        expect(Array.from(a.final.sequence)).toEqual(Array.from(solo.trace.final.sequence));
        const T = a.final.sequence.length;
        const passes = [
          ...a.steps.map((s, k) => [s.probes, solo.trace.steps[k].probes] as const),
          [a.final.probes, solo.trace.final.probes] as const,
        ];
        for (const [mine, theirs] of passes) {
          expect([...mine.keys()].sort()).toEqual([...theirs.keys()].sort());
          for (const [name, p] of theirs) {
            const q = mine.get(name)!;
            expect(q.dims, name).toEqual(p.dims);
            expect(q.axes, name).toEqual(p.axes);
            let maxDiff = 0;
            for (let j = 0; j < p.data.length; j++) maxDiff = Math.max(maxDiff, Math.abs(q.data[j] - p.data[j]));
            expect(maxDiff, name).toBeLessThan(name.endsWith("argmax_key") ? 1 : 1e-5);
          }
        }
        expect(a.final.probes.get("blocks.1.attn.pattern")!.dims).toEqual([4, T, T]);
        expect(a.final.probes.get("blocks.0.attn.region_sum")!.dims).toEqual([2, 2]);
        expect(a.final.probes.get("blocks.0.attn.received_heads")!.dims).toEqual([4, T]);
        // received is a distribution over keys (mean over real query rows of row-stochastic attention)
        const r = a.steps[0].probes.get("blocks.0.attn.received")!.data;
        expect(Math.abs(Array.from(r as Float32Array).reduce((x, y) => x + y, 0) - 1)).toBeLessThan(1e-5);
      }
    } finally {
      await engine.dispose();
    }
  });

  it("tiny Dream at τ 1: the same seed gives byte-identical trace files, another seed does not", async () => {
    const ckpt = openCheckpoint(path.join(root, "test/fixtures/parity/dream/model"));
    const engine = await createEngine(ckpt, { threads: 1 });
    const tokenizer = loadTokenizer(ckpt.tokenizer!, { bosTokenId: engine.spec.bosTokenId, eosTokenIds: engine.spec.eosTokenIds });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-real-seed-"));
    try {
      const run = async (seed: number, name: string) => {
        const file = path.join(dir, name);
        await generate(
          engine,
          ["What is the capital of France?", "the cat"],
          { genLength: 16, steps: 8, seed, temperature: 1 },
          { tokenizer, traceFiles: [file, undefined] },
        );
        return fs.readFileSync(file);
      };
      const a = await run(7, "a.fstrace");
      const b = await run(7, "b.fstrace");
      expect(b.equals(a)).toBe(true);
      const c = await run(8, "c.fstrace");
      expect(c.equals(a)).toBe(false);
    } finally {
      await engine.dispose();
    }
  });
});
