/**
 * The graph side of the probe table (graph/probes.ts GRAPH_PROBES): each row's declaration of how it
 * reduces across query chunks agrees with its cost class in util/probes.ts, and the attention Loop's
 * carried and stacked values are those the rows declare (derived, not listed by the builder).
 */
import { describe, expect, it } from "vitest";
import { buildModelGraph } from "../../src/graph/model.js";
import { GRAPH_PROBES, layerPartials, needsProbabilities, recordsMap, recordsStates } from "../../src/graph/probes.js";
import { REFERENCE_PROBES } from "../../src/reference/forward.js";
import { PROBES, type ProbeRequest } from "../../src/util/probes.js";
import { makeTinyEngineCheckpoint } from "../support/engine-tiny.js";

describe("GRAPH_PROBES", () => {
  it("a row per kind: q/k states are state rows, maps reduce as maps, the rest as sums or per-query rows", () => {
    for (const p of PROBES) {
      const row = GRAPH_PROBES[p.kind];
      if (p.cost === "states") expect("state" in row, p.kind).toBe(true);
      else {
        expect("chunk" in row, p.kind).toBe(true);
        if (!("chunk" in row)) continue;
        const isMap = p.cost === "map" || p.cost === "heads-map";
        expect(row.across.reduce === "map", p.kind).toBe(isMap);
        expect(p.kind in REFERENCE_PROBES, `${p.kind} has a reference`).toBe(true);
      }
    }
  });

  it("rows sharing a chunk function share one partial; layer predicates follow the rows", () => {
    const req: ProbeRequest = { received: true, receivedHeads: true, argmax: true, pattern: { layers: [1] }, qk: { layers: [0] } };
    // received + received_heads → one weighted sum; argmax → key and prob rows; pattern only at layer 1
    expect(layerPartials(req, 0).map((p) => p.across.reduce)).toEqual(["sum", "rows", "rows"]);
    expect(layerPartials(req, 1).map((p) => p.across.reduce)).toEqual(["sum", "rows", "rows", "map"]);
    expect([recordsMap(req, 0), recordsMap(req, 1)]).toEqual([false, true]);
    expect([recordsStates(req, 0), recordsStates(req, 1)]).toEqual([true, false]);
    expect(needsProbabilities({ qk: { layers: [0] } }, 0)).toBe(false);
  });

  it("the attention Loop carries the sums and stacks the per-query rows the table declares", () => {
    const ck = makeTinyEngineCheckpoint({ layers: 1, heads: 4, kvHeads: 2, causal: true });
    try {
      const loopOf = (probes: ProbeRequest) => {
        const built = buildModelGraph(ck.spec, ck.tensors, { probes, queryChunks: "auto", chunkBudgetBytes: 20000 });
        const loops = built.graph.node.filter((n) => n.opType === "Loop");
        expect(loops.length).toBe(1);
        const body = loops[0].attribute.find((a) => a.name === "body")!.g!;
        // Loop inputs: trip count, condition, then one initial value per carried sum
        return { carried: loops[0].input.length - 2, scans: body.output.length - 1 - (loops[0].input.length - 2) };
      };
      expect(loopOf({})).toEqual({ carried: 0, scans: 1 }); // the context rows
      expect(loopOf({ received: true, receivedHeads: true })).toEqual({ carried: 1, scans: 1 });
      expect(loopOf({ received: true, regionSum: { regions: 2 }, self: true, argmax: true })).toEqual({ carried: 2, scans: 4 });
    } finally {
      ck.cleanup();
    }
  });
});
