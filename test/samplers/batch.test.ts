import { describe, expect, it } from "vitest";
import { padBatch, sliceProbes } from "../../src/samplers/batch.js";
import { generate } from "../../src/samplers/generate.js";
import type { ProbeTensor } from "../../src/util/probes.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const tokenizer = new FakeTokenizer();

describe("batched generation with left padding", () => {
  it("padBatch left-pads with the pad id and a 0/1 attention mask", () => {
    const { input, pads } = padBatch([Int32Array.from([7, 8, 9]), Int32Array.from([5])], 0);
    expect(input.seq).toBe(3);
    expect(Array.from(input.ids)).toEqual([7, 8, 9, 0, 0, 5]);
    expect(Array.from(input.attentionMask!)).toEqual([1, 1, 1, 0, 0, 1]);
    expect(pads).toEqual([0, 2]);
  });

  it("padBatch marks region_sum spans only inside each row's own canvas (a span past a short row's end never spills into the next row)", () => {
    // Row 0 is 2 tokens long but its "answer" span is [1, 4) (an ARM canvas before the answer is generated);
    // row 1 is 4 tokens. With seq 4, row 0's positions 2 and 3 (unpadded) are columns 4 and 5 of the flat
    // [batch·seq] axis: row 1's first tokens. They must stay unmarked.
    const { input, pads } = padBatch(
      [Int32Array.from([1, 2]), Int32Array.from([1, 3, 4, 5])],
      0,
      [
        [
          [0, 1],
          [1, 4],
        ],
        [
          [0, 1],
          [1, 4],
        ],
      ],
      2,
    );
    expect(pads).toEqual([2, 0]);
    const hot = Array.from(input.regionOneHot!);
    // [batch 2, seq 4, regions 2]: row 0 = pad, pad, region 0, region 1; row 1 = region 0, then region 1 ×3.
    expect(hot).toEqual([0, 0, 0, 0, 1, 0, 0, 1, /* row 1 */ 1, 0, 0, 1, 0, 1, 0, 1]);
  });

  it("sliceProbes drops the batch axis and padding columns of query/key axes, and re-bases argmax keys", () => {
    // [batch 2, head 1, query 3, key 3] with values = flat index; row 1 has pad 1.
    const pattern: ProbeTensor = {
      name: "blocks.0.attn.pattern",
      axes: ["batch", "head", "query", "key"],
      dims: [2, 1, 3, 3],
      data: Float32Array.from({ length: 18 }, (_, i) => i),
    };
    const arg: ProbeTensor = {
      name: "blocks.0.attn.argmax_key",
      axes: ["batch", "head", "query"],
      dims: [2, 1, 3],
      data: Int32Array.from([0, 1, 2, 1, 2, 1]),
    };
    const out = sliceProbes(
      new Map([
        [pattern.name, pattern],
        [arg.name, arg],
      ]),
      1,
      1,
    );
    const p = out.get("blocks.0.attn.pattern")!;
    expect(p.dims).toEqual([1, 2, 2]);
    expect(p.axes).toEqual(["head", "query", "key"]);
    expect(Array.from(p.data)).toEqual([13, 14, 16, 17]);
    const a = out.get("blocks.0.attn.argmax_key")!;
    expect(Array.from(a.data)).toEqual([1, 0]);
  });

  for (const family of ["llada", "dream", "llama"] as const) {
    it(`${family}: each prompt's trace is the same batched as alone (steps, probes, final pass)`, async () => {
      const prompts = ["t5 t6 t7 t8 t9", "t4", "t10 t11 t12"];
      // Deterministic settings, so a solo run (RNG stream 0) must match batch row i (stream i).
      const settings = family === "llama" ? { genLength: 5 } : { genLength: 6, steps: 3, temperature: 0 };
      const probes = { received: true, argmax: true };
      const batched = await generate(new FakeEngine({ family, probes }), prompts, settings, { tokenizer });
      for (let i = 0; i < prompts.length; i++) {
        const [solo] = await generate(new FakeEngine({ family, probes }), [prompts[i]], settings, { tokenizer });
        const a = batched[i].trace;
        const b = solo.trace;
        expect(a.stream).toBe(i);
        expect(a.prompt.ids).toEqual(b.prompt.ids);
        expect(Array.from(a.final.sequence)).toEqual(Array.from(b.final.sequence));
        expect(a.steps.length).toBe(b.steps.length);
        a.steps.forEach((s, k) => {
          const t = b.steps[k];
          expect(Array.from(s.canvas)).toEqual(Array.from(t.canvas));
          expect(Array.from(s.transferred)).toEqual(Array.from(t.transferred));
          expect(Array.from(s.tokens)).toEqual(Array.from(t.tokens));
          for (const [name, p] of t.probes) {
            expect(s.probes.get(name)!.dims, name).toEqual(p.dims);
            expect(Array.from(s.probes.get(name)!.data), name).toEqual(Array.from(p.data));
          }
        });
        for (const [name, p] of b.final.probes) expect(Array.from(a.final.probes.get(name)!.data), name).toEqual(Array.from(p.data));
        const T = a.final.sequence.length;
        expect(a.final.probes.get("blocks.1.attn.received")!.dims).toEqual([T]);
        expect(a.final.probes.get("blocks.0.attn.argmax_key")!.dims).toEqual([2, T]);
      }
    });
  }

  it("batchSize splits prompts into consecutive batches; RNG streams follow the prompt index, so results do not change", async () => {
    const prompts = ["t5 t6 t7", "t4", "t10 t11", "t8 t9 t12 t13", "t3"];
    const settings = { genLength: 6, steps: 3, temperature: 1.2, seed: 11 };
    const engine = new FakeEngine();
    const all = await generate(new FakeEngine(), prompts, settings, { tokenizer });
    const chunked = await generate(engine, prompts, settings, { tokenizer, batchSize: 2 });
    expect(engine.calls.map((c) => c.batch)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1]);
    expect(chunked.map((r) => r.trace.stream)).toEqual([0, 1, 2, 3, 4]);
    chunked.forEach((r, i) => expect(Array.from(r.trace.final.sequence)).toEqual(Array.from(all[i].trace.final.sequence)));
    expect((await generate(new FakeEngine(), prompts, settings, { tokenizer, batchSize: 0 }).catch((e: Error) => e)).toString()).toMatch(
      /batchSize/,
    );
  });
});
