/**
 * `generate(..., { finalPassEngine })`: the steps run on a probe-free engine (for an ARM, through its key/value
 * cache) and the final pass on a second engine of the same checkpoint with probes. Against a run on the probed
 * engine alone (every step re-running the prefix with probes), on models/tiny-llama and models/tiny-qwen: the same
 * tokens, the same final sequence, and the final pass's probes within 1e-5; the steps hold no probes. A grid's
 * final-pass measures (qk, absorption, token-types) on an ARM use this (src/grid/shard.ts). Wrong pairings are
 * typed errors naming `finalPassEngine`.
 */
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openModel, type OpenModel } from "../../src/model/open.js";
import { generate } from "../../src/samplers/generate.js";
import { SettingsError } from "../../src/util/errors.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const PROMPTS = ["The capital of France is", "Question: who wrote Hamlet?\nAnswer:", "Once upon a time"];
const PROBES = { received: true, qk: { layers: [0, 1] } };

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe.each(["tiny-llama", "tiny-qwen"])("final-pass engine on %s", (model) => {
  let probed: OpenModel;
  let plain: OpenModel;
  beforeAll(async () => {
    probed = await openModel(path.join(ROOT, "models", model), { threads: 1, probes: PROBES });
    plain = await openModel(path.join(ROOT, "models", model), { threads: 1 });
  });
  afterAll(async () => {
    await probed?.dispose();
    await plain?.dispose();
  });

  it("gives the probed run's tokens and final-pass probes, with probe-free steps through the cache", async () => {
    expect(plain.engine.decoder).toBeDefined(); // the steps can run through the key/value cache
    const settings = { genLength: 16 };
    const want = await generate(probed.engine, PROMPTS, settings, { tokenizer: probed.tokenizer, stopOnInterrupt: false });
    const have = await generate(plain.engine, PROMPTS, settings, {
      tokenizer: plain.tokenizer,
      stopOnInterrupt: false,
      finalPassEngine: probed.engine,
    });
    // some prompt decodes several tokens (a tiny model may stop at EOS at once on another)
    expect(want.reduce((n, r) => n + r.trace.steps.length, 0)).toBeGreaterThan(PROMPTS.length);
    for (let i = 0; i < PROMPTS.length; i++) {
      expect(have[i].answer).toBe(want[i].answer);
      expect(Array.from(have[i].trace.final.sequence)).toEqual(Array.from(want[i].trace.final.sequence));
      // the steps of the probed run hold probes, those of the split run none
      expect(want[i].trace.steps[0].probes.size).toBeGreaterThan(0);
      for (const s of have[i].trace.steps) expect(s.probes.size).toBe(0);
      const names = [...want[i].trace.final.probes.keys()].sort();
      expect(names.length).toBeGreaterThanOrEqual(3); // received per layer and q/k at two layers
      expect([...have[i].trace.final.probes.keys()].sort()).toEqual(names);
      for (const n of names) {
        const w = want[i].trace.final.probes.get(n)!;
        const h = have[i].trace.final.probes.get(n)!;
        expect(h.dims).toEqual(w.dims);
        expect(maxAbsDiff(h.data, w.data), n).toBeLessThan(1e-5);
      }
    }
  });

  it("refuses a step engine with probes, another checkpoint and an intervention, naming finalPassEngine", async () => {
    const other = await openModel(path.join(ROOT, "models", model === "tiny-llama" ? "tiny-qwen" : "tiny-llama"), { threads: 1 });
    try {
      const cases: [Parameters<typeof generate>[0], Parameters<typeof generate>[3]][] = [
        [probed.engine, { tokenizer: probed.tokenizer, finalPassEngine: probed.engine }],
        [plain.engine, { tokenizer: plain.tokenizer, finalPassEngine: other.engine }],
        [plain.engine, { tokenizer: plain.tokenizer, finalPassEngine: probed.engine, intervention: "first" }],
      ];
      for (const [engine, options] of cases) {
        const e = await generate(engine, PROMPTS.slice(0, 1), { genLength: 4 }, { ...options, stopOnInterrupt: false }).catch(
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(SettingsError);
        expect((e as SettingsError).field).toBe("finalPassEngine");
      }
    } finally {
      await other.dispose();
    }
  });
});
