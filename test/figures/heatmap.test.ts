import { describe, expect, it } from "vitest";
import { describeHeatmap, heatmap, renderHeatmapSvg } from "../../src/figures/heatmap.js";
import { colorAt } from "../../src/figures/colormap.js";
import { SettingsError } from "../../src/util/errors.js";
import { NASTY, parseSvg, texts } from "../display/markup.js";

const base = {
  title: "t",
  xLabels: ["a", "b", "c"],
  yLabels: ["L0", "L1"],
  values: [
    [0, 0.5, 1],
    [0.25, NaN, 0.75],
  ],
};

describe("heatmap spec", () => {
  it("validates and normalises: NaN → null, float32 rounding, auto domain", () => {
    const spec = heatmap({ ...base, values: [new Float32Array([0, 0.1, 1]), [0.25, NaN, Infinity]] });
    expect(spec.kind).toBe("heatmap");
    expect(spec.values).toEqual([
      [0, 0.1, 1],
      [0.25, null, null],
    ]);
    expect(spec.domain).toEqual([0, 1]);
    expect(spec.colormap).toBe("viridis");
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec); // plain JSON
  });

  it("uses a symmetric domain for the diverging map", () => {
    expect(
      heatmap({
        ...base,
        values: [
          [-0.2, 0, 0.5],
          [0, 0, 0],
        ],
        colormap: "rdbu",
      }).domain,
    ).toEqual([-0.5, 0.5]);
  });

  it("accepts numeric labels as strings", () => {
    expect(heatmap({ ...base, yLabels: [0, 1] }).yLabels).toEqual(["0", "1"]);
  });

  it.each([
    [{ values: [[0, 1, 2]] }, /values/, "2 rows"],
    [
      {
        values: [
          [0, 1],
          [2, 3],
        ],
      },
      /values\[0\]/,
      "3 columns",
    ],
    [
      {
        values: [
          [0, "x", 1],
          [0, 0, 0],
        ],
      },
      /values\[0\]\[1\]/,
      "a number or null",
    ],
    [{ colormap: "jet" }, /colormap/, '"viridis"'],
    [{ domain: [1, 0] }, /domain/, "low < high"],
    [{ xLabels: [] }, /xLabels/, "at least one label"],
    [{ title: 3 }, /title/, "a string"],
  ])("rejects bad input %#", (patch, field, expected) => {
    let err: unknown;
    try {
      heatmap({ ...base, ...(patch as object) } as never);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingsError);
    expect((err as SettingsError).field).toMatch(field);
    expect((err as SettingsError).message).toContain(expected);
  });

  it("summarises in one line", () => {
    expect(describeHeatmap(heatmap({ ...base, xTitle: "key", yTitle: "layer" }))).toBe(
      'Heatmap "t": 2 rows (layer) × 3 columns (key), values 0 … 1, 1 missing, colormap viridis',
    );
  });
});

describe("renderHeatmapSvg", () => {
  it("draws one cell per value with the colormap's end colours at the domain ends", () => {
    const svg = renderHeatmapSvg(heatmap(base));
    const doc = parseSvg(svg);
    expect(doc.querySelectorAll("parsererror").length).toBe(0);
    const fills = Array.from(doc.querySelectorAll("g[shape-rendering] > rect"), (r) => r.getAttribute("fill"));
    expect(fills).toHaveLength(6);
    // viridis endpoints per matplotlib: #440154 at 0, #fde725 at 1; missing cells are grey
    expect(fills[0]).toBe("#440154");
    expect(fills[2]).toBe("#fde725");
    expect(fills[4]).toBe("#e6e6e6");
    expect(colorAt("viridis", 0.5)).toBe("#26828e");
  });

  it("escapes every piece of user text (title, labels, axis titles, tooltips)", () => {
    const labels = NASTY;
    const spec = heatmap({
      title: '<script>alert(1)</script> & "t"',
      subtitle: "</svg>",
      xTitle: "it's",
      yTitle: "a & b",
      valueLabel: "<b>v</b>",
      xLabels: labels,
      yLabels: ["</svg>", "<row>"],
      values: [labels.map((_, i) => i), labels.map((_, i) => -i)],
    });
    const doc = parseSvg(renderHeatmapSvg(spec));
    expect(doc.querySelectorAll("parsererror").length).toBe(0);
    expect(doc.documentElement.nodeName).toBe("svg");
    expect(doc.querySelectorAll("script").length).toBe(0);
    expect(doc.querySelectorAll("b").length).toBe(0);
    // drawn text, and the full text of labels (their hover <title>)
    const all = [...texts(doc, "text"), ...texts(doc, "text > title")];
    expect(all).toContain('<script>alert(1)</script> & "t"');
    expect(all).toContain("</svg>");
    expect(all).toContain("<row>");
    expect(all).toContain("it's");
    expect(all).toContain("a & b");
    expect(all).toContain("<b>v</b>");
    // every label's full text is its hover title (the drawn text may be cut to 10 characters)
    for (const l of labels) expect(texts(doc, "text > title")).toContain(l);
    expect(texts(doc, "title")[0]).toBe(`${spec.title} — </svg>`);
    expect(texts(doc, "rect > title")).toContain(`a & b </svg> · it's ${labels[4]}: 4`);
  });

  it("draws large maps as one raster image (SVG stays small)", () => {
    const n = 200;
    const values = Array.from({ length: n }, (_, r) => Array.from({ length: n }, (_, c) => (c < n / 2 ? 0 : r === 0 ? 1 : 0.5)));
    const labels = Array.from({ length: n }, (_, i) => `t${i}`);
    const svg = renderHeatmapSvg(heatmap({ title: "big", xLabels: labels, yLabels: labels, values }));
    const doc = parseSvg(svg);
    expect(doc.querySelectorAll("g[shape-rendering] > rect").length).toBe(0);
    const images = doc.querySelectorAll("g[shape-rendering] > image");
    expect(images.length).toBe(1);
    expect(images[0].getAttribute("href")).toMatch(/^data:image\/png;base64,/);
    expect(svg.length).toBeLessThan(60_000);
  });
});
