/**
 * Dequantisation of ggml tensor blocks to float32, one function per block format, following
 * ggml's reference decoders. Block scales are IEEE half floats; every product and sum is
 * rounded to float32 in the order ggml (and the `gguf` Python package) evaluate it, so the
 * results are bit-identical to theirs (`Math.fround` after each operation: a double holds the
 * exact product of two floats, and rounding a double sum of two floats to float is correctly
 * rounded, so this is float32 arithmetic).
 *
 * Layouts (bytes per block): Q4_0 = d, 16 nibble bytes (low nibbles are elements 0..15, high
 * nibbles 16..31), value (q − 8)·d · Q4_1 = d, m, 16 nibble bytes, q·d + m · Q5_0 = d, 4 bytes of
 * fifth bits, 16 nibble bytes, (q − 16)·d · Q5_1 = d, m, fifth bits, nibbles, q·d + m · Q8_0 =
 * d, 32 int8, q·d · Q4_K / Q5_K = super-blocks of 256 with 8 sub-blocks of 32, each with a 6-bit
 * scale and min packed into 12 bytes, value (d·sc)·q − (dmin·m) · Q6_K = 16 sub-blocks of 16 with
 * int8 scales, 6-bit q (4 low bits in ql, 2 high in qh), value (d·sc)·(q − 32).
 */
import type { GgmlTypeName } from "./format.js";

const fr = Math.fround;

/** All 65536 half floats as float32 (the table makes decoding a lookup). */
const HALF = (() => {
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >> 10) & 0x1f;
    const f = h & 0x3ff;
    t[h] = e === 0 ? s * f * 2 ** -24 : e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * 2 ** (e - 15);
  }
  return t;
})();

const half = (b: Uint8Array, o: number): number => HALF[b[o] | (b[o + 1] << 8)];

/** The block formats: each one's decoder and how many elements a block holds. */
const BLOCK_DECODERS: Partial<Record<GgmlTypeName, { decode: (b: Uint8Array, y: Float32Array, nb: number) => void; elements: number }>> = {
  Q4_0: { decode: legacyBlocks(false, false), elements: 32 },
  Q4_1: { decode: legacyBlocks(true, false), elements: 32 },
  Q5_0: { decode: legacyBlocks(false, true), elements: 32 },
  Q5_1: { decode: legacyBlocks(true, true), elements: 32 },
  Q8_0: { decode: q8_0, elements: 32 },
  Q4_K: { decode: (b, y, nb) => kQuant(b, y, nb, false), elements: 256 },
  Q5_K: { decode: (b, y, nb) => kQuant(b, y, nb, true), elements: 256 },
  Q6_K: { decode: q6_k, elements: 256 },
};

/** Decode `count` elements of `type` from `src` (which must hold exactly their blocks) into float32. */
export function dequantize(type: GgmlTypeName, src: Uint8Array, count: number): Float32Array {
  const out = new Float32Array(count);
  switch (type) {
    case "F32":
      new Uint8Array(out.buffer).set(src.subarray(0, count * 4));
      break;
    case "F16":
      for (let i = 0; i < count; i++) out[i] = half(src, 2 * i);
      break;
    case "BF16": {
      const u = new Uint32Array(out.buffer);
      for (let i = 0; i < count; i++) u[i] = (src[2 * i] | (src[2 * i + 1] << 8)) << 16;
      break;
    }
    case "F64": {
      const dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
      for (let i = 0; i < count; i++) out[i] = dv.getFloat64(8 * i, true);
      break;
    }
    default: {
      const q = BLOCK_DECODERS[type];
      if (q) q.decode(src, out, count / q.elements);
    }
  }
  return out;
}

/**
 * The four legacy 32-element formats differ by two switches, as in ggml: a block minimum m (Q4_1,
 * Q5_1: value q·d + m; else (q − offset)·d, offset 8 for 4 bits and 16 for 5) and a fifth bit per
 * element packed in 4 bytes after the scales (Q5_0, Q5_1). Bytes: 2 (d) [+ 2 (m)] [+ 4 (fifth bits)]
 * + 16 nibble bytes, whose low nibbles are elements 0..15 and high nibbles 16..31.
 */
function legacyBlocks(hasMin: boolean, fifthBit: boolean) {
  const bytes = 18 + (hasMin ? 2 : 0) + (fifthBit ? 4 : 0);
  const nibbles = bytes - 16;
  const offset = fifthBit ? 16 : 8;
  // Two loops rather than a branch per element (which cost about a third of the speed). The shared
  // decoder is still 15–25 % slower than four hand-specialised ones (2.7–4.6 vs 2.2–3.5 ns an element,
  // measured on a loaded 2-core machine); it runs only when a quantised checkpoint is expanded to float32,
  // which is not the default for large models.
  if (hasMin)
    return (b: Uint8Array, y: Float32Array, nb: number): void => {
      for (let i = 0; i < nb; i++) {
        const o = i * bytes,
          d = half(b, o),
          m = half(b, o + 2),
          qh = fifthBit ? u32(b, o + nibbles - 4) : 0,
          yo = i * 32;
        for (let j = 0; j < 16; j++) {
          const q = b[o + nibbles + j];
          y[yo + j] = fr(fr(d * ((q & 15) | (((qh >>> j) & 1) << 4))) + m);
          y[yo + j + 16] = fr(fr(d * ((q >> 4) | (((qh >>> (j + 16)) & 1) << 4))) + m);
        }
      }
    };
  return (b: Uint8Array, y: Float32Array, nb: number): void => {
    for (let i = 0; i < nb; i++) {
      const o = i * bytes,
        d = half(b, o),
        qh = fifthBit ? u32(b, o + nibbles - 4) : 0,
        yo = i * 32;
      for (let j = 0; j < 16; j++) {
        const q = b[o + nibbles + j];
        y[yo + j] = fr(d * (((q & 15) | (((qh >>> j) & 1) << 4)) - offset));
        y[yo + j + 16] = fr(d * (((q >> 4) | (((qh >>> (j + 16)) & 1) << 4)) - offset));
      }
    }
  };
}

const u32 = (b: Uint8Array, o: number): number => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;

function q8_0(b: Uint8Array, y: Float32Array, nb: number): void {
  for (let i = 0; i < nb; i++) {
    const o = i * 34,
      d = half(b, o),
      yo = i * 32;
    for (let j = 0; j < 32; j++) y[yo + j] = fr(((b[o + 2 + j] << 24) >> 24) * d);
  }
}

/** The 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes at `s`. */
function scaleMin(b: Uint8Array, s: number, j: number): [number, number] {
  if (j < 4) return [b[s + j] & 63, b[s + j + 4] & 63];
  return [(b[s + j + 4] & 15) | ((b[s + j - 4] >> 6) << 4), (b[s + j + 4] >> 4) | ((b[s + j] >> 6) << 4)];
}

/**
 * Q4_K and Q5_K share one super-block (d, dmin, 12 bytes of 6-bit scales and mins, 128 nibble
 * bytes); Q5_K adds 32 bytes of fifth bits before the nibbles. For Q4_K the fifth-bit masks are 0,
 * so each element gains + 0 and the arithmetic (hence the rounding) is Q4_K's own.
 */
function kQuant(b: Uint8Array, y: Float32Array, nb: number, fifthBits: boolean): void {
  const blockBytes = fifthBits ? 176 : 144;
  for (let i = 0; i < nb; i++) {
    const o = i * blockBytes,
      d = half(b, o),
      dmin = half(b, o + 2),
      s = o + 4,
      qh = o + 16,
      qs = fifthBits ? o + 48 : o + 16;
    let yo = i * 256;
    for (let g = 0; g < 4; g++) {
      const [sc1, m1] = scaleMin(b, s, 2 * g),
        [sc2, m2] = scaleMin(b, s, 2 * g + 1);
      const d1 = fr(d * sc1),
        dm1 = fr(dmin * m1),
        d2 = fr(d * sc2),
        dm2 = fr(dmin * m2);
      const q = qs + 32 * g,
        u1 = fifthBits ? 1 << (2 * g) : 0,
        u2 = fifthBits ? 2 << (2 * g) : 0;
      for (let l = 0; l < 32; l++) y[yo + l] = fr(fr(d1 * ((b[q + l] & 15) + (b[qh + l] & u1 ? 16 : 0))) - dm1);
      for (let l = 0; l < 32; l++) y[yo + 32 + l] = fr(fr(d2 * ((b[q + l] >> 4) + (b[qh + l] & u2 ? 16 : 0))) - dm2);
      yo += 64;
    }
  }
}

function q6_k(b: Uint8Array, y: Float32Array, nb: number): void {
  for (let i = 0; i < nb; i++) {
    const o = i * 210,
      d = half(b, o + 208);
    for (let n = 0; n < 2; n++) {
      const ql = o + 64 * n,
        qh = o + 128 + 32 * n,
        sc = o + 192 + 8 * n,
        yo = i * 256 + 128 * n;
      for (let l = 0; l < 32; l++) {
        const is = l >> 4;
        const s = (k: number) => fr(d * ((b[sc + is + k] << 24) >> 24));
        const h = b[qh + l];
        y[yo + l] = fr(s(0) * (((b[ql + l] & 15) | ((h & 3) << 4)) - 32));
        y[yo + l + 32] = fr(s(2) * (((b[ql + l + 32] & 15) | (((h >> 2) & 3) << 4)) - 32));
        y[yo + l + 64] = fr(s(4) * (((b[ql + l] >> 4) | (((h >> 4) & 3) << 4)) - 32));
        y[yo + l + 96] = fr(s(6) * (((b[ql + l + 32] >> 4) | (((h >> 6) & 3) << 4)) - 32));
      }
    }
  }
}

/**
 * Byte offsets of the half-float fields (scales and mins) inside one block of each quantised type.
 * Every other field is a small integer, so a block's values are finite exactly when these are:
 * the largest magnitudes are 65504·15 + 65504 (Q4_1), 65504·63·31 + 65504·63 (Q4_K/Q5_K) and
 * 65504·127·32 (Q6_K), all far below float32's limit.
 */
const SCALE_FIELDS: Partial<Record<GgmlTypeName, { blockBytes: number; offsets: number[] }>> = {
  Q4_0: { blockBytes: 18, offsets: [0] },
  Q4_1: { blockBytes: 20, offsets: [0, 2] },
  Q5_0: { blockBytes: 22, offsets: [0] },
  Q5_1: { blockBytes: 24, offsets: [0, 2] },
  Q8_0: { blockBytes: 34, offsets: [0] },
  Q4_K: { blockBytes: 144, offsets: [0, 2] },
  Q5_K: { blockBytes: 176, offsets: [0, 2] },
  Q6_K: { blockBytes: 210, offsets: [208] },
};

/** Bytes per block of a quantised type (undefined for the float types). */
export function quantBlockBytes(type: GgmlTypeName): number | undefined {
  return SCALE_FIELDS[type]?.blockBytes;
}

/**
 * Whether every block of `src` (whole blocks of a quantised `type`) has finite scales, i.e. whether
 * every value it decodes to is finite, without decoding: a NaN/Inf check of a 4-bit checkpoint reads
 * its stored bytes once instead of expanding them to float32.
 */
export function quantScalesFinite(type: GgmlTypeName, src: Uint8Array): boolean {
  const f = SCALE_FIELDS[type];
  if (!f) throw new RangeError(`${type} is not a quantised ggml type`);
  for (let o = 0; o + f.blockBytes <= src.length; o += f.blockBytes) {
    for (const k of f.offsets) if ((src[o + k + 1] & 0x7c) === 0x7c) return false; // half exponent all ones
  }
  return true;
}
