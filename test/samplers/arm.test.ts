import { describe, expect, it } from "vitest";
import { generate } from "../../src/samplers/generate.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const tokenizer = new FakeTokenizer();

/** Next token = last token + 1, EOS (2) after token 9. */
const counting = (canvas: Int32Array, pos: number) => {
  const l = new Float32Array(32);
  const next = canvas[pos] >= 9 ? 2 : canvas[pos] + 1;
  l[next] = 5;
  return l;
};

describe("ARM decoding on a fake engine", () => {
  it("greedy: appends the argmax of the last row, one position per step, stops on EOS (kept)", async () => {
    const engine = new FakeEngine({ family: "llama", logits: counting });
    const [r] = await generate(engine, ["t4 t5"], { genLength: 10 }, { tokenizer });
    expect(Array.from(r.trace.final.sequence)).toEqual([4, 5, 6, 7, 8, 9, 2]);
    expect(r.trace.steps.length).toBe(5);
    r.trace.steps.forEach((s, k) => {
      expect(s.canvas.length).toBe(2 + k);
      expect(Array.from(s.transferred)).toEqual([2 + k]);
      expect(Array.from(s.producingRow)).toEqual([1 + k]);
    });
    expect(r.answer).toBe(" t6 t7 t8 t9"); // EOS skipped in the answer
    expect(r.trace.completion).toBe(" t6 t7 t8 t9 <s2>");
  });

  it("stops at genLength without EOS and with stopAtEos false", async () => {
    const [r] = await generate(
      new FakeEngine({ family: "llama", logits: counting }),
      ["t8"],
      { genLength: 4, stopAtEos: false },
      { tokenizer },
    );
    expect(Array.from(r.trace.final.sequence)).toEqual([8, 9, 2, 3, 4]);
  });

  it("batched rows stop independently and drop out of later forward passes", async () => {
    const engine = new FakeEngine({ family: "llama", logits: counting });
    const res = await generate(engine, ["t8", "t3 t4"], { genLength: 6 }, { tokenizer });
    expect(Array.from(res[0].trace.final.sequence)).toEqual([8, 9, 2]);
    expect(Array.from(res[1].trace.final.sequence)).toEqual([3, 4, 5, 6, 7, 8, 9, 2]);
    expect(res[0].trace.steps.length).toBe(2);
    expect(engine.calls.slice(0, 2).map((c) => c.batch)).toEqual([2, 2]);
    expect(engine.calls[2].batch).toBe(1);
  });
});
