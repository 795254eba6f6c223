import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { generate } from "../../src/samplers/generate.js";
import { softmaxAt } from "../../src/samplers/sampling.js";
import { FakeEngine, FakeTokenizer, defaultLogits, fakeSpec } from "../support/fake-engine.js";

const tokenizer = new FakeTokenizer();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-llada-"));
const PROMPT = "t5 t6 t7 t8";
const M = 31;

describe("LLaDA sampler on a fake engine", () => {
  it("unmasks floor-plus-remainder tokens per step, block by block, never beyond the current block", async () => {
    // Later positions are MORE confident, so only the block limit keeps them waiting.
    const engine = new FakeEngine({
      logits: (_canvas, pos) => {
        const l = new Float32Array(32);
        l[3 + (pos % 20)] = 0.3 * pos;
        return l;
      },
    });
    // G 10, B 5 → 2 blocks; S 6 → 3 steps per block; 5 masks over 3 steps → 2, 2, 1.
    const [r] = await generate(engine, [PROMPT], { genLength: 10, blockLength: 5, steps: 6 }, { tokenizer });
    const steps = r.trace.steps;
    expect(steps.map((s) => s.transferred.length)).toEqual([2, 2, 1, 2, 2, 1]);
    expect(steps.map((s) => s.block)).toEqual([0, 0, 0, 1, 1, 1]);
    for (const s of steps) {
      const lo = 4 + s.block * 5;
      for (const p of s.transferred) expect(p >= lo && p < lo + 5, `step ${s.step} pos ${p}`).toBe(true);
    }
    const final = r.trace.final.sequence;
    expect(final.length).toBe(14);
    expect(Array.from(final).includes(M)).toBe(false);
    // unmaskedAt agrees with the steps; prompt positions stay −1.
    expect(Array.from(r.trace.unmaskedAt.subarray(0, 4))).toEqual([-1, -1, -1, -1]);
    for (const s of steps) for (const p of s.transferred) expect(r.trace.unmaskedAt[p]).toBe(s.step);
    expect(engine.calls.length).toBe(7); // 6 steps + the final pass
  });

  it("picks the most confident masked positions of the block (confidence = softmax at the argmax)", async () => {
    const engine = new FakeEngine();
    const spec = fakeSpec();
    const logits = defaultLogits(spec);
    const [r] = await generate(engine, [PROMPT], { genLength: 8, blockLength: 8, steps: 4 }, { tokenizer });
    for (const s of r.trace.steps) {
      // Recompute every candidate's confidence by hand from the fake's logits.
      const cands: { p: number; conf: number; tok: number }[] = [];
      for (let p = 0; p < s.canvas.length; p++) {
        if (s.canvas[p] !== M) continue;
        const l = logits(s.canvas, p);
        let tok = 0;
        for (let v = 1; v < l.length; v++) if (l[v] > l[tok]) tok = v;
        cands.push({ p, conf: softmaxAt(l, tok), tok });
      }
      cands.sort((a, b) => b.conf - a.conf || a.p - b.p);
      const want = cands.slice(0, 2).sort((a, b) => a.p - b.p);
      expect(Array.from(s.transferred)).toEqual(want.map((c) => c.p));
      expect(Array.from(s.tokens)).toEqual(want.map((c) => c.tok));
      want.forEach((c, j) => expect(s.confidence[j]).toBeCloseTo(c.conf, 6));
      expect(Array.from(s.producingRow)).toEqual(Array.from(s.transferred)); // no logit shift
    }
  });

  it("is deterministic at τ = 0 whatever the seed; byte-identical trace files for the same seed at τ > 0", async () => {
    const run = async (seed: number, temperature: number, name: string) => {
      const file = path.join(tmp, name);
      const [r] = await generate(
        new FakeEngine(),
        [PROMPT],
        { genLength: 8, blockLength: 4, steps: 8, seed, temperature },
        { tokenizer, traceFiles: [file] },
      );
      return { seq: Array.from(r.trace.final.sequence), bytes: fs.readFileSync(file) };
    };
    const a = await run(1, 0, "a.fstrace");
    const b = await run(2, 0, "b.fstrace");
    expect(b.seq).toEqual(a.seq);
    const c = await run(7, 1.5, "c.fstrace");
    const d = await run(7, 1.5, "d.fstrace");
    expect(d.bytes.equals(c.bytes)).toBe(true);
    const others = await Promise.all([8, 9, 10].map((s) => run(s, 1.5, `e${s}.fstrace`)));
    expect(others.some((o) => o.seq.join() !== c.seq.join())).toBe(true);
  });

  it("random remasking is reproducible from the seed and respects the schedule", async () => {
    const go = () =>
      generate(new FakeEngine(), [PROMPT], { genLength: 6, blockLength: 3, steps: 4, alg: "random", seed: 3 }, { tokenizer });
    const [a] = await go();
    const [b] = await go();
    expect(a.trace.steps.map((s) => Array.from(s.transferred))).toEqual(b.trace.steps.map((s) => Array.from(s.transferred)));
    expect(a.trace.steps.map((s) => s.transferred.length)).toEqual([2, 1, 2, 1]);
  });

  it("classifier-free guidance batches conditional + unconditional canvases and mixes un + (c+1)(cond − un)", async () => {
    // Logits depend on whether the prompt is visible: cond prefers token 10, uncond prefers token 12
    // slightly more strongly. With c = 1: 2·cond − un favours 10 decisively.
    const V = 32;
    const engine = new FakeEngine({
      logits: (canvas, pos) => {
        const l = new Float32Array(V).fill(0);
        const hidden = canvas[0] === M;
        if (hidden) {
          l[12] = 3;
          l[10] = 2.5;
        } else {
          l[12] = 2.9;
          l[10] = 2.8;
        }
        l[20] = pos * 0.01;
        return l;
      },
    });
    const [r] = await generate(engine, [PROMPT], { genLength: 2, steps: 2, cfgScale: 1 }, { tokenizer });
    const call = engine.calls[0];
    expect(call.batch).toBe(2);
    expect(Array.from(call.ids.subarray(6, 10))).toEqual([M, M, M, M]); // unconditional copy: prompt hidden
    expect(Array.from(call.ids.subarray(0, 4))).toEqual([5, 6, 7, 8]);
    expect(Array.from(r.trace.steps[0].tokens)).toEqual([10]);
    // Without guidance the conditional logits alone pick 12.
    const [plain] = await generate(
      new FakeEngine({ logits: (engine as unknown as { logitsFn: never }).logitsFn }),
      [PROMPT],
      { genLength: 2, steps: 2 },
      { tokenizer },
    );
    expect(Array.from(plain.trace.steps[0].tokens)).toEqual([12]);
    // probes come from the conditional half: one row of T keys
    expect(r.trace.steps[0].probes.get("blocks.0.attn.received")!.dims).toEqual([6]);
  });
});
