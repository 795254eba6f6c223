/**
 * How big a trace will be, before it is recorded: the sampler refuses a run whose estimate
 * exceeds `maxTraceBytes` (full attention maps are O(steps × layers × heads × T²)), and
 * docs/trace-format.md quotes these numbers. Tensor bytes are exact; JSON headers are estimated
 * from their typical length per tensor.
 */
import type { ProbeRequest } from "../util/probes.js";
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

/** Bytes of probe tensors for one forward pass over `seq` tokens. */
export function probeBytesPerPass(p: ProbeRequest, d: Omit<TraceDims, "steps">): number {
  const { numLayers: L, numHeads: H, numKvHeads: Hkv, headDim: dh, seq: T } = d;
  let b = 0;
  if (p.received) b += L * T * 4;
  if (p.receivedHeads) b += L * H * T * 4;
  if (p.self) b += L * T * 4;
  if (p.argmax) b += L * 2 * H * T * 4;
  if (p.regionSum) b += L * p.regionSum.regions ** 2 * 4;
  if (p.pattern) b += p.pattern.layers.length * (p.pattern.heads?.length ?? H) * T * T * 4;
  if (p.patternMean) b += p.patternMean.layers.length * T * T * 4;
  if (p.qk) {
    const both = (p.qk.postRope !== false ? 1 : 0) + (p.qk.preRope ? 1 : 0);
    b += p.qk.layers.length * both * (H + Hkv) * T * dh * 4;
  }
  return b;
}

/** Number of probe tensors per forward pass (for the header estimate). */
function probeTensorCount(p: ProbeRequest, L: number): number {
  let n = 0;
  if (p.received) n += L;
  if (p.receivedHeads) n += L;
  if (p.self) n += L;
  if (p.argmax) n += 2 * L;
  if (p.regionSum) n += L;
  if (p.pattern) n += p.pattern.layers.length;
  if (p.patternMean) n += p.patternMean.layers.length;
  if (p.qk) n += p.qk.layers.length * 2 * ((p.qk.postRope !== false ? 1 : 0) + (p.qk.preRope ? 1 : 0));
  return n;
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
