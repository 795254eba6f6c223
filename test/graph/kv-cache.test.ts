/**
 * The key/value-cache graph option (src/graph/build/kv-cache.ts): which graphs may have it (causal,
 * no probes, no interventions: typed SettingsErrors naming `kvCache` otherwise, from the builder and
 * from createEngine before any weight is read), the inputs and outputs it adds, and which engines
 * get it by default.
 */
import * as fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { buildModelGraph } from "../../src/graph/model.js";
import { createEngine } from "../../src/runtime/engine.js";
import { SettingsError } from "../../src/util/errors.js";
import { makeTinyEngineCheckpoint } from "../support/engine-tiny.js";

const causal = makeTinyEngineCheckpoint({ family: "llama", layers: 2, causal: true, seed: 3 });
const mdm = makeTinyEngineCheckpoint({ family: "llada", layers: 2, causal: false, seed: 4 });
afterAll(() => {
  for (const c of [causal, mdm]) fs.rmSync(c.dir, { recursive: true, force: true });
});

function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("kvCache build option", () => {
  it("adds past inputs and present outputs per layer, and a mask over past + new keys", () => {
    const g = buildModelGraph(causal.spec, causal.tensors, { kvCache: true });
    const inputs = g.graph.input.map((i) => i.name);
    expect(inputs.slice(0, 7)).toEqual([
      "input_ids",
      "position_ids",
      "attention_mask",
      "past.0.key",
      "past.0.value",
      "past.1.key",
      "past.1.value",
    ]);
    const outputs = g.graph.output.map((o) => o.name);
    expect(outputs).toEqual(["present.0.key", "present.0.value", "present.1.key", "present.1.value", "logits"]);
    expect(g.probes).toEqual([]);
    const dims = (name: string) => g.graph.input.find((i) => i.name === name)!.shape;
    expect(dims("past.0.key")).toEqual(["batch", "past", causal.spec.numKvHeads, causal.spec.headDim]);
    expect(dims("attention_mask")).toEqual(["batch", "keys"]);
    expect(dims("input_ids")).toEqual(["batch", "seq"]);
  });

  it("is refused, naming kvCache, with probes, with interventions, and on a bidirectional (MDM) model", () => {
    const cases: [string, () => unknown, RegExp][] = [
      ["probes", () => buildModelGraph(causal.spec, causal.tensors, { kvCache: true, probes: { received: true } }), /probes/],
      ["interventions", () => buildModelGraph(causal.spec, causal.tensors, { kvCache: true, interventions: true }), /interventions/],
      ["MDM", () => buildModelGraph(mdm.spec, mdm.tensors, { kvCache: true }), /bidirectional llada/],
    ];
    for (const [what, f, found] of cases) {
      const e = caught(f);
      expect(e, what).toBeInstanceOf(SettingsError);
      const s = e as SettingsError;
      expect(s.field, what).toBe("kvCache");
      expect(s.found, what).toMatch(found);
    }
    // a probe request that records nothing is no probe
    expect(() => buildModelGraph(causal.spec, causal.tensors, { kvCache: true, probes: {} })).not.toThrow();
  });

  it("createEngine: on by default where it applies, off elsewhere, an explicit true that cannot apply refused", async () => {
    const open = (source: typeof causal, o: Parameters<typeof createEngine>[1]) =>
      createEngine({ spec: source.spec, tensors: source.tensors }, { threads: 1, weightCache: false, ...o });
    const plain = await open(causal, { probes: {} });
    const probed = await open(causal, { probes: { received: true } });
    const intervened = await open(causal, { probes: {}, interventions: true });
    const off = await open(causal, { probes: {}, kvCache: false });
    const bidirectional = await open(mdm, { probes: {} });
    try {
      expect([plain, probed, intervened, off, bidirectional].map((e) => e.kvCache)).toEqual([true, false, false, false, false]);
      expect(typeof plain.decoder).toBe("function");
      expect([probed, intervened, off, bidirectional].map((e) => e.decoder)).toEqual([undefined, undefined, undefined, undefined]);
    } finally {
      for (const e of [plain, probed, intervened, off, bidirectional]) await e.dispose();
    }
    const refused: [typeof causal, Parameters<typeof createEngine>[1]][] = [
      [causal, { probes: { pattern: { layers: [0] } } }],
      [causal, { probes: {}, interventions: true }],
      [mdm, { probes: {} }],
    ];
    for (const [src, o] of refused) {
      const e = await open(src, { ...o, kvCache: true }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(SettingsError);
      expect((e as SettingsError).field).toBe("kvCache");
    }
  });
});
