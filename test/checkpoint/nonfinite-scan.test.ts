/**
 * countNonFinite (the weight scan's inner loop, with its word-at-a-time fast path) against an
 * independent definition: decode every element to a JS number (IEEE-754 rules: F32 through a
 * Float32Array, BF16 as the top half of an F32, F16 through f16ToF32) and test Number.isNaN /
 * ±Infinity. Random data with NaN/±Inf planted at random places, including both halves of one
 * 32-bit word, the last element of odd-length buffers, and unaligned views.
 */
import { describe, expect, it } from "vitest";
import { f16ToF32 } from "../../src/checkpoint/safetensors.js";
import { countNonFinite } from "../../src/graph/scan-weights.js";
import { seeded } from "../support/engine-tiny.js";

type D = "F32" | "BF16" | "F16";
const SPECIALS: Record<D, number[]> = {
  F32: [0x7fc00000, 0x7f800000, 0xff800000, 0x7f800001, 0xffffffff],
  BF16: [0x7fc0, 0x7f80, 0xff80, 0x7f81, 0xffff],
  F16: [0x7e00, 0x7c00, 0xfc00, 0x7c01, 0xffff],
};

function reference(bytes: Buffer, dtype: D): { nan: number; inf: number; first: number } {
  let nan = 0,
    inf = 0,
    first = -1;
  const size = dtype === "F32" ? 4 : 2;
  for (let i = 0; i < bytes.length / size; i++) {
    let v: number;
    if (dtype === "F32") v = new Float32Array(Uint8Array.from(bytes.subarray(i * 4, i * 4 + 4)).buffer)[0];
    else if (dtype === "BF16") v = new Float32Array(Uint32Array.of(bytes.readUInt16LE(i * 2) << 16).buffer)[0];
    else v = f16ToF32(bytes.readUInt16LE(i * 2));
    if (Number.isNaN(v)) nan++;
    else if (!Number.isFinite(v)) inf++;
    else continue;
    if (first < 0) first = i;
  }
  return { nan, inf, first };
}

describe("countNonFinite", () => {
  const rand = seeded(7);
  for (const dtype of ["F32", "BF16", "F16"] as D[]) {
    it(`${dtype}: counts and first index match the decoded values (200 random buffers)`, () => {
      const size = dtype === "F32" ? 4 : 2;
      for (let trial = 0; trial < 200; trial++) {
        const n = 1 + Math.floor(rand() * 97);
        const raw = Buffer.alloc(n * size + 8);
        const offset = trial % 3 === 0 ? 2 : 0; // some views start off an 8-byte boundary
        const bytes = raw.subarray(offset, offset + n * size);
        for (let i = 0; i < n; i++) {
          // finite: a random mantissa with an exponent that is never all ones
          if (size === 4) bytes.writeUInt32LE((((rand() * 0x7f000000) >>> 0) | (rand() < 0.5 ? 0x80000000 : 0)) >>> 0, i * 4);
          else bytes.writeUInt16LE(((rand() * (dtype === "BF16" ? 0x7f00 : 0x7800)) >>> 0) | (rand() < 0.5 ? 0x8000 : 0), i * 2);
        }
        const plants = trial % 4 === 0 ? 0 : 1 + Math.floor(rand() * 3);
        for (let k = 0; k < plants; k++) {
          const at = trial % 5 === 0 ? n - 1 : Math.floor(rand() * n);
          const v = SPECIALS[dtype][Math.floor(rand() * SPECIALS[dtype].length)];
          if (size === 4) bytes.writeUInt32LE(v >>> 0, at * 4);
          else bytes.writeUInt16LE(v, at * 2);
        }
        expect(countNonFinite(bytes, dtype), `trial ${trial}, n ${n}`).toEqual(reference(bytes, dtype));
      }
    });
  }
});
