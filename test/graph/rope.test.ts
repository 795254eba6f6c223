/** RoPE frequencies and position ids against hand-computed values. */
import { describe, expect, it } from "vitest";
import { positionIdsFromMask, ropeInvFreq } from "../../src/graph/rope.js";

describe("ropeInvFreq", () => {
  it("is θ^(−2j/d) without scaling", () => {
    const inv = ropeInvFreq({ theta: 10000 }, 8);
    [1, 0.1, 0.01, 0.001].forEach((v, j) => expect(inv[j]).toBeCloseTo(v, 15));
  });
  it("applies Llama-3 scaling band by band", () => {
    // wavelengths 2π/inv = 6.28, 62.8, 628, 6283 against low/high cut-offs 64/1 = 64 and 64/4 = 16
    const inv = ropeInvFreq(
      { theta: 10000, llama3: { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64 } },
      8,
    );
    const smooth = (64 / ((2 * Math.PI) / 0.1) - 1) / (4 - 1); // 0.00619...
    expect(inv[0]).toBe(1); // short wavelength: unchanged
    expect(inv[1]).toBeCloseTo((1 - smooth) * 0.0125 + smooth * 0.1, 14); // medium band: blended
    expect(inv[1]).toBeCloseTo(0.013042, 6);
    expect(inv[2]).toBeCloseTo(0.01 / 8, 15); // long wavelength: divided by factor
    expect(inv[3]).toBeCloseTo(0.001 / 8, 15);
  });
});

describe("positionIdsFromMask", () => {
  it("counts real tokens (cumsum − 1), left padding clipped at 0", () => {
    // row 0: right padding continues the count; row 1: left padding, real tokens start at 0
    const mask = Uint8Array.from([1, 1, 1, 1, 0, 0, 1, 1, 1, 0]);
    expect(Array.from(positionIdsFromMask(mask, 2, 5))).toEqual([0, 1, 2, 3, 3, 0, 0, 1, 2, 2]);
  });
});
