/**
 * Engine parity for the embedded tiny models: floatscope's ONNX engine, loading models/tiny-* from
 * their real on-disk files, reproduces the training framework's logits and attention probabilities
 * (test/fixtures/tiny-models, written by training/fixtures.py from the same files) within 1e-4.
 * Models not trained yet are skipped by name.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { createEngine } from "../../src/runtime/engine.js";
import { probeName } from "../../src/util/probes.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const FIXTURES = path.join(ROOT, "test/fixtures/tiny-models");
const TOL = 1e-4;
const NAMES = ["tiny-llama", "tiny-qwen", "tiny-llada", "tiny-dream"];
const present = (n: string) =>
  fs.existsSync(path.join(ROOT, "models", n, "model.safetensors")) && fs.existsSync(path.join(FIXTURES, `${n}.inputs.json`));

interface Prompt {
  name: string;
  ids: number[];
  logits_rows: [number, number];
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d; // NaN propagates as a failure
  }
  return m;
}

describe.each(NAMES)("%s: engine vs training framework", (name) => {
  it.skipIf(!present(name))("logits of three prompts and layer attention of prompt 0 within 1e-4", async () => {
    const fx = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.inputs.json`), "utf8")) as { prompts: Prompt[] };
    const ref = new Map(readSafetensorsHeader(path.join(FIXTURES, `${name}.reference.safetensors`)).tensors.map((t) => [t.name, t]));
    const layers = [...ref.keys()].filter((k) => k.startsWith("p0.blocks.")).length;
    const engine = await createEngine(path.join(ROOT, "models", name), {
      probes: { pattern: { layers: Array.from({ length: layers }, (_, l) => l) } },
    });
    try {
      for (const p of fx.prompts) {
        const out = await engine.forward({ ids: Int32Array.from(p.ids), batch: 1, seq: p.ids.length });
        const V = out.vocabSize;
        const [a, b] = p.logits_rows;
        const got = out.logits.subarray(a * V, b * V);
        const want = readTensorF32(ref.get(`${p.name}.logits`)!);
        expect(maxAbsDiff(got, want), `${p.name} logits`).toBeLessThan(TOL);
        if (p.name === "p0") {
          for (let l = 0; l < layers; l++) {
            const probe = out.probes.get(probeName.pattern(l));
            expect(probe, `probe ${probeName.pattern(l)}`).toBeDefined();
            const wantA = readTensorF32(ref.get(`p0.blocks.${l}.attn.pattern`)!);
            expect(maxAbsDiff(probe!.data as Float32Array, wantA), `layer ${l} attention`).toBeLessThan(TOL);
          }
        }
      }
    } finally {
      await engine.dispose();
    }
  });
});
