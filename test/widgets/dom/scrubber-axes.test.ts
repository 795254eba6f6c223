// @vitest-environment jsdom
/**
 * What a reader needs on the scrubber without hovering: token labels on the position axes (thinned
 * to fit, the full token in the title), step ticks, a colour bar naming its quantity, the token
 * strip's legend, and the per-head views (head view lines, layers × heads grid), with a note naming
 * the setting when the trace lacks them.
 */
import { canvasCalls } from "./dom-setup.js";
import { afterEach, describe, expect, it } from "vitest";
import { scrubberPayload } from "../../../src/figures/scrubber.js";
import { thinLabels, indexTicks } from "../../../src/protocol/axis-labels.js";
import { ScrubberView } from "../../../widgets/src/scrubber/view.js";
import { syntheticHeadKey, syntheticTrace, type SyntheticOptions } from "../synthetic-trace.js";

const opts: SyntheticOptions = {
  promptLength: 6,
  genLength: 10,
  steps: 10,
  layers: 4,
  heads: 3,
  perHead: true,
  mapLayers: [0, 3],
  headMapLayers: [0, 3],
};

function mount(o: SyntheticOptions = opts, maxBytes?: number): ScrubberView {
  const host = document.createElement("div");
  document.body.appendChild(host);
  return new ScrubberView(host, scrubberPayload(syntheticTrace(o), { maxBytes }));
}

afterEach(() => {
  document.body.textContent = "";
  canvasCalls.length = 0;
});

describe("label rules (protocol/axis-labels.ts)", () => {
  it("labels every cell when they fit, every k-th when not, and always the forced ones", () => {
    expect(thinLabels(10, 200, 11)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // 100 cells on 300 px = 3 px each; 11 px apart → every 4th
    const thin = thinLabels(100, 300, 11);
    expect(thin.slice(0, 3)).toEqual([0, 4, 8]);
    expect(thin).toHaveLength(25);
    const forced = thinLabels(100, 300, 11, [50]);
    expect(forced).toContain(50);
    // neighbours closer than 4 cells to the forced label are dropped
    expect(forced).not.toContain(48);
    expect(forced).not.toContain(52);
  });

  it("step ticks: round step numbers plus the first and last", () => {
    const steps = Array.from({ length: 64 }, (_, i) => i);
    const t = indexTicks(steps, 6).map((i) => steps[i]);
    expect(t[0]).toBe(0);
    expect(t[t.length - 1]).toBe(63);
    expect(t.slice(1, -1).every((v) => v % 10 === 0)).toBe(true);
    expect(indexTicks([0, 1, 2], 6)).toEqual([0, 1, 2]);
  });
});

describe("axes, colour bar and legend", () => {
  it("puts every token on the temporal view's x axis when they fit, full text in the title", () => {
    const v = mount();
    const ticks = [...v.panels[0].xAxis.querySelectorAll(".fs-token-tick")];
    expect(ticks.map((t) => t.textContent)).toEqual([
      ...Array.from({ length: 6 }, (_, j) => `p${j}`),
      ...Array.from({ length: 10 }, (_, j) => `g${j}`),
    ]);
    expect(ticks[7].getAttribute("title")).toBe("7: g1");
  });

  it("thins labels at 400 tokens and always labels the selected token", () => {
    const v = mount({ ...opts, promptLength: 100, genLength: 300, steps: 8, headMapLayers: [], mapLayers: [] });
    const labels = () => [...v.panels[0].xAxis.querySelectorAll(".fs-token-tick")].map((t) => t.getAttribute("title")!);
    expect(labels().length).toBeGreaterThan(10);
    expect(labels().length).toBeLessThan(400);
    expect(labels()).not.toContain("201: g101");
    v.dispatch({ type: "select", position: 201 });
    expect(labels()).toContain("201: g101");
  });

  it("ticks the steps, and the colour bar names its quantity and spans the data", () => {
    const v = mount();
    const p = v.panels[0];
    const steps = [...p.yAxis.querySelectorAll(".fs-step-tick")].map((t) => Number(t.textContent));
    expect(steps[0]).toBe(0);
    expect(steps[steps.length - 1]).toBe(9);
    const bar = p.colourBar.root;
    expect(bar.querySelector(".fs-colorbar-label")!.textContent).toBe("attention received, mean over heads");
    const heat = p.data.temporal(0, "mean");
    const ticks = [...bar.querySelectorAll(".fs-colorbar-tick")].map((t) => Number(t.textContent));
    expect(ticks.length).toBeGreaterThan(1);
    // the ends are printed to 3 significant digits
    expect(ticks[0]).toBeCloseTo(heat.max, 2);
    expect(ticks[ticks.length - 1]).toBeCloseTo(heat.min, 2);
    for (const t of ticks) {
      expect(t).toBeGreaterThanOrEqual(heat.min * (1 - 2e-3));
      expect(t).toBeLessThanOrEqual(heat.max * (1 + 2e-3));
    }
    v.dispatch({ type: "scale", value: "log" });
    expect(bar.querySelector(".fs-colorbar-label")!.textContent).toBe("log₁₀(attention received, mean over heads)");
  });

  it("explains the token strip's colours and the anchor mark", () => {
    const v = mount();
    const legend = v.root.querySelector(".fs-strip-legend")!.textContent!;
    for (const w of ["prompt", "masked", "unmasked at this step", "unmasked earlier", "floating anchor"]) expect(legend).toContain(w);
    const arm = mount({ ...opts, causal: true });
    expect(arm.root.querySelector(".fs-strip-legend")!.textContent).toContain("not generated yet");
  });
});

describe("head view and layers × heads grid", () => {
  it("draws each head's lines from the selected token to the keys it attends to", () => {
    const v = mount();
    const p = v.panels[0];
    expect(p.headView).not.toBeNull();
    v.dispatch({ type: "layer", value: 3 });
    v.dispatch({ type: "select", position: 2 });
    const hv = p.headView!;
    // every head draws a line to each key with weight > 0.01 (all 16 keys here: the floor is 1/16)
    expect(hv.lines).toBe(3 * 16);
    // the strongest keys of token 2 are highlighted on the right: head h attends to (2 + h) mod 16
    const hot = [...hv.root.querySelectorAll(".fs-headview-keys .fs-tick-highlight")].map((t) => t.getAttribute("title"));
    for (let h = 0; h < 3; h++) expect(hot.join("|")).toContain(`${syntheticHeadKey(h, 2, 16, false)}:`);
    expect(hv.root.querySelector(".fs-headview-queries .fs-tick-selected")!.getAttribute("title")).toBe("2: p2");
    // one head only when a head is chosen
    v.dispatch({ type: "mean", on: false });
    expect(hv.lines).toBe(16);
    expect(hv.root.querySelectorAll(".fs-head-legend .fs-legend-item:not(.fs-legend-off)")).toHaveLength(1);
  });

  it("without a selection, draws each query's strongest key per head", () => {
    const v = mount();
    v.dispatch({ type: "layer", value: 3 });
    const hv = v.panels[0].headView!;
    expect(hv.lines).toBe(3 * 16);
    // head 1's line for query 4 goes to key 5: moveTo(0, 4.5 row) then lineTo(w, 5.5 row)
    const row = hv.height / 16;
    const lines = canvasCalls.filter((c) => c.canvas === hv.canvas && c.op === "lineTo").slice(-48);
    expect(lines.some((c) => Math.abs((c.args[1] as number) - 5.5 * row) < 1e-6)).toBe(true);
  });

  it("the grid shows one thumbnail per (layer, head) recorded and a click picks that layer and head", () => {
    const v = mount();
    const g = v.panels[0].headGrid!;
    expect(g.count).toBe(2 * 3);
    const thumbs = g.root.querySelectorAll("canvas.fs-thumb");
    (thumbs[3 + 2] as HTMLCanvasElement).dispatchEvent(new MouseEvent("click"));
    expect(v.state.layer).toBe(3);
    expect(v.state.head).toBe(2);
    expect(g.root.querySelector(".fs-thumb-current")!.getAttribute("title")).toBe("layer 3, head 2");
  });

  it("a trace without per-head data says which setting records it; the head slider is off", () => {
    const v = mount({ ...opts, perHead: false, mapLayers: [], headMapLayers: [] });
    const note = v.root.querySelector(".fs-missing")!.textContent!;
    expect(note).toContain('decodeQa(…, { viewProbes: "all" })');
    expect(note).toMatch(/full maps not recorded/);
    expect(v.panels[0].mapNote.textContent).toMatch(/full maps not recorded/);
    expect((v.root.querySelector('input[data-role="head"]') as HTMLInputElement).disabled).toBe(true);
    expect(v.panels[0].headView!.root.textContent).toMatch(/per-head maps not recorded/);
  });
});
