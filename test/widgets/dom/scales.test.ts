/**
 * The scale rules every figure compiles (src/protocol/scales.ts), checked against hand-computed
 * values. That the widget and the static image apply them identically is same-description.test.ts.
 */
import { describe, expect, it } from "vitest";
import { colourScaleFor, niceTicks, qkColourScale } from "../../../src/protocol/scales.js";

describe("colour scale rule", () => {
  it("signed quantities: diverging map over ±max|v| (zero in the middle); others: sequential over [min, max]", () => {
    expect(colourScaleFor([-4, 1, 3, NaN], true)).toEqual({ colormap: "rdbu", domain: [-4, 4], diverging: true });
    expect(colourScaleFor([-0.1, 0.4], true).domain).toEqual([-0.4, 0.4]);
    expect(colourScaleFor([2, 5, Infinity], false)).toEqual({ colormap: "blues", domain: [2, 5], diverging: false });
    expect(colourScaleFor([], true).domain).toEqual([-1, 1]);
    expect(qkColourScale("score", [-2, 3]).domain).toEqual([-3, 3]);
    expect(qkColourScale("normProduct", [2, 3]).colormap).toBe("gnbu"); // the paper's QK figure
  });

  it("nice ticks are 1, 2 or 5 × 10^k apart", () => {
    expect(niceTicks(0, 18.4, 5)).toEqual([0, 5, 10, 15, 20]);
    expect(niceTicks(0, 0.37, 4)).toEqual([0, 0.1, 0.2, 0.3, 0.4]);
    expect(niceTicks(-4, 4, 4)).toEqual([-4, -2, 0, 2, 4]);
    expect(niceTicks(3, 97, 5, true)).toEqual([20, 40, 60, 80]);
  });
});
