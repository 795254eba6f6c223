/**
 * Byte size of a synthetic trace of given dimensions, written with the real record encoder (one
 * step at a time, so a 1024-token × 32-layer × 64-step trace never sits in memory at once).
 * Used by the size test and scripts/trace-size.ts.
 */
import { encodePreamble, encodeRecord } from "../../src/trace/codec.js";
import { endRecord, finalRecord, metaRecord, stepRecord, type TraceHeader } from "../../src/trace/writer.js";
import { probeName, type ProbeTensor } from "../../src/util/probes.js";

export interface SynthDims {
  seq: number;
  layers: number;
  steps: number;
  prompt: number;
  transfersPerStep: number;
}

export function syntheticTraceBytes(d: SynthDims): number {
  const header: TraceHeader = {
    formatVersion: 1,
    model: {
      name: "synthetic",
      family: "llada",
      numLayers: d.layers,
      numHeads: 32,
      numKvHeads: 32,
      headDim: 128,
      causal: false,
      logitShift: 0,
      maskTokenId: 126336,
      eosTokenIds: [126081],
    },
    prompt: { text: "x ".repeat(d.prompt), ids: Array.from({ length: d.prompt }, (_, i) => 1000 + i), promptLength: d.prompt, regions: [] },
    promptTokens: Array.from({ length: d.prompt }, () => "Ġx"),
    promptOffsets: Array.from({ length: d.prompt }, (_, i): [number, number] => [2 * i, 2 * i + 1]),
    settings: { sampler: "llada", steps: d.steps },
    probes: { received: true },
    seed: 0,
    stream: 0,
    device: "cpu",
    createdBy: "test",
  };
  let bytes = encodePreamble(1).length + encodeRecord(metaRecord(header)).length;
  const probes = new Map<string, ProbeTensor>();
  for (let l = 0; l < d.layers; l++) {
    probes.set(probeName.received(l), {
      name: probeName.received(l),
      axes: ["key"],
      dims: [d.seq],
      data: new Float32Array(d.seq).fill(1 / d.seq),
    });
  }
  const canvas = new Int32Array(d.seq).fill(126336);
  const n = d.transfersPerStep;
  for (let s = 0; s < d.steps; s++) {
    const step = {
      step: s,
      block: 0,
      canvas,
      transferred: Int32Array.from({ length: n }, (_, j) => d.prompt + s * n + j),
      tokens: new Int32Array(n).fill(5),
      confidence: new Float32Array(n).fill(0.5),
      producingRow: Int32Array.from({ length: n }, (_, j) => d.prompt + s * n + j),
      probes,
    };
    bytes += encodeRecord(
      stepRecord(
        step,
        Array.from({ length: n }, () => "Ġtoken"),
      ),
    ).length;
  }
  bytes += encodeRecord(finalRecord(canvas, probes)).length;
  bytes += encodeRecord(
    endRecord({
      tokens: Array.from({ length: d.seq }, () => "Ġtok"),
      offsets: Array.from({ length: d.seq }, (_, i): [number, number] => [4 * i, 4 * i + 4]),
      unmaskedAt: new Int32Array(d.seq),
      answer: "a".repeat(4 * (d.seq - d.prompt)),
      completion: "a".repeat(4 * (d.seq - d.prompt)),
      stepCount: d.steps,
    }),
  ).length;
  return bytes;
}
