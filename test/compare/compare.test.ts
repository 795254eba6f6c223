/**
 * `compare()`: one call decodes a prompt on several models and returns a show()-able multi-run
 * scrubber; permissive options, and typed errors that name the expected shape.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compare, layersOf, normalisePassages } from "../../src/compare.js";
import { SettingsError } from "../../src/util/errors.js";
import { MIME_SCRUBBER } from "../../src/protocol/payloads.js";
import { ROOT } from "../kernel/env.js";

const LLADA = join(ROOT, "models/tiny-llada");
const LLAMA = join(ROOT, "models/tiny-llama");
const haveModels = existsSync(join(LLADA, "config.json")) && existsSync(join(LLAMA, "config.json"));

describe("compare(): options", () => {
  it("passages as strings or {title, text}", () => {
    expect(normalisePassages(["a b", { title: "T", text: "c" }, { text: "d" }])).toEqual([
      { title: "", text: "a b" },
      { title: "T", text: "c" },
      { title: "", text: "d" },
    ]);
  });
  it("pattern: true = every layer; a list or {layers} as given", () => {
    expect(layersOf(true, "pattern", 3)).toEqual([0, 1, 2]);
    expect(layersOf(false, "pattern", 3)).toBeUndefined();
    expect(layersOf([2], "pattern", 3)).toEqual([2]);
    expect(layersOf({ layers: [0, 1] }, "patternMean", 3)).toEqual([0, 1]);
  });
  it("wrong shapes fail before any model opens, naming the field and the expected shape", async () => {
    const err = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => e,
      );
    const e1 = await err(compare(["nowhere"], { prompt: "q", passages: 3 as never }));
    expect(e1).toBeInstanceOf(SettingsError);
    expect((e1 as Error).message.split("\n")[0]).toBe("passages: expected string[] or {title, text}[], found number");
    const e2 = await err(compare(["nowhere"], { prompt: "q", passages: ["ok", 5 as never] }));
    expect((e2 as Error).message.split("\n")[0]).toBe("passages[1]: expected a string or {title, text}, found number");
    const e3 = await err(compare(["nowhere"], { prompt: "q", pattern: "all" as never }));
    expect((e3 as Error).message.split("\n")[0]).toBe(
      "pattern: expected true (every layer), a layer list such as [0, 5], or { layers: [...] }, found string",
    );
    const e4 = await err(compare([], { prompt: "q" }));
    expect((e4 as Error).message.split("\n")[0]).toBe("models: expected a model folder or a non-empty string[] of them, found an array");
    const e5 = await err(compare("m", { prompt: "q", tokens: 0 }));
    expect((e5 as Error).message.split("\n")[0]).toBe("tokens: expected a positive integer, found 0");
    const e6 = await err(compare("m", {} as never));
    expect((e6 as Error).message.split("\n")[0]).toBe("prompt: expected a non-empty string, found undefined");
  });
});

describe.runIf(haveModels)("compare(): two tiny models side by side", () => {
  it("decodes the prompt on both and returns one multi-run scrubber", async () => {
    const c = await compare([LLADA, LLAMA], {
      prompt: "What is the favourite colour of Bifo Mimosis ?",
      passages: ["Bifo Mimosis has a home in Viro . The favourite colour of Bifo Mimosis is green ."],
      gold: 0,
      tokens: 4,
      pattern: true,
      patternMean: true,
    });
    expect(c.models).toEqual(["tiny-llada", "tiny-llama"]);
    expect(c.traces.map((t) => t.model.causal)).toEqual([false, true]);
    const L = c.traces[0].model.numLayers;
    expect(c.traces[0].steps[0].probes.has(`blocks.${L - 1}.attn.pattern`)).toBe(true);
    const bundle = c.toMimeBundle() as Record<string, unknown>;
    const payload = bundle[MIME_SCRUBBER] as { runs: { tokens: string[] }[] };
    expect(payload.runs).toHaveLength(2);
    expect(String(bundle["text/plain"])).toMatch(/^Attention scrubber — /);
    expect(String(bundle["image/svg+xml"])).toMatch(/^<svg/);
  }, 120_000);
});
