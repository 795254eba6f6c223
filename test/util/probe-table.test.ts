/**
 * The probe table (util/probes.ts's PROBES) is the only hand-kept list of probes: every layer's list is
 * derived from it and checked here against what that layer actually does — the graph's outputs, the
 * CLI's words, the request validator, the missing-probe hints, the trace reader's dtypes and the size
 * estimates (against the bytes a real forward pass returns).
 */
import { afterAll, describe, expect, it } from "vitest";
import { getProbe } from "../../src/analysis/probes-access.js";
import { PROBE_WORDS, probeRequestFromFlags } from "../../src/cli/probe-flags.js";
import { probeOutputs, validateProbeRequest } from "../../src/graph/probes.js";
import { createEngine } from "../../src/runtime/engine.js";
import { probeElements } from "../../src/runtime/memory.js";
import { probeBytesPerPass } from "../../src/trace/size.js";
import { ProbeMissingError, SettingsError } from "../../src/util/errors.js";
import { PROBE_AXES, PROBES, REQUEST_KEYS, parseProbeName, probeInfo, type ProbeRequest } from "../../src/util/probes.js";
import { makeTrace } from "../analysis/make-trace.js";
import { makeTinyEngineCheckpoint } from "../support/engine-tiny.js";

const ck = makeTinyEngineCheckpoint({ layers: 3, heads: 4, kvHeads: 2, causal: true, seed: 5 });
afterAll(() => ck.cleanup());
const spec = ck.spec;
const L = spec.numLayers;

/** Every probe at every layer. */
const everything: ProbeRequest = {
  received: true,
  receivedHeads: true,
  self: true,
  argmax: true,
  regionSum: { regions: 2 },
  pattern: { layers: [0, 1, 2] },
  patternMean: { layers: [0, 1, 2] },
  qk: { layers: [0, 1, 2], preRope: true },
};

/** Parse a hint "probes: { … }" into the request it names (JS object literal; placeholders filled in). */
function requestOfHint(hint: string): ProbeRequest {
  const literal = hint.replace(/^probes:\s*/, "").replace("<number of prompt regions>", "2");
  return new Function(`return (${literal});`)() as ProbeRequest;
}

describe("the probe table", () => {
  it("has one row per kind, and the names parse back to it", () => {
    const kinds = PROBES.map((p) => p.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(Object.keys(PROBE_AXES)).toEqual(kinds);
    for (const p of PROBES) expect(parseProbeName(`blocks.7.attn.${p.kind}`)).toEqual({ layer: 7, kind: p.kind });
    expect(parseProbeName("blocks.0.attn.floating")).toBeUndefined();
  });

  it("graph: a request for everything yields exactly one output per (layer, table row), in table order", () => {
    const outs = probeOutputs(spec, everything);
    const expected = Array.from({ length: L }, (_, l) => PROBES.map((p) => `blocks.${l}.attn.${p.kind}`)).flat();
    expect(outs.map((o) => o.name)).toEqual(expected);
    for (const o of outs) {
      expect(o.axes).toEqual(probeInfo(o.kind)!.axes);
      expect(o.dtype).toBe(probeInfo(o.kind)!.dtype);
    }
  });

  it("request validation accepts exactly the table's request keys", () => {
    for (const key of REQUEST_KEYS) expect(() => validateProbeRequest(spec, { [key]: everything[key] })).not.toThrow();
    expect(() => validateProbeRequest(spec, { floating: true } as ProbeRequest)).toThrow(SettingsError);
    expect(new Set(REQUEST_KEYS)).toEqual(new Set(Object.keys(everything)));
  });

  // A word records its rows, and nothing outside its request field (q_rot also brings k_rot: one `qk` request).
  it("CLI: the --probes words are the table's CLI column, and each word records its rows", () => {
    expect(new Set(PROBE_WORDS)).toEqual(new Set([...PROBES.map((p) => p.cli), "none"]));
    for (const word of PROBE_WORDS) {
      const req = probeRequestFromFlags("forward", { probes: word, regions: 2 }, L);
      const kinds = [...new Set(probeOutputs(spec, req).map((o) => o.kind))];
      const rows = PROBES.filter((p) => p.cli === word);
      for (const r of rows) expect(kinds, word).toContain(r.kind);
      const fields = new Set(rows.map((r) => r.request));
      for (const k of kinds) expect(fields.has(probeInfo(k)!.request), `${word} → ${k}`).toBe(true);
      if (word === "none") expect(kinds).toEqual([]);
    }
  });

  it("hints: the request a missing-probe error suggests records that probe at that layer", () => {
    const trace = makeTrace({ sequence: [1, 2, 3], model: { numLayers: L } });
    for (const p of PROBES) {
      let err: unknown;
      try {
        getProbe(trace, "final", p.kind, 2);
      } catch (e) {
        err = e;
      }
      expect(err, p.kind).toBeInstanceOf(ProbeMissingError);
      const hint = (err as ProbeMissingError).hint!;
      expect(hint).toBe(`record it with ${p.hint(2)}`);
      const names = probeOutputs(spec, requestOfHint(p.hint(2))).map((o) => o.name);
      expect(names, p.kind).toContain(`blocks.2.attn.${p.kind}`);
    }
  });

  it("size and memory estimates equal the bytes a real forward pass returns, for every row", async () => {
    const engine = await createEngine({ spec, tensors: ck.tensors }, { probes: everything, threads: 1 });
    try {
      const B = 1,
        T = 6;
      const ids = Int32Array.from({ length: T }, (_, i) => (i * 7 + 3) % spec.vocabSize);
      const regionOneHot = Float32Array.from({ length: T * 2 }, (_, i) => (i >> 1 < 3 ? 1 - (i & 1) : i & 1));
      const out = await engine.forward({ ids, batch: B, seq: T, regionOneHot });
      let bytes = 0;
      for (const o of probeOutputs(spec, everything)) {
        const got = out.probes.get(o.name)!;
        expect(got, o.name).toBeDefined();
        expect(got.data.length, o.name).toBe(probeElements(spec, o, everything, B, T));
        expect(got.data instanceof Int32Array ? "int32" : "float32", o.name).toBe(o.dtype);
        bytes += got.data.byteLength;
      }
      expect(
        probeBytesPerPass(everything, {
          numLayers: L,
          numHeads: spec.numHeads,
          numKvHeads: spec.numKvHeads,
          headDim: spec.headDim,
          seq: T,
        }),
      ).toBe(bytes);
    } finally {
      await engine.dispose();
    }
  });
});
