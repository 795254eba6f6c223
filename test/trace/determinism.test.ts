/**
 * Determinism across the four model families, with the real engine on the embedded tiny models:
 * the same seed gives byte-identical `.fstrace` files, another seed gives different ones (the runs
 * sample: τ = 1), and every file passes the validating reader, meta cross-checks included — so the
 * reader's checks hold for what the samplers actually write, for every probe kind recorded.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { loadTokenizer } from "../../src/checkpoint/tokenizer.js";
import { createEngine } from "../../src/runtime/engine.js";
import { generate } from "../../src/samplers/generate.js";
import { readTrace } from "../../src/trace/reader.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-determinism-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const FAMILIES = [
  { model: "tiny-llama", family: "llama" },
  { model: "tiny-qwen", family: "qwen2" },
  { model: "tiny-llada", family: "llada" },
  { model: "tiny-dream", family: "dream" },
] as const;

describe("same seed → byte-identical traces, for all four families", () => {
  for (const { model, family } of FAMILIES) {
    it(`${model} (${family})`, async () => {
      const ckpt = openCheckpoint(path.join(root, "models", model));
      const probes = {
        received: true,
        receivedHeads: true,
        self: true,
        argmax: true,
        regionSum: { regions: 1 },
        pattern: { layers: [0] },
        qk: { layers: [1], preRope: true },
      };
      const engine = await createEngine(ckpt, { threads: 1, probes });
      expect(engine.spec.family).toBe(family);
      const tokenizer = loadTokenizer(ckpt.tokenizer!, { bosTokenId: engine.spec.bosTokenId, eosTokenIds: engine.spec.eosTokenIds });
      try {
        // A held-out record of the synthetic world, in the layout the tiny models are trained on.
        const text =
          "Passage 1 : Bifo Mimosis has a home in Viro . The favourite colour of Bifo Mimosis is green .\nQuestion : What is the favourite colour of Bifo Mimosis ?";
        const n = tokenizer.encode(text).ids.length;
        const causal = engine.spec.causal;
        const settings = { genLength: 8, ...(causal ? { stopAtEos: false } : { steps: 4 }), temperature: 1 };
        const run = async (seed: number, name: string) => {
          const file = path.join(dir, `${model}-${name}.fstrace`);
          await generate(
            engine,
            [{ text, regions: [{ name: "prompt", tokens: [0, n], chars: [0, text.length] }] }],
            { ...settings, seed },
            { tokenizer, traceFiles: [file], modelName: model },
          );
          return { file, bytes: fs.readFileSync(file) };
        };
        const a = await run(11, "a");
        const b = await run(11, "b");
        expect(b.bytes.equals(a.bytes)).toBe(true);
        const c = await run(12, "c");
        expect(c.bytes.equals(a.bytes)).toBe(false);
        for (const f of [a.file, c.file]) {
          const t = readTrace(f);
          expect(t.partial).toBe(false);
          expect(t.model.family).toBe(family);
          expect(t.steps.length).toBe(causal ? 8 : 4);
        }
      } finally {
        await engine.dispose();
      }
    });
  }
});
