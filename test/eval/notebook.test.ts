/** The notebook helpers: settings from the environment, and the paper's region names. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { MODEL_MISSING_MARK, NO_MODEL_MARK } from "../../src/notebook/models.js";
import { notebookSettings, paperRegions } from "../../src/notebook/notebook.js";
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

describe("notebookSettings on the real tiers", () => {
  const real = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-real-"));
  fs.mkdirSync(path.join(real, "smollm2-135m-dream-world"));
  fs.writeFileSync(path.join(real, "smollm2-135m-dream-world", "config.json"), "{}");

  it("real-base: the families the tier holds, from the real-models folder, with their own sample count and tier word", () => {
    const s = notebookSettings({
      families: ["llada", "dream", "llama"],
      tier: "real-base",
      samples: 2,
      env: { FLOATSCOPE_REAL_MODELS: real, FLOATSCOPE_SAMPLES: "9" },
    });
    expect(s.runs).toBe(true);
    expect(s.tier).toBe("real-base");
    expect(s.names).toEqual({ dream: "smollm2-135m-dream-world" }); // llada: not in this tier; llama (the twin): not merged here
    expect(s.samples).toBe(2); // FLOATSCOPE_SAMPLES is the tiny tier's; FLOATSCOPE_REAL_SAMPLES is this one's
    expect(
      notebookSettings({ families: ["dream"], tier: "real-base", env: { FLOATSCOPE_REAL_MODELS: real, FLOATSCOPE_REAL_SAMPLES: "3" } })
        .samples,
    ).toBe(3);
    expect(s.toMimeBundle()["text/plain"]).toMatch(
      /^Tier real-base .*smollm2-135m-dream-world \(dream\).* Not there: smollm2-135m-causal-world\.$/,
    );
  });

  it("a tier not fetched, or left out by FLOATSCOPE_TIERS, does not run and says so in one line (no tiny-tier missing-model marks)", () => {
    const absent = notebookSettings({ families: ["llama"], tier: "real", env: { FLOATSCOPE_REAL_MODELS: real } });
    expect(absent.runs).toBe(false);
    expect(absent.names).toEqual({});
    const text = absent.toMimeBundle()["text/markdown"];
    expect(text).toContain("Tier real skipped");
    expect(text).toContain("SmolLM2-135M-Instruct.Q4_1.gguf");
    expect(text).toContain("scripts/setup.sh");
    expect(text.split("\n")).toHaveLength(1);
    expect(text).not.toContain(MODEL_MISSING_MARK);
    expect(text).not.toContain(NO_MODEL_MARK);
    const left = notebookSettings({
      families: ["dream"],
      tier: "real-base",
      env: { FLOATSCOPE_REAL_MODELS: real, FLOATSCOPE_TIERS: "tiny" },
    });
    expect(left.runs).toBe(false);
    expect(left.toMimeBundle()["text/plain"]).toContain("left out by FLOATSCOPE_TIERS=tiny");
    expect(
      notebookSettings({
        families: ["dream"],
        tier: "real-base",
        env: { FLOATSCOPE_REAL_MODELS: real, FLOATSCOPE_TIERS: "tiny,real-base" },
      }).runs,
    ).toBe(true);
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
