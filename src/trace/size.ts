/**
 * How big a trace will be, before it is recorded: the sampler refuses a run whose estimate
 * exceeds `maxTraceBytes` (full attention maps are O(steps × layers × heads × T²)), and
 * docs/trace-format.md quotes these numbers. Tensor bytes are exact; JSON headers are estimated
 * from their typical length per tensor.
 */
import { PROBES, probeElementsOf, records, type ProbeRequest } from "../util/probes.js";
import { PREAMBLE_BYTES, RECORD_OVERHEAD } from "./codec.js";

export interface TraceDims {
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  /** Canvas length T (prompt + generated). */
  seq: number;
  /** Denoising (or decoding) steps. */
  steps: number;
  /** Tokens unmasked per step (affects only the small per-step arrays). Default 1. */
  transfersPerStep?: number;
}

/** The probe tensors of one pass: [elements, count] summed over the probe table's rows and layers. */
function probeTotals(p: ProbeRequest, d: Omit<TraceDims, "steps">): { elements: number; count: number } {
  const sizes = { batch: 1, seq: d.seq, numHeads: d.numHeads, numKvHeads: d.numKvHeads, headDim: d.headDim };
  let elements = 0;
  let count = 0;
  for (let l = 0; l < d.numLayers; l++) {
    for (const info of PROBES) {
      if (!records(p, info, l)) continue;
      elements += probeElementsOf(info, p, sizes);
      count += 1;
    }
  }
  return { elements, count };
}

/** Bytes of probe tensors for one forward pass over `seq` tokens (every probe is 4 bytes an element). */
export function probeBytesPerPass(p: ProbeRequest, d: Omit<TraceDims, "steps">): number {
  return probeTotals(p, d).elements * 4;
}

/** Number of probe tensors per forward pass (for the header estimate). */
function probeTensorCount(p: ProbeRequest, L: number): number {
  return probeTotals(p, { numLayers: L, numHeads: 1, numKvHeads: 1, headDim: 1, seq: 1 }).count;
}

/** A probe's header entry plus its axes in the record JSON: about this many bytes. */
const HEADER_BYTES_PER_TENSOR = 150;
const HEADER_BYTES_PER_RECORD = 300;

/**
 * Estimated file size of a complete trace: steps × (canvas + transfers + probes) + one final pass
 * + meta/end records (a few KB of prompt and token text, not counted precisely).
 */
export function estimateTraceBytes(p: ProbeRequest, d: TraceDims): number {
  const n = d.transfersPerStep ?? 1;
  const perPassHeaders = probeTensorCount(p, d.numLayers) * HEADER_BYTES_PER_TENSOR + HEADER_BYTES_PER_RECORD + RECORD_OVERHEAD;
  const step = d.seq * 4 + n * 16 + 5 * HEADER_BYTES_PER_TENSOR + probeBytesPerPass(p, d) + perPassHeaders;
  const final = d.seq * 4 + probeBytesPerPass(p, d) + perPassHeaders;
  const end = d.seq * 4 + d.seq * 24 + 1024;
  return PREAMBLE_BYTES + 4096 + d.steps * step + final + end;
}
