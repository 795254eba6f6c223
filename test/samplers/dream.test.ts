import { describe, expect, it } from "vitest";
import { generate } from "../../src/samplers/generate.js";
import { dreamSampleToken } from "../../src/samplers/sampling.js";
import { Rng } from "../../src/util/rng.js";
import { FakeEngine, FakeTokenizer, defaultLogits, fakeSpec } from "../support/fake-engine.js";

const tokenizer = new FakeTokenizer();
const PROMPT = "t5 t6 t7";
const M = 31;

describe("Dream sampler on a fake engine", () => {
  it("transfers torch's linspace schedule per step (32 masks / 32 steps: 0, 1 × 30, 2)", async () => {
    const [r] = await generate(new FakeEngine({ family: "dream" }), [PROMPT], { genLength: 32, steps: 32 }, { tokenizer });
    const counts = r.trace.steps.map((s) => s.transferred.length);
    expect(counts).toEqual([0, ...Array(30).fill(1), 2]);
    expect(Array.from(r.trace.final.sequence).includes(M)).toBe(false);
  });

  it("records the Dream shift: the token at position i came from query row i − 1", async () => {
    const [r] = await generate(new FakeEngine({ family: "dream" }), [PROMPT], { genLength: 6, steps: 3 }, { tokenizer });
    expect(r.trace.model.logitShift).toBe(1);
    const all = r.trace.steps.flatMap((s) => Array.from(s.transferred, (p, j) => [p, s.producingRow[j]]));
    expect(all.length).toBe(6);
    for (const [p, q] of all) expect(q).toBe(p - 1);
  });

  it("entropy ordering at τ = 0: the positions with the highest negative entropy are written", async () => {
    const spec = fakeSpec({ family: "dream" });
    const logitsOf = defaultLogits(spec);
    const [r] = await generate(
      new FakeEngine({ family: "dream" }),
      [PROMPT],
      { genLength: 8, steps: 4, temperature: 0, topP: null },
      { tokenizer },
    );
    for (const s of r.trace.steps) {
      const cands: { p: number; conf: number }[] = [];
      for (let p = 0; p < s.canvas.length; p++) {
        if (s.canvas[p] !== M) continue;
        // The engine shifted: row p holds the model's row p − 1.
        cands.push({ p, conf: dreamSampleToken(logitsOf(s.canvas, p - 1), { temperature: 0 }, "entropy", new Rng(0)).confidence });
      }
      cands.sort((a, b) => b.conf - a.conf || a.p - b.p);
      const want = cands
        .slice(0, s.transferred.length)
        .map((c) => c.p)
        .sort((a, b) => a - b);
      expect(Array.from(s.transferred)).toEqual(want);
    }
  });

  it("τ = 0 is deterministic across seeds; τ 0.2 / top_p 0.95 and alg_temp > 0 reproduce from the seed", async () => {
    const go = async (settings: Record<string, unknown>) => {
      const [r] = await generate(new FakeEngine({ family: "dream" }), [PROMPT], { genLength: 8, steps: 4, ...settings }, { tokenizer });
      return r.trace.steps.map((s) => [...s.transferred, ...s.tokens].join()).join("|");
    };
    expect(await go({ temperature: 0, seed: 1 })).toBe(await go({ temperature: 0, seed: 2 }));
    expect(await go({ seed: 5 })).toBe(await go({ seed: 5 }));
    expect(await go({ seed: 5, algTemp: 0.5 })).toBe(await go({ seed: 5, algTemp: 0.5 }));
    const many = await Promise.all([1, 2, 3, 4].map((s) => go({ seed: s, algTemp: 0.5, temperature: 1 })));
    expect(new Set(many).size).toBeGreaterThan(1);
  });

  it("topk_margin, maskgit_plus and origin all finish with no masks left", async () => {
    for (const alg of ["topk_margin", "maskgit_plus", "origin"]) {
      const [r] = await generate(new FakeEngine({ family: "dream" }), [PROMPT], { genLength: 8, steps: 5, alg, seed: 1 }, { tokenizer });
      expect(Array.from(r.trace.final.sequence).includes(M), alg).toBe(false);
      expect(
        r.trace.steps.reduce((n, s) => n + s.transferred.length, 0),
        alg,
      ).toBe(8);
    }
  });
});
