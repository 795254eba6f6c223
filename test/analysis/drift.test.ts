import { describe, expect, it } from "vitest";
import { meanVectors, stackRows, temporalDrift, trackAnchors } from "../../src/analysis/drift.js";
import { ProbeMissingError } from "../../src/util/errors.js";
import { makeTrace, probe, probeMap, step } from "./make-trace.js";

const T = 30;
/** Column means with equal mass on `planted` (total 0.9) and the rest spread evenly (total 0.1). */
function col(planted: number[]): number[] {
  return Array.from({ length: T }, (_, j) => (planted.includes(j) ? 0.9 / planted.length : 0.1 / (T - planted.length)));
}
// With k outliers of equal height among n keys whose other values are equal, the outliers' z-score is
// √((n − k)/k): √29 = 5.39 for one, √14 = 3.74 for two — both above 3; a flat row has σ = 0 and no anchor.

const MASK = 99;
function canvas(maskedFrom: number): number[] {
  return Array.from({ length: T }, (_, j) => (j >= maskedFrom ? MASK : 10 + j));
}

function trace() {
  // step values 10, 11, 12 (not row indices); layer 0 anchors: {2}, {2, 7}, {3}; layer 1 is flat.
  const flat = new Array(T).fill(1 / T);
  const plants = [[2], [2, 7], [3]];
  return makeTrace({
    sequence: canvas(T),
    steps: plants.map((p, s) => step(10 + s, canvas(20 + s), probeMap(probe(0, "received", [T], col(p)), probe(1, "received", [T], flat)))),
  });
}

describe("drift core", () => {
  it("stacks rows into [step, key], padding short rows with NaN", () => {
    const { heat, dims } = stackRows([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(dims).toEqual([2, 3]);
    expect(Array.from(heat)).toEqual([1, 2, 3, 4, 5, NaN]);
  });
  it("averages layers element-wise", () => {
    expect(
      Array.from(
        meanVectors([
          [0.2, 0.8],
          [0.6, 0.4],
        ]),
      ),
    ).toEqual([0.4, 0.6000000000000001]);
  });
  it("tracks: position identity by default; maxJump 1 links 2 → 3 as one drifting anchor", () => {
    const sets = [[2], [2, 7], [3]];
    const fixed = trackAnchors(sets);
    expect(fixed.map((t) => [t.from, t.birth, t.death, t.lifetime])).toEqual([
      [2, 0, 2, 2],
      [7, 1, 2, 1],
      [3, 2, 3, 1],
    ]);
    const moving = trackAnchors(sets, { maxJump: 1 });
    expect(moving.map((t) => [t.from, t.to, t.birth, t.death, t.lifetime])).toEqual([
      [2, 3, 0, 3, 3],
      [7, 7, 1, 2, 1],
    ]);
  });
  it("tracks: maxGap lets an anchor vanish for a step and come back", () => {
    const sets = [[5], [], [5]];
    expect(trackAnchors(sets).length).toBe(2);
    const t = trackAnchors(sets, { maxGap: 1 });
    expect(t.map((x) => [x.birth, x.death, x.lifetime])).toEqual([[0, 3, 2]]);
  });
  it("tracks: a contested anchor goes to the closest track", () => {
    // rows: {4, 8} then {7}: 7 is 1 from 8 and 3 from 4 → continues the track born at 8.
    const t = trackAnchors([[4, 8], [7]], { maxJump: 3 });
    expect(t.map((x) => [x.from, x.to, x.lifetime])).toEqual([
      [4, 4, 1],
      [8, 7, 2],
    ]);
  });
});

describe("temporalDrift over a trace", () => {
  it("layer 0: heat rows are the received vectors, anchors per step, rows labelled by step value", () => {
    const { heat, anchors, tracks, spec } = temporalDrift(trace(), { layers: [0] });
    expect(heat.numRows()).toBe(3 * T);
    const marked = heat.filter((d: { anchor: boolean }) => d.anchor).objects() as { step: number; position: number }[];
    expect(marked.map((r) => [r.step, r.position])).toEqual([
      [10, 2],
      [11, 2],
      [11, 7],
      [12, 3],
    ]);
    expect(anchors.numRows()).toBe(4);
    expect((tracks.objects() as { birth: number; death: number }[]).map((r) => [r.birth, r.death])).toEqual([
      [10, 12],
      [11, 12],
      [12, 13],
    ]);
    expect(spec.steps).toEqual([10, 11, 12]);
    const h = spec.heat.values;
    expect(h[1 * T + 7]).toBeCloseTo(0.45, 6); // full precision: no encoding in the analysis
  });
  it("layers averaged: (planted + flat)/2, and the averaged row still has the planted anchor", () => {
    const { heat } = temporalDrift(trace(), { layers: [0, 1] });
    const v = heat.filter((d: { step: number; position: number }) => d.step === 10 && d.position === 2).get("value", 0);
    expect(v).toBeCloseTo((0.9 + 1 / T) / 2, 7); // probes are float32
    const marked = heat.filter((d: { anchor: boolean }) => d.anchor).numRows();
    expect(marked).toBe(4);
  });
  it("masked flags follow each step's canvas; excluding masks removes masked anchors", () => {
    const tr = trace();
    tr.steps[0].canvas[2] = MASK;
    const { anchors } = temporalDrift(tr, { layers: [0] });
    expect(anchors.get("masked", 0)).toBe(true);
    expect(anchors.get("token", 0)).toBe("<mask>");
    const ex = temporalDrift(tr, { layers: [0], exclude: ["mask"] }).anchors;
    // step 10 without key 2: the rest is flat (σ = 0 over eligible keys) → no anchor at step 10
    expect((ex.objects() as { step: number }[]).filter((r) => r.step === 10).length).toBe(0);
  });
  it("upstream = μ + 3σ without fallback: the flat layer 1 has no anchors", () => {
    const { anchors } = temporalDrift(trace(), { layers: [1], rule: "upstream" });
    expect(anchors.numRows()).toBe(0);
  });
  it("no steps or no received probe → ProbeMissingError", () => {
    expect(() => temporalDrift(makeTrace({ sequence: [1, 2] }))).toThrow(ProbeMissingError);
    expect(() => temporalDrift(trace(), { layers: [0], exclude: ["diagonal"] })).toThrow(/blocks\.0\.attn\.self[\s\S]*step 0/);
  });
});
