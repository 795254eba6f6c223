/**
 * Rotary position embedding frequencies, computed once in TypeScript and stored in the graph
 * as a [dHead/2] initializer (the graph only multiplies them by positions).
 *
 * Layout is the half-split ("NeoX"/HF-Llama) one: the angle for position p and frequency j is
 * p·invFreq[j]; cos/sin are the [dHead/2] angles concatenated twice, and
 * rotate(x) = x·cos + [−x₂, x₁]·sin with x₁, x₂ the first and second halves of x.
 */
import type { RopeSettings } from "./spec.js";

/**
 * invFreq[j] = θ^(−2j/dHead) for j < dHead/2, then Llama-3 scaling if configured:
 * long wavelengths (> originalMax/lowFreqFactor) are divided by `factor`, short ones
 * (< originalMax/highFreqFactor) kept, and the band between interpolated smoothly — the same
 * rule as HF `_compute_llama3_parameters`.
 * @returns [dHead/2], Float64 (the graph stores it as float32)
 */
export function ropeInvFreq(rope: RopeSettings, dHead: number): Float64Array {
  const half = dHead / 2;
  const inv = new Float64Array(half);
  for (let j = 0; j < half; j++) inv[j] = 1 / Math.pow(rope.theta, (2 * j) / dHead);
  const s = rope.llama3;
  if (!s) return inv;
  const lowFreqWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
  const highFreqWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
  for (let j = 0; j < half; j++) {
    const wavelen = (2 * Math.PI) / inv[j];
    if (wavelen > lowFreqWavelen) {
      inv[j] = inv[j] / s.factor;
    } else if (wavelen >= highFreqWavelen) {
      // medium band: blend between the scaled and unscaled frequency
      const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
      inv[j] = (1 - smooth) * (inv[j] / s.factor) + smooth * inv[j];
    }
  }
  return inv;
}

/**
 * Position ids from a padding mask, as HF does for left padding: the count of real tokens
 * before and including each position, minus one, clipped at 0 (padding positions get 0).
 * @param mask [batch, seq], 1 = real token
 * @returns [batch, seq]
 */
export function positionIdsFromMask(mask: Uint8Array, batch: number, seq: number): Int32Array {
  const out = new Int32Array(batch * seq);
  for (let b = 0; b < batch; b++) {
    let count = 0;
    for (let t = 0; t < seq; t++) {
      count += mask[b * seq + t] ? 1 : 0;
      out[b * seq + t] = Math.max(0, count - 1);
    }
  }
  return out;
}
