/** The framed raster figures (the scrubber's static image): token labels decoded, marked columns always labelled. */
import { describe, expect, it } from "vitest";
import { framedRasterSvg, type FramedFigure } from "../../src/figures/framed.js";

const fig = (xLabels: string[], marks: number[]): FramedFigure => ({
  title: "t",
  panels: [
    { png: Buffer.alloc(0), width: 300, height: 40, cols: xLabels.length, rows: 2, xLabels, yLabels: ["0", "1"], marks, min: 0, max: 1 },
  ],
  direction: "column",
  xTitle: "key",
  yTitle: "step",
  colour: () => "#000000",
  valueLabel: "v",
});

describe("framedRasterSvg labels", () => {
  it("byte-level tokens shown as text; a marked column labelled although the stride skips it", () => {
    // 120 columns on 300 px, 11 px a label: stride ceil(120·11/300) = 5 → 0, 5, …, 55, 60, 65, …; column 61
    // is marked, so 60 and 65 (closer than a stride) give way and 55, 70 stay
    const tokens = Array.from({ length: 120 }, (_, j) => (j === 61 ? "Ġanchor" : `Ġw${j}`));
    const svg = framedRasterSvg(fig(tokens, [61]));
    expect(svg).not.toMatch(/[ĠĊ]/);
    expect(svg).toMatch(/font-weight="600" class="fs-must">·anchor</);
    expect(svg).toContain(">·w55<");
    expect(svg).toContain(">·w70<");
    expect(svg).not.toContain(">·w60<");
    expect(svg).not.toContain(">·w65<");
  });
});
