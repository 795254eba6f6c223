/**
 * GGUF blocks → the inputs of onnxruntime's `MatMulNBits` (com.microsoft), so a quantised linear
 * layer runs without ever being expanded to float32.
 *
 * MatMulNBits computes A · Bᵀ with B [N, K] stored per output row n as K/32 blocks of `bits`-bit
 * codes (element 2i in the low nibble of byte i for 4 bits), one float scale per block, and a
 * zero point: w = (q − zp) · scale. That is ggml's block layout up to nibble order:
 *   Q4_0  q·d − 8d            bits 4, scale d, zp 8 (the operator's default: no zp input)
 *   Q4_1  q·d + m             bits 4, scale d, float zp −m/d (w = (q + m/d)·d; float rounding differs
 *                             from ggml's q·d + m by about one ulp)
 *   Q8_0  q·d, q ∈ int8       bits 8, codes q + 128, scale d, zp 128 (default)
 *   Q4_K  (d·sc)·q − dmin·m   super-blocks of 256 = 8 sub-blocks of 32, each with a 6-bit scale sc and
 *                             min m: one MatMulNBits block per sub-block, bits 4, scale d·sc, float
 *                             zp dmin·m / (d·sc) (rounding as Q4_1's)
 * ggml packs a 32-element block as 16 bytes with elements j and j + 16 in the low and high nibble
 * of byte j; MatMulNBits wants elements 2i and 2i + 1 there, so 4-bit codes are repacked. Q4_K keeps
 * two sub-blocks in 32 bytes, the first in the low nibbles and the second in the high ones.
 * Rows are put back in HF order first (`unpermuteHeads`), which moves whole rows of blocks.
 */
import type { TensorInfo } from "../types.js";
import { readStoredBytes, unpermuteRows } from "./tensor.js";

export const NBITS_TYPES = new Set(["Q4_0", "Q4_1", "Q8_0", "Q4_K"]);

/** Bytes MatMulNBits holds for `elements` weights of ggml type `type` (an NBITS_TYPES member): codes, float scales, float zero points. */
export function nbitsBytes(type: string, elements: number): number {
  const zeroPoints = type === "Q4_1" || type === "Q4_K";
  return (elements * (type === "Q8_0" ? 8 : 4)) / 8 + (elements / 32) * (zeroPoints ? 8 : 4);
}

export interface NBitsWeight {
  bits: 4 | 8;
  blockSize: 32;
  /** Output features (rows of the HF weight). */
  n: number;
  /** Input features. */
  k: number;
  /** [N, K/32, 32·bits/8] codes. */
  codes: Uint8Array;
  /** [N · K/32] float32 scales. */
  scales: Float32Array;
  /** [N · K/32] float32 zero points (Q4_1 and Q4_K; the others use the operator's default). */
  zeroPoints?: Float32Array;
}

function half(h: number): number {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 0x1f,
    f = h & 0x3ff;
  return e === 0 ? s * f * 2 ** -24 : e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * 2 ** (e - 15);
}

// Every half float's value, made once: an 8B checkpoint has 250 M block scales to convert.
let HALVES: Float32Array | undefined;
function halves(): Float32Array {
  if (!HALVES) {
    HALVES = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) HALVES[h] = half(h);
  }
  return HALVES;
}

/**
 * The MatMulNBits form of a 2-D GGUF weight, or undefined when its type has none. A Q4_1 block or
 * Q4_K sub-block with scale 0 and a nonzero minimum holds one value, which codes 0, the minimum as
 * scale and a zero point of ±1 give exactly (random blocks have such sub-blocks: 1 in 64 Q4_K
 * sub-blocks have a 6-bit scale of 0).
 */
export function toMatMulNBits(info: TensorInfo): NBitsWeight | undefined {
  const type = info.encoding?.ggmlType;
  if (type === undefined || !NBITS_TYPES.has(type) || info.shape.length !== 2) return undefined;
  const [n, k] = info.shape;
  const nb = (n * k) / 32;
  let raw: Uint8Array = readStoredBytes(info);
  if (info.encoding?.unpermuteHeads !== undefined) raw = unpermuteRows(raw, n, raw.length / n, info.encoding.unpermuteHeads);
  const scales = new Float32Array(nb);
  const H = halves();
  if (type === "Q8_0") {
    const codes = new Uint8Array(nb * 32);
    for (let b = 0; b < nb; b++) {
      const o = b * 34;
      scales[b] = H[raw[o] | (raw[o + 1] << 8)];
      for (let j = 0; j < 32; j++) codes[b * 32 + j] = (raw[o + 2 + j] + 128) & 255; // int8 → uint8 offset by 128
    }
    return { bits: 8, blockSize: 32, n, k, codes, scales };
  }
  if (type === "Q4_K") return q4K(raw, n, k, nb);
  const stride = type === "Q4_0" ? 18 : 20;
  const qsAt = type === "Q4_0" ? 2 : 4;
  const codes = new Uint8Array(nb * 16);
  const zeroPoints = type === "Q4_1" ? new Float32Array(nb) : undefined;
  for (let b = 0; b < nb; b++) {
    const o = b * stride;
    const d = H[raw[o] | (raw[o + 1] << 8)];
    scales[b] = d;
    if (zeroPoints) {
      const m = H[raw[o + 2] | (raw[o + 3] << 8)];
      if (d === 0 && m !== 0) {
        // every weight is m: codes 0 (left so), scale m, zero point −1 ((0 + 1)·m), exactly
        scales[b] = m;
        zeroPoints[b] = -1;
        continue;
      }
      zeroPoints[b] = d === 0 ? 0 : -m / d;
    }
    // ggml byte j: elements j (low nibble) and j + 16 (high); MatMulNBits byte i: elements 2i and 2i + 1.
    const q = o + qsAt,
      c = b * 16;
    for (let i = 0; i < 8; i++) {
      codes[c + i] = (raw[q + 2 * i] & 15) | ((raw[q + 2 * i + 1] & 15) << 4);
      codes[c + 8 + i] = (raw[q + 2 * i] >> 4) | (raw[q + 2 * i + 1] & 0xf0);
    }
  }
  return { bits: 4, blockSize: 32, n, k, codes, scales, zeroPoints };
}

/** The 6-bit scale and min of Q4_K sub-block j (0..7) from the 12 packed bytes at `s` (ggml's get_scale_min_k4). */
function scaleMinK4(b: Uint8Array, s: number, j: number): [number, number] {
  if (j < 4) return [b[s + j] & 63, b[s + j + 4] & 63];
  return [(b[s + j + 4] & 15) | ((b[s + j - 4] >> 6) << 4), (b[s + j + 4] >> 4) | ((b[s + j] >> 6) << 4)];
}

/**
 * Q4_K super-blocks (144 bytes: half d, half dmin, 12 bytes of scales and mins, 128 bytes of
 * nibbles) → one MatMulNBits block per 32-element sub-block. ggml computes (d·sc)·q − (dmin·m)
 * with both products rounded to float32; here scale = fround(d·sc), zp = fround(dmin·m) / scale.
 */
function q4K(raw: Uint8Array, n: number, k: number, nb: number): NBitsWeight | undefined {
  const H = halves();
  const codes = new Uint8Array(nb * 16);
  const scales = new Float32Array(nb);
  const zeroPoints = new Float32Array(nb);
  for (let sb = 0; sb < nb / 8; sb++) {
    const o = sb * 144;
    const d = H[raw[o] | (raw[o + 1] << 8)];
    const dmin = H[raw[o + 2] | (raw[o + 3] << 8)];
    for (let j = 0; j < 8; j++) {
      const [sc, m] = scaleMinK4(raw, o + 4, j);
      const scale = Math.fround(d * sc);
      const min = Math.fround(dmin * m);
      const b = sb * 8 + j;
      if (scale === 0 && min !== 0) {
        // every weight is −min: codes 0, scale min, zero point 1 ((0 − 1)·min), exactly
        scales[b] = min;
        zeroPoints[b] = 1;
        continue;
      }
      scales[b] = scale;
      zeroPoints[b] = scale === 0 ? 0 : min / scale;
      // sub-blocks 2g and 2g + 1 share the 32 bytes at 16 + 32g: low nibbles and high nibbles
      const q = o + 16 + 32 * (j >> 1),
        shift = 4 * (j & 1),
        c = b * 16;
      for (let i = 0; i < 16; i++) codes[c + i] = ((raw[q + 2 * i] >> shift) & 15) | (((raw[q + 2 * i + 1] >> shift) & 15) << 4);
    }
  }
  return { bits: 4, blockSize: 32, n, k, codes, scales, zeroPoints };
}
