/** The notebook helpers: settings from the environment, and the paper's region names. */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { notebookSettings, paperRegions } from "../../src/eval/notebook.js";
import { SettingsError } from "../../src/util/errors.js";

const MODELS = path.resolve(__dirname, "../../models");

describe("notebookSettings", () => {
  it("reads the environment, finds the models present (aliases accepted) and names the tier", () => {
    const s = notebookSettings({
      families: ["qwen", "llada", "dream"],
      samples: 5,
      env: { FLOATSCOPE_MODELS: MODELS, FLOATSCOPE_MODEL_NAMES: '{"dream":"no-such-dream"}' },
    });
    expect(s.names).toEqual({ qwen2: "tiny-qwen", llada: "tiny-llada" });
    expect(s.found.missing.map((m) => m.name)).toEqual(["no-such-dream"]);
    expect(s.samples).toBe(5);
    expect(s.device).toBe("cpu");
    expect(s.tier).toBe("tiny");
    expect(s.dirOf("llada")).toBe(path.join(MODELS, "tiny-llada"));
    const text = s.toMimeBundle()["text/markdown"];
    expect(text).toContain("tiny-qwen (qwen2)");
    expect(text).toContain("Model missing:** dream");
    expect(notebookSettings({ families: ["llada"], env: { FLOATSCOPE_MODELS: MODELS, FLOATSCOPE_SAMPLES: "3" } }).samples).toBe(3);
  });

  it("bad settings are typed errors naming the variable", () => {
    expect(() => notebookSettings({ families: ["llada"], env: { FLOATSCOPE_DEVICE: "tpu" } })).toThrow(SettingsError);
    expect(() => notebookSettings({ families: ["llada"], env: { FLOATSCOPE_MODEL_NAMES: "{llada" } })).toThrow(/FLOATSCOPE_MODEL_NAMES/);
    expect(() => notebookSettings({ families: ["llada"], env: { FLOATSCOPE_SAMPLES: "0" } })).toThrow(/FLOATSCOPE_SAMPLES/);
  });
});

describe("paperRegions", () => {
  it("renames the builder's regions to the paper's (BOS when first, Doc i / Gold Doc, Query, Answer) in token order", () => {
    const r = (name: string, a: number, b: number) => ({ name, tokens: [a, b] as [number, number], chars: [a, b] as [number, number] });
    const out = paperRegions(
      [r("doc 1", 1, 5), r("doc 2", 5, 9), r("gold", 5, 9), r("question", 9, 12), r("answer", 12, 16), r("template", 0, 1)],
      [7, 8, 9],
      7,
    );
    expect(out.map((x) => x.name)).toEqual(["BOS", "Doc1", "Gold Doc", "Query", "Answer"]);
    expect(paperRegions([r("doc 1", 0, 3)], [5], 7).map((x) => x.name)).toEqual(["Doc1"]);
  });
});
