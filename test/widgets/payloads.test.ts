import { describe, expect, it } from "vitest";
import {
  base64ToBytes,
  bytesToBase64,
  decodeArray,
  decodeInt32,
  describeSubsampling,
  encodeArray,
  evenIndices,
  float16BitsToFloat32,
  float32ToFloat16Bits,
  PayloadError,
} from "../../src/protocol/payloads.js";

describe("base64", () => {
  it("matches Node's Buffer encoder for every length mod 3 and all byte values", () => {
    for (const len of [0, 1, 2, 3, 4, 5, 256, 12289, 12290]) {
      const bytes = new Uint8Array(len);
      for (let i = 0; i < len; i++) bytes[i] = (i * 73 + 11) & 255;
      const ours = bytesToBase64(bytes);
      expect(ours).toBe(Buffer.from(bytes).toString("base64"));
      expect(Array.from(base64ToBytes(ours))).toEqual(Array.from(bytes));
    }
  });

  it("rejects malformed input", () => {
    expect(() => base64ToBytes("abc")).toThrow(PayloadError);
    expect(() => base64ToBytes("ab$=")).toThrow(/invalid base64/);
  });
});

describe("float16", () => {
  it("encodes known IEEE binary16 bit patterns", () => {
    // Reference bit patterns from the IEEE 754 binary16 table.
    expect(float32ToFloat16Bits(1)).toBe(0x3c00);
    expect(float32ToFloat16Bits(-2)).toBe(0xc000);
    expect(float32ToFloat16Bits(65504)).toBe(0x7bff);
    expect(float32ToFloat16Bits(1e6)).toBe(0x7c00);
    expect(float32ToFloat16Bits(2 ** -24)).toBe(0x0001);
    expect(float32ToFloat16Bits(0.1)).toBe(0x2e66);
    expect(float32ToFloat16Bits(1 / 3)).toBe(0x3555);
    expect(float32ToFloat16Bits(0)).toBe(0);
    expect(Number.isNaN(float16BitsToFloat32(float32ToFloat16Bits(NaN)))).toBe(true);
  });

  it("decodes bit patterns", () => {
    expect(float16BitsToFloat32(0x3c00)).toBe(1);
    expect(float16BitsToFloat32(0x7bff)).toBe(65504);
    expect(float16BitsToFloat32(0x0001)).toBe(2 ** -24);
    expect(float16BitsToFloat32(0xfc00)).toBe(-Infinity);
  });
});

describe("encodeArray / decodeArray", () => {
  const values = Float32Array.from({ length: 600 }, (_, i) => Math.sin(i / 7) * 0.5 + 0.25);

  it("uint8 quantisation stays within half a level", () => {
    const e = encodeArray(values, [20, 30]);
    expect(e.dtype).toBe("uint8");
    const back = decodeArray(e);
    const level = e.scale!;
    expect(level).toBeCloseTo((0.75 - -0.25) / 255, 2);
    for (let i = 0; i < values.length; i++) expect(Math.abs(back[i] - values[i])).toBeLessThanOrEqual(level / 2 + 1e-7);
    // base64 of 600 bytes is 800 characters
    expect(e.b64.length).toBe(800);
  });

  it("keeps NaN as the missing code", () => {
    const v = [0, NaN, 1, 0.5];
    const e = encodeArray(v, [4]);
    expect(e.missing).toBe(255);
    const back = decodeArray(e);
    expect(back[0]).toBeCloseTo(0, 6);
    expect(Number.isNaN(back[1])).toBe(true);
    expect(back[2]).toBeCloseTo(1, 6);
    expect(back[3]).toBeCloseTo(0.5, 2);
  });

  it("uint16, float16, float32 and int32 round-trip", () => {
    const u16 = decodeArray(encodeArray(values, [600], { dtype: "uint16" }));
    for (let i = 0; i < 600; i++) expect(Math.abs(u16[i] - values[i])).toBeLessThan(1e-5);
    const f16 = decodeArray(encodeArray(values, [600], { dtype: "float16" }));
    for (let i = 0; i < 600; i++) expect(Math.abs(f16[i] - values[i])).toBeLessThan(1e-3);
    const f32 = decodeArray(encodeArray(values, [600], { dtype: "float32" }));
    expect(Array.from(f32)).toEqual(Array.from(values));
    const ints = [-1, 0, 7, 2 ** 30];
    expect(Array.from(decodeInt32(encodeArray(ints, [4], { dtype: "int32" })))).toEqual(ints);
  });

  it("a constant array decodes to the constant", () => {
    const back = decodeArray(encodeArray([0.3, 0.3, 0.3], [3]));
    for (const v of back) expect(v).toBeCloseTo(0.3, 6);
  });

  it("names the problem on shape and length mismatches", () => {
    expect(() => encodeArray([1, 2, 3], [2, 2])).toThrow(/shape \[2, 2\] needs 4/);
    const e = encodeArray([1, 2, 3, 4], [4]);
    expect(() => decodeArray({ ...e, shape: [5] }, "runs[0].received")).toThrow(/runs\[0\]\.received/);
    expect(() => decodeInt32(e)).toThrow(/expected dtype int32/);
  });
});

describe("subsampling helpers", () => {
  it("evenIndices keeps first and last", () => {
    expect(evenIndices(10, 4)).toEqual([0, 3, 6, 9]);
    expect(evenIndices(3, 10)).toEqual([0, 1, 2]);
    expect(evenIndices(5, 1)).toEqual([4]);
  });
  it("describes what was dropped", () => {
    expect(describeSubsampling([])).toBe("");
    expect(describeSubsampling([{ axis: "step", kept: 32, of: 128, how: "evenly spaced" }])).toBe(
      "subsampled: step 32 of 128 (evenly spaced)",
    );
  });
});
