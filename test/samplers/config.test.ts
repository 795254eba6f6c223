import { describe, expect, it } from "vitest";
import { resolveRunConfig } from "../../src/samplers/config.js";
import { generate } from "../../src/samplers/generate.js";
import { BudgetError, SettingsError } from "../../src/util/errors.js";
import { FakeEngine, FakeTokenizer, fakeSpec } from "../support/fake-engine.js";

const tokenizer = new FakeTokenizer();

/** Run `generate` expecting an error before any forward pass. */
async function failsEarly(settings: Record<string, unknown>, prompts = ["t5 t6"], engine = new FakeEngine()) {
  const err = await generate(engine, prompts, settings, { tokenizer }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(engine.calls.length).toBe(0);
  return err as Error;
}

describe("RunConfig", () => {
  it("defaults reproduce the paper per family (LLaDA low_confidence τ 0; Dream entropy τ 0.2 top_p 0.95 eps 1e-3; ARM greedy)", () => {
    const l = resolveRunConfig({}, fakeSpec({ family: "llada" }));
    expect([l.sampler, l.alg, l.temperature, l.cfgScale, l.genLength, l.steps, l.blockLength]).toEqual([
      "llada",
      "low_confidence",
      0,
      0,
      32,
      32,
      32,
    ]);
    const d = resolveRunConfig({}, fakeSpec({ family: "dream" }));
    expect([d.sampler, d.alg, d.temperature, d.topP, d.eps, d.algTemp]).toEqual(["dream", "entropy", 0.2, 0.95, 1e-3, 0]);
    const a = resolveRunConfig({}, fakeSpec({ family: "qwen2" }));
    expect([a.sampler, a.alg, a.stopAtEos]).toEqual(["arm", "greedy", true]);
    expect(resolveRunConfig({ genLength: 64 }, fakeSpec()).steps).toBe(64);
  });

  it("is written verbatim into the trace", async () => {
    const [r] = await generate(new FakeEngine(), ["t5"], { genLength: 4, steps: 2, seed: 9 }, { tokenizer });
    expect(r.trace.settings).toEqual(resolveRunConfig({ genLength: 4, steps: 2, seed: 9, probes: { received: true } }, fakeSpec()));
    expect(r.trace.seed).toBe(9);
  });
});

describe("bad input fails with a clear error before any compute", () => {
  it("gen_length not divisible by block_length", async () => {
    const e = await failsEarly({ genLength: 10, blockLength: 4 });
    expect(e).toBeInstanceOf(SettingsError);
    expect(e.message).toMatch(/blockLength/);
    expect(e.message).toMatch(/divisor of genLength 10/);
  });

  it("steps not divisible by the number of blocks", async () => {
    const e = await failsEarly({ genLength: 12, blockLength: 4, steps: 7 });
    expect(e).toBeInstanceOf(SettingsError);
    expect(e.message).toMatch(/field: steps/);
    expect(e.message).toMatch(/multiple of 3/);
  });

  it("unknown algorithm lists the allowed ones", async () => {
    const e = await failsEarly({ alg: "lowest_confidence" });
    expect(e).toBeInstanceOf(SettingsError);
    expect(e.message).toMatch(/field: alg/);
    expect(e.message).toMatch(/"low_confidence", "random"/);
    const d = await failsEarly({ alg: "low_confidence" }, ["t5"], new FakeEngine({ family: "dream" }));
    expect(d.message).toMatch(/"entropy", "maskgit_plus", "topk_margin", "origin"/);
  });

  it("prompt longer than the model's maximum", async () => {
    const e = await failsEarly({ genLength: 8 }, ["t5 ".repeat(30)], new FakeEngine({ maxPositionEmbeddings: 32 }));
    expect(e).toBeInstanceOf(SettingsError);
    expect(e.message).toMatch(/prompts\[0\]/);
    expect(e.message).toMatch(/30 \+ 8 = 38/);
    expect(e.message).toMatch(/max_position_embeddings 32/);
  });

  it("unknown settings, masked-diffusion samplers on an ARM, ARM with steps ≠ genLength, empty prompt", async () => {
    expect(await failsEarly({ stpes: 4 })).toBeInstanceOf(SettingsError);
    expect((await failsEarly({ sampler: "llada" }, ["t5"], new FakeEngine({ family: "llama" }))).message).toMatch(/masked-diffusion model/);
    expect((await failsEarly({ genLength: 8, steps: 4 }, ["t5"], new FakeEngine({ family: "llama" }))).message).toMatch(
      /one token per step/,
    );
    expect((await failsEarly({}, ["   "])).message).toMatch(/Prompt is empty/);
    expect((await failsEarly({ temperature: -1 })).message).toMatch(/temperature/);
  });

  it("full attention maps beyond the trace budget → BudgetError from the size estimate", async () => {
    const probes = { received: true, pattern: { layers: [0, 1] } };
    const engine = new FakeEngine({ probes });
    const e = await failsEarly({ genLength: 64, probes, maxTraceBytes: 1e6 }, ["t5 t6"], engine);
    expect(e).toBeInstanceOf(BudgetError);
    expect(e.message).toMatch(/maxTraceBytes/);
    // asking for probes the engine does not compute is refused too
    expect((await failsEarly({ probes: { received: true, self: true } })).message).toMatch(/different probe set/);
    // the same request written in another key order is the same probe set
    const e2 = new FakeEngine({ probes: { received: true, argmax: true } });
    const [ok] = await generate(e2, ["t5"], { genLength: 2, probes: { argmax: true, received: true } }, { tokenizer });
    expect(ok.trace.steps.length).toBe(2);
  });
});
