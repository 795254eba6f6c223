// @vitest-environment jsdom
/**
 * The widget and the static image take colours, domains and labels from the same description:
 * for every figure kind the kernel's bundle carries a `FigureDescription` (MIME_FIGURE) and an SVG;
 * the widget, mounted on the description as it arrives over the wire (JSON), must show the same
 * colour-bar stops and ticks, axis labels, legend and warnings as the SVG — and those must be the
 * description's own (checked against the colormap stops and niceTicks, not against either drawing).
 * A control edits the description (another colormap, another label) and sees the widget follow.
 */
import "./dom-setup.js";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { FIGURE_INPUTS } from "../../figures/figure-inputs.js";
import { kindBundle } from "../../../src/figures/registry.js";
import { MIME_FIGURE } from "../../../src/protocol/payloads.js";
import { colorAt } from "../../../src/protocol/colormap.js";
import { niceTicks } from "../../../src/protocol/scales.js";
import { formatValue } from "../../../src/protocol/markup.js";
import type { FigureDescription, HeatPanel } from "../../../src/protocol/figure.js";
import { FigureView } from "../../../widgets/src/figures/figure.js";

/** What a reader can check in one drawing: colour bars (stops + ticks), labels, legend, warnings. */
function reading(root: ParentNode) {
  const bars = [...root.querySelectorAll("g.fs-colourbar")].map((g) => ({
    stops: [...g.querySelectorAll("stop")].map((s) => s.getAttribute("stop-color")),
    ticks: [...g.querySelectorAll(":scope > text")].map((t) => t.textContent),
  }));
  const labels = [...root.querySelectorAll("g.fs-xlabels > text, g.fs-ylabels > text")].map((t) => t.querySelector("title")?.textContent);
  const legend = [...root.querySelectorAll("g.fs-legend > text")].map((t) => t.querySelector("title")?.textContent);
  const warnings = [...root.querySelectorAll("text.fs-warning")].map((t) => t.textContent);
  const rects = [...root.querySelectorAll("g.fs-cells > rect")].map((r) => r.getAttribute("fill"));
  return { bars, labels, legend, warnings, rects };
}

function staticOf(input: { kind: string }): { d: FigureDescription; svg: Document } {
  const b = kindBundle(input);
  const d = JSON.parse(JSON.stringify(b[MIME_FIGURE])) as FigureDescription; // as it crosses to the frontend
  return { d, svg: new DOMParser().parseFromString(b["image/svg+xml"] as string, "image/svg+xml") };
}

describe("widget and static image draw one description", () => {
  for (const [kind, input] of Object.entries(FIGURE_INPUTS)) {
    it(`${kind}: same colour bars, labels, legend and warnings, all from the description`, () => {
      const { d, svg } = staticOf(input);
      const host = document.createElement("div");
      const view = FigureView.mount(host, d);
      const w = reading(view.canvas);
      const s = reading(svg);
      expect(w).toEqual(s);

      // …and they are the description's: one bar per heat panel with its colormap's stops and round ticks
      const heat = d.panels.filter((p): p is HeatPanel => p.type === "heat");
      expect(w.bars).toHaveLength(heat.length);
      heat.forEach((p, i) => {
        expect(w.bars[i].stops).toEqual(Array.from({ length: 9 }, (_, j) => colorAt(p.scale.colormap, 1 - j / 8)));
        expect(w.bars[i].ticks.slice(0, -1)).toEqual(niceTicks(p.scale.domain[0], p.scale.domain[1], 4, true).map(formatValue));
      });
      expect(w.legend).toEqual(d.legend.map((e) => e.label));
      expect(w.warnings.join(" ").replace(/^• /, "")).toContain(d.warnings[0] ?? "");
      if (d.warnings.length) expect(w.warnings.length).toBeGreaterThan(0);
      if (heat.length) expect(w.labels.length).toBeGreaterThan(0);
      for (const l of w.labels) {
        const all = heat.flatMap((p) => [...p.x.labels, ...p.y.labels]);
        expect(all).toContain(l);
      }
      view.dispose();
    });
  }

  it("the colormaps the paper uses, on both sides: retrieval YlOrRd, drift Purples, QK norm GnBu, signed QK maps diverging around 0", () => {
    const maps = (k: keyof typeof FIGURE_INPUTS) =>
      staticOf(FIGURE_INPUTS[k]).d.panels.flatMap((p) => (p.type === "heat" ? [p.scale] : []));
    expect(new Set(maps("retrieval").map((s) => s.colormap))).toEqual(new Set(["ylorrd"]));
    expect(maps("retrieval")[0].domain).toEqual([0, 1]);
    expect(maps("drift")[0].colormap).toBe("purples");
    const qk = maps("qk");
    expect(qk.map((s) => s.colormap)).toEqual(["rdbu", "rdbu", "gnbu", "rdbu", "rdbu", "gnbu"]);
    for (const s of qk.filter((x) => x.diverging)) expect(s.domain[0]).toBe(-s.domain[1]);
  });

  it("control: edit the description's colormap and a token label — the widget follows, so it chooses neither", () => {
    const { d } = staticOf(FIGURE_INPUTS.rollout);
    const edited = JSON.parse(JSON.stringify(d)) as FigureDescription;
    const p = edited.panels[0] as HeatPanel;
    p.scale.colormap = "magma";
    p.x.labels[1] = "<edited & escaped>";
    const w = reading(FigureView.mount(document.createElement("div"), edited).canvas);
    expect(w.bars[0].stops[0]).toBe(colorAt("magma", 1));
    expect(w.bars[0].stops[0]).not.toBe(colorAt("blues", 1));
    expect(w.labels).toContain("<edited & escaped>");
  });

  it("a description saved before token text was decoded (raw byte-level tokens) is drawn readable: labels, tooltips and hover read-out", () => {
    const { d } = staticOf(FIGURE_INPUTS.drift);
    const old = JSON.parse(JSON.stringify(d)) as FigureDescription;
    const p = old.panels[0] as HeatPanel;
    // SmolLM2's stored forms, as notebooks executed before the decoding carry them
    const raw = ["<|im_start|>", "system", "Ċ", "You", "Ġare", "Ġa", "Ġhelpful", "ĠAI", "Ġassistant", "Ġnamed", "ĠSm", "ol"];
    p.x.labels = raw.slice(0, p.x.labels.length);
    const view = FigureView.mount(document.createElement("div"), old);
    const text = view.canvas.textContent ?? "";
    expect(text).not.toMatch(/[\u0120\u010a\u0109]/);
    const w = reading(view.canvas);
    // hand-decoded: Ġ is GPT-2's byte 0x20 (space, shown "·"), Ċ byte 0x0A (newline, shown "↵")
    expect(w.labels).toEqual(expect.arrayContaining(["<|im_start|>", "system", "↵", "You", "·are", "·helpful"]));
    expect(view.svg).not.toMatch(/[\u0120\u010a\u0109]/);
    const g = new DOMParser().parseFromString(view.svg, "image/svg+xml").querySelector("g.fs-heat rect[fill='none']")!;
    const cw = Number(g.getAttribute("width")) / p.cols;
    expect(view.cellAt(Number(g.getAttribute("x")) + 6.5 * cw, Number(g.getAttribute("y")) + 1)).toMatch(
      /key position \(token\) ·helpful: /,
    );
    // the control: plain labels (layer names, already decoded text) are left as they are
    const plain = JSON.parse(JSON.stringify(d)) as FigureDescription;
    (plain.panels[0] as HeatPanel).x.labels[1] = "doc 3";
    expect(reading(FigureView.mount(document.createElement("div"), plain).canvas).labels).toContain("doc 3");
  });
});

describe("widget interaction", () => {
  it("the hover read-out names the cell under the mouse with its full token text and value", () => {
    const { d } = staticOf(FIGURE_INPUTS.drift);
    const view = FigureView.mount(document.createElement("div"), d);
    const svgText = view.svg;
    // the first heat panel's plot area, as drawn
    const g = new DOMParser().parseFromString(svgText, "image/svg+xml").querySelector("g.fs-heat rect[fill='none']")!;
    const x = Number(g.getAttribute("x"));
    const y = Number(g.getAttribute("y"));
    const cw = Number(g.getAttribute("width")) / 12;
    const ch = Number(g.getAttribute("height")) / 6;
    // step row 3, key column 6 (an anchor cell: 0.5 in the input)
    expect(view.cellAt(x + 6.5 * cw, y + 3.5 * ch)).toBe("denoising step 3 · key position (token) <mask>: 0.5");
    expect(view.cellAt(x - 5, y - 5)).toBeNull();
  });

  it("width follows the cell: a wider host draws a wider figure", () => {
    const { d } = staticOf(FIGURE_INPUTS.qk);
    const narrow = document.createElement("div");
    Object.defineProperty(narrow, "clientWidth", { value: 500 });
    const wide = document.createElement("div");
    Object.defineProperty(wide, "clientWidth", { value: 1100 });
    const a = FigureView.mount(narrow, d);
    const b = FigureView.mount(wide, d);
    expect(Number(a.canvas.querySelector("svg")!.getAttribute("width"))).toBe(496);
    expect(Number(b.canvas.querySelector("svg")!.getAttribute("width"))).toBe(1096);
    // narrow: one heat panel per row; wide: the three maps of a layer side by side
    const tops = (v: FigureView) =>
      new Set([...v.canvas.querySelectorAll("g.fs-heat rect[fill='none']")].map((r) => r.getAttribute("y"))).size;
    expect(tops(a)).toBe(6);
    expect(tops(b)).toBe(2);
  });
});

describe("widget exports", () => {
  let names: string[] = [];
  beforeEach(() => {
    names = [];
    URL.createObjectURL = () => "blob:test";
    URL.revokeObjectURL = () => undefined;
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      names.push(this.download);
    });
  });

  it("file names say figure, model(s) and layer(s); two figures never share a name; SVG + two PNG scales offered", () => {
    const qk = FigureView.mount(document.createElement("div"), staticOf(FIGURE_INPUTS.qk).d);
    const drift = FigureView.mount(document.createElement("div"), staticOf(FIGURE_INPUTS.drift).d);
    const abs = FigureView.mount(document.createElement("div"), staticOf(FIGURE_INPUTS.absorption).d);
    for (const v of [qk, drift, abs]) v.root.querySelector<HTMLButtonElement>("button.fs-export")!.click();
    expect(names).toEqual([
      "floatscope_qk_tiny-llada_layer1-4.svg",
      "floatscope_drift_tiny-llada_layer5.svg",
      "floatscope_absorption_tiny-llama+tiny-llada.svg",
    ]);
    expect([...qk.root.querySelectorAll("button.fs-export")].map((b) => b.textContent)).toEqual(["SVG", "PNG 2×", "PNG 300 dpi"]);
    vi.restoreAllMocks();
  });
});
