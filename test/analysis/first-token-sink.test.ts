/**
 * The first-token sink analysis on hand-built per-step `received` vectors: every expected number below is
 * worked out by hand from the planted vectors (shares of steps, means of c_0), not read from the code.
 */
import { describe, expect, it } from "vitest";
import { argmaxKey, firstTokenSink, sinkOverSteps } from "../../src/analysis/first-token-sink.js";
import { ProbeMissingError } from "../../src/util/errors.js";
import { makeTrace, probe, probeMap, step } from "./make-trace.js";

describe("sinkOverSteps (one layer)", () => {
  it("a fixed first-token sink: top-1 at 0 at every step, stability 1, no switch", () => {
    // An ARM's growing rows: c_0 = 0.8, 0.7, 0.6 → mean 0.7.
    const s = sinkOverSteps([
      [0.8, 0.2],
      [0.7, 0.2, 0.1],
      [0.6, 0.2, 0.1, 0.1],
    ]);
    expect(s.onFirst).toBeCloseTo(0.7, 12);
    expect(s).toMatchObject({ top1AtFirst: 1, top1Stability: 1, modalTop1: 0, distinctTop1: 1, switches: 0, steps: 3 });
  });
  it("a floating anchor: top-1 at 3, 3, 1, 2 → modal key 3 in 2 of 4 steps, 2 switches, never at 0", () => {
    const s = sinkOverSteps([
      [0.1, 0.2, 0.1, 0.6],
      [0.2, 0.1, 0.1, 0.6],
      [0.1, 0.5, 0.2, 0.2],
      [0.3, 0.1, 0.4, 0.2],
    ]);
    expect(s.onFirst).toBeCloseTo((0.1 + 0.2 + 0.1 + 0.3) / 4, 12);
    expect(s).toMatchObject({ top1AtFirst: 0, top1Stability: 0.5, modalTop1: 3, distinctTop1: 3, switches: 2, steps: 4 });
  });
  it("ties: the top-1 key and the modal key go to the lower position", () => {
    expect(argmaxKey([0.4, 0.4, 0.2])).toBe(0);
    expect(argmaxKey([NaN, 0.3, 0.3])).toBe(1);
    // top-1 at 2, 0 → each once: the modal key is 0, stability 1/2, top-1 at 0 in 1/2
    const s = sinkOverSteps([
      [0.2, 0.3, 0.5],
      [0.5, 0.3, 0.2],
    ]);
    expect(s).toMatchObject({ modalTop1: 0, top1Stability: 0.5, top1AtFirst: 0.5, switches: 1 });
  });
});

/** An ARM trace: two layers, three decoding steps over a growing canvas. */
function arm(id: string, l1First: number[]) {
  const steps = [0, 1, 2].map((s) => {
    const T = 3 + s;
    const l0 = Array.from({ length: T }, (_, j) => (j === 0 ? 0.6 : 0.4 / (T - 1)));
    const l1 = Array.from({ length: T }, (_, j) => (j === 0 ? l1First[s] : (1 - l1First[s]) / (T - 1)));
    return step(
      s,
      Array.from({ length: T }, (_, j) => 10 + j),
      probeMap(probe(0, "received", [T], l0), probe(1, "received", [T], l1)),
    );
  });
  return makeTrace({
    model: { name: "tiny-llama", family: "llama", causal: true },
    sequence: [10, 11, 12, 13, 14, 15],
    settings: { sampleId: id },
    steps,
  });
}

describe("firstTokenSink over traces", () => {
  // Sample a: layer 1 puts 0.5, 0.2, 0.4 on key 0 (T = 3, 4, 5: the others get 0.25, 0.267, 0.15) → top-1 at 0 at steps 0 and 2.
  // Sample b: layer 1 puts 0.9 on key 0 at every step.
  const r = firstTokenSink([arm("a", [0.5, 0.2, 0.4]), arm("b", [0.9, 0.9, 0.9])]);
  const rows = r.table.objects();

  it("one row per (model, sample, layer), with the paradigm from the trace", () => {
    expect(rows.map((d) => [d.sample, d.layer])).toEqual([
      ["a", 0],
      ["a", 1],
      ["b", 0],
      ["b", 1],
    ]);
    expect(new Set(rows.map((d) => d.paradigm))).toEqual(new Set(["ARM"]));
    const a1 = rows[1];
    expect(a1.onFirst as number).toBeCloseTo((0.5 + 0.2 + 0.4) / 3, 6);
    expect(a1.top1AtFirst as number).toBeCloseTo(2 / 3, 12);
    // top-1: 0, then key 1 (first of the tied 0.267s), then 0 → modal 0 in 2 of 3, two switches
    expect(a1).toMatchObject({ modalTop1: 0, distinctTop1: 2, switches: 2, steps: 3 });
  });

  it("per layer: means over samples; per sample: means over layers", () => {
    const layers = r.layers.objects();
    expect(layers.map((d) => d.layer)).toEqual([0, 1]);
    expect(layers[0].onFirst as number).toBeCloseTo(0.6, 6);
    expect(layers[1].onFirst as number).toBeCloseTo(((0.5 + 0.2 + 0.4) / 3 + 0.9) / 2, 6);
    expect(layers[1].top1AtFirst as number).toBeCloseTo((2 / 3 + 1) / 2, 12);
    expect(layers.map((d) => d.n)).toEqual([2, 2]);
    // both samples' layer 1 has key 0 as its most frequent top-1 (a: 2 of 3 steps, b: 3 of 3)
    expect(layers.map((d) => d.modalTop1)).toEqual([0, 0]);
    const samples = r.samples.objects();
    // sample a: (step, layer) cells with top-1 at 0 = 3 (layer 0) + 2 (layer 1) of 6
    expect(samples[0].top1AtFirst as number).toBeCloseTo(5 / 6, 12);
    expect(samples[1].top1AtFirst as number).toBe(1);
    expect(samples.map((d) => d.layers)).toEqual([2, 2]);
  });

  it("an MDM beside it: a floating top-1 is not a first-token sink", () => {
    const mdm = makeTrace({
      sequence: [1, 10, 11, 12],
      settings: { sampleId: "q" },
      steps: [
        step(
          0,
          [1, 99, 99, 99],
          probeMap(probe(0, "received", [4], [0.1, 0.6, 0.2, 0.1]), probe(1, "received", [4], [0.1, 0.2, 0.6, 0.1])),
        ),
        step(
          1,
          [1, 10, 99, 99],
          probeMap(probe(0, "received", [4], [0.1, 0.2, 0.2, 0.5]), probe(1, "received", [4], [0.1, 0.2, 0.6, 0.1])),
        ),
      ],
    });
    const s = firstTokenSink(mdm).table.objects();
    expect(s.map((d) => [d.paradigm, d.top1AtFirst, d.top1Stability, d.modalTop1])).toEqual([
      ["MDM", 0, 0.5, 1],
      ["MDM", 0, 1, 2],
    ]);
    // per layer, the modal key of the one sample: a fixed sink away from 0 in layer 1 (key 2), a tie in layer 0 (1 and 3 → 1)
    expect(
      firstTokenSink(mdm)
        .layers.objects()
        .map((d) => d.modalTop1),
    ).toEqual([1, 2]);
  });

  it("a trace without per-step records is refused with the probe it needs", () => {
    const bare = makeTrace({ sequence: [1, 2], finalProbes: probeMap(probe(0, "received", [2], [0.5, 0.5])) });
    expect(() => firstTokenSink(bare)).toThrow(ProbeMissingError);
    expect(() => firstTokenSink(bare)).toThrow(/no per-step records/);
  });
});
