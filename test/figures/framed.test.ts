import { JSDOM } from "jsdom";
import { describe, expect, it } from "vitest";
import { framedRasterSvg, type FramedPanel } from "../../src/figures/framed.js";
import { encodePng } from "../../src/figures/png.js";

const parse = (svg: string) => new new JSDOM("").window.DOMParser().parseFromString(svg, "image/svg+xml");

function panel(rows: number, cols: number, px: number, extra: Partial<FramedPanel> = {}): FramedPanel {
  const width = cols * px;
  const height = rows * px;
  return {
    png: encodePng(width, height, new Uint8Array(width * height * 3)),
    width,
    height,
    rows,
    cols,
    min: 0.001234,
    max: 0.5,
    ...extra,
  };
}

const base = { xTitle: "key", yTitle: "step", colour: () => "#123456", valueLabel: "attn" };

describe("framedRasterSvg: a raster heatmap with axes", () => {
  it("is well-formed XML that escapes hostile token labels", () => {
    const svg = framedRasterSvg({
      ...base,
      title: 'drift <b>"x"</b>',
      direction: "row",
      panels: [panel(2, 3, 20, { xLabels: ["<script>", "</svg>", "a&b"], yLabels: ["s0", "s1"] })],
    });
    const doc = parse(svg);
    expect(doc.getElementsByTagName("parsererror")).toHaveLength(0);
    const texts = Array.from(doc.getElementsByTagName("text")).map((t) => t.textContent);
    expect(texts).toEqual(expect.arrayContaining(["<script>", "</svg>", "a&b", "s0", "s1", 'drift <b>"x"</b>', "key", "step", "attn"]));
    expect(svg).not.toContain("<script>");
  });

  it("thins labels to what fits: 200 tokens over 200 px get every 11th (11 px a label)", () => {
    const labels = Array.from({ length: 200 }, (_, i) => `t${i}`);
    const svg = framedRasterSvg({ ...base, title: "t", direction: "row", panels: [panel(4, 200, 1, { xLabels: labels })] });
    const shown = Array.from(parse(svg).getElementsByTagName("text"))
      .map((t) => t.textContent ?? "")
      .filter((t) => /^t\d+$/.test(t));
    expect(shown).toEqual(Array.from({ length: Math.ceil(200 / 11) }, (_, i) => `t${i * 11}`));
  });

  it("puts the red mark under the marked column and the embedded image at the panel size", () => {
    const svg = framedRasterSvg({ ...base, title: "t", direction: "row", panels: [panel(5, 10, 8, { marks: [7, 99] })] });
    const doc = parse(svg);
    const img = doc.getElementsByTagName("image")[0];
    const x0 = Number(img.getAttribute("x"));
    expect(Number(img.getAttribute("width"))).toBe(80);
    expect(Number(img.getAttribute("height"))).toBe(40);
    const png = Buffer.from(img.getAttribute("href")!.split(",")[1], "base64");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([80, 40]);
    const marks = Array.from(doc.getElementsByTagName("rect")).filter((r) => r.getAttribute("fill") === "#d62728");
    expect(marks.map((r) => Number(r.getAttribute("x")))).toEqual([x0 + 7 * 8]); // column 99 is off the panel: no mark
  });

  it("stacks panels in a column without overlap and labels the colour bar with the range", () => {
    const svg = framedRasterSvg({
      ...base,
      title: "t",
      direction: "column",
      panels: [
        panel(3, 4, 10, { title: "MDM", xLabels: ["a", "b", "c", "d"] }),
        panel(3, 4, 10, { title: "ARM", xLabels: ["a", "b", "c", "d"] }),
      ],
    });
    const doc = parse(svg);
    const [a, b] = Array.from(doc.getElementsByTagName("image")).map((i) => Number(i.getAttribute("y")));
    expect(b).toBeGreaterThan(a + 30 + 40); // first panel (30 px) + its rotated token labels
    const texts = Array.from(doc.getElementsByTagName("text")).map((t) => t.textContent);
    expect(texts).toEqual(expect.arrayContaining(["MDM", "ARM", "0.5", "0.00123"]));
    const h = Number(doc.documentElement.getAttribute("height"));
    expect(h).toBeGreaterThan(b + 30);
  });
});
