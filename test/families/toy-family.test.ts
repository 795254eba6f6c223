/**
 * A new family needs its adapter file and one registry line, nothing else: this test registers a toy
 * family (a Dream body run with LLaDA's sampler and prompt, so every derived value can only come from
 * its own line) in a copy of the registry, and checks that every family list and map in src/ picks it
 * up — the derived tables, config detection and spec resolution, the sampler default, the model's
 * preset, the trace reader, the GGUF reader's architectures, the notebooks' model lookup and the
 * findings' paradigms. docs/contributing.md "Adding a model family" points here.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { FamilyAdapter } from "../../src/families/types.js";

vi.mock("../../src/families/registry.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/families/registry.js")>();
  const toy: FamilyAdapter<"toy"> = {
    ...original.FAMILY_REGISTRY.dream,
    family: "toy",
    aliases: ["toy-lm"],
    architectures: ["ToyDiffusionLM"],
    modelTypes: ["toy"],
    paper: { sampler: "llada", promptFormat: "paper-llada" },
    tinyModel: undefined,
    gguf: { architecture: "toyarch", layout: "hf", permuted: false },
  };
  // The one line a contributor adds to FAMILY_REGISTRY.
  return { FAMILY_REGISTRY: { ...original.FAMILY_REGISTRY, toy } };
});

const families = await import("../../src/families/index.js");
const { detectFamily, resolveModelSpec } = await import("../../src/graph/adapters/index.js");
const { openCheckpoint } = await import("../../src/checkpoint/checkpoint.js");
const { resolveRunConfig } = await import("../../src/samplers/config.js");
const { paperPreset } = await import("../../src/model/presets.js");
const { GGUF_ARCHITECTURES } = await import("../../src/checkpoint/gguf/architecture.js");
const { findModels } = await import("../../src/notebook/models.js");
const { compareGroups } = await import("../../src/display/findings-text.js");
const { generate } = await import("../../src/samplers/generate.js");
const { readTrace } = await import("../../src/trace/reader.js");
const { writeTinyCheckpoint } = await import("../support/family-checkpoints.js");
const { FakeEngine, FakeTokenizer } = await import("../support/fake-engine.js");

type AnyFamily = import("../../src/families/index.js").Family;
/** "toy" is a family only at run time (the registry is mocked), so the compiler needs telling. */
const TOY = "toy" as AnyFamily;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-toy-family-"));

describe("a toy family added by its registry line", () => {
  it("is in every derived table", () => {
    expect(families.FAMILIES).toEqual(["llama", "qwen2", "llada", "dream", "toy"]);
    expect(families.ADAPTERS[TOY].architectures).toEqual(["ToyDiffusionLM"]);
    expect(families.PARADIGM_OF_FAMILY[TOY]).toBe("MDM");
    expect(families.DEFAULT_SAMPLER[TOY]).toBe("llada");
    expect(families.PAPER_FORMAT_OF_FAMILY[TOY]).toBe("paper-llada");
    expect(families.TINY_MODEL_NAMES[TOY]).toBe("tiny-toy");
    expect(families.FAMILY_ALIASES["toy-lm"]).toBe("toy");
    expect(families.canonicalFamily("toy-lm")).toBe("toy");
    expect(families.isFamily("toy")).toBe(true);
    expect(families.paradigmOf("toy-lm")).toBe("MDM");
  });

  it("is detected from config.json and resolves to a spec with its flags", () => {
    expect(detectFamily({ architectures: ["ToyDiffusionLM"] }).adapter.family).toBe("toy");
    expect(detectFamily({ model_type: "TOY" }).adapter.family).toBe("toy");
    const dir = path.join(tmp, "toy-ckpt");
    writeTinyCheckpoint(dir, "dream", { config: { architectures: ["ToyDiffusionLM"], model_type: "toy" } });
    const spec = resolveModelSpec(openCheckpoint(dir));
    expect(spec.family).toBe("toy");
    expect([spec.causal, spec.logitShift, spec.qkvBias]).toEqual([false, 1, true]);
    // The sampler default and the model's paper preset follow the registry line.
    expect(resolveRunConfig({}, spec).sampler).toBe("llada");
    expect(paperPreset(spec)).toEqual({ promptFormat: "paper-llada", sampler: { sampler: "llada" }, extraction: "none" });
  });

  it("is accepted by the GGUF reader, the notebooks' model lookup and the findings' paradigms", () => {
    expect(GGUF_ARCHITECTURES).toContain("toyarch");
    const models = path.join(tmp, "models");
    fs.mkdirSync(path.join(models, "tiny-toy"), { recursive: true });
    fs.writeFileSync(path.join(models, "tiny-toy", "config.json"), "{}");
    expect(findModels(models, ["toy-lm"]).names).toEqual({ toy: "tiny-toy" });
    const row = (model: string, family: string, value: number) => ({
      claim: "absorption-arm-vs-mdm" as const,
      model,
      family,
      tier: "tiny",
      quantity: "q",
      source: "nb",
      value,
      ci95: null,
      n: 1,
    });
    const rows = [row("a", "llama", 50), row("t", "toy", 20)];
    expect(compareGroups(rows, (f) => families.paradigmOf(f.family), ["ARM", "MDM"])).toBe("ARM 50 vs MDM 20: ARM higher, as in the paper");
  });

  it("is written into and read back from a trace", async () => {
    const file = path.join(tmp, "toy.fstrace");
    const probes = { received: true };
    await generate(
      new FakeEngine({ family: TOY, causal: false, probes }),
      [{ text: "t5 t6 t7", regions: [] }],
      { sampler: "llada", genLength: 4, steps: 2, seed: 1, probes },
      { tokenizer: new FakeTokenizer(), traceFiles: [file], modelName: "toy" },
    );
    expect(readTrace(file).model.family).toBe("toy");
  });
});
