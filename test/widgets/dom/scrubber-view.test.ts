// @vitest-environment jsdom
import { callsOn, canvasCalls } from "./dom-setup.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { scrubberPayload } from "../../../src/figures/scrubber.js";
import { MIME_SCRUBBER, type ScrubberPayload } from "../../../src/protocol/payloads.js";
import { ScrubberView } from "../../../widgets/src/scrubber/view.js";
import { decodeScrubber } from "../../../widgets/src/scrubber/data.js";
import { FloatscopeRenderer, mountScrubber } from "../../../widgets/src/renderer.js";
import { syntheticAnchor, syntheticTrace, type SyntheticOptions } from "../synthetic-trace.js";

const opts: SyntheticOptions = { promptLength: 6, genLength: 10, steps: 10, layers: 4, heads: 3, perHead: true, mapLayers: [0, 3] };
const HOSTILE = ["<script>alert(1)</script>", "</svg><img src=x onerror=alert(2)>", `"quoted" & 'single'`];

function mount(payload: ScrubberPayload = scrubberPayload(syntheticTrace(opts))): ScrubberView {
  const host = document.createElement("div");
  document.body.appendChild(host);
  return new ScrubberView(host, payload);
}

function stepSlider(v: ScrubberView): HTMLInputElement {
  return v.root.querySelector('input[data-role="step"]') as HTMLInputElement;
}

afterEach(() => {
  document.body.textContent = "";
  vi.useRealTimers();
});

describe("decoding", () => {
  it("decodes runs and derives token states from unmask steps", () => {
    const t = syntheticTrace(opts);
    const [run] = decodeScrubber(scrubberPayload(t));
    expect(run.extent).toEqual({ steps: 10, layers: 4, heads: 3, positions: 16 });
    for (let j = 0; j < 16; j++) {
      const at = t.unmaskedAt[j];
      for (const s of [0, 4, 9]) expect(run.tokenState(s, j)).toBe(at < 0 ? "prompt" : at >= s ? "masked" : "unmasked");
    }
    expect(run.anchorRow(7, 3)[syntheticAnchor(opts, 7, 3)]).toBe(1);
    expect(run.anchorRow(7, 0)[syntheticAnchor(opts, 7, 0)]).toBe(1);
    expect(run.map(2, 3, "mean")!.n).toBe(16);
    expect(run.map(2, 1, "mean")).toBeNull(); // layer 1 recorded no maps
    const { heat, min, max } = run.temporal(3, "mean");
    expect(heat.length).toBe(10 * 16);
    expect(max).toBeGreaterThan(0.3); // the anchor bump
    expect(min).toBeLessThan(0.1);
  });

  it("names the field of a malformed payload", () => {
    const p = scrubberPayload(syntheticTrace(opts));
    p.runs[0].received = { ...p.runs[0].received, shape: [10, 4, 15] };
    expect(() => decodeScrubber(p)).toThrow(/runs\[0\]\.received/);
  });
});

describe("ScrubberView", () => {
  it("builds step, layer and head sliders over the data's extent, opening on the last step", () => {
    const v = mount();
    const step = stepSlider(v);
    expect(step.max).toBe("9");
    expect(step.value).toBe("9");
    expect((v.root.querySelector('input[data-role="layer"]') as HTMLInputElement).max).toBe("3");
    expect((v.root.querySelector('input[data-role="head"]') as HTMLInputElement).max).toBe("2");
    expect(v.state.head).toBe("mean");
  });

  it("moving the step slider redraws: the step outline moves and the token strip recolours", () => {
    const v = mount();
    const p = v.panels[0];
    const outline = (from: number) => callsOn(p.temporal, from).filter((c) => c.op === "strokeRect" && c.strokeStyle === "#d62728");
    const masked = (from: number, to = canvasCalls.length) =>
      callsOn(p.strip, from).filter((c) => canvasCalls.indexOf(c) < to && c.op === "fillRect" && c.fillStyle === "#8c8c8c").length;
    const before = canvasCalls.length;
    const step = stepSlider(v);
    step.value = "2";
    step.dispatchEvent(new Event("input"));
    expect(v.state.step).toBe(2);
    const y2 = outline(before)[0].args[1] as number;
    const mark = canvasCalls.length;
    step.value = "6";
    step.dispatchEvent(new Event("input"));
    const y6 = outline(mark)[0].args[1] as number;
    expect(y6).toBeGreaterThan(y2);
    // fewer masked tokens at a later step (10 generated positions, one unmasked per step)
    expect(masked(before, mark)).toBe(7); // step 2: positions unmasked at steps 3..9
    expect(masked(mark)).toBe(3); // step 6: steps 7..9
    expect(p.title.textContent).toContain("step 6");
  });

  it("shows the full map only where one was recorded, and says where they are", () => {
    const v = mount();
    const p = v.panels[0];
    const layer = v.root.querySelector('input[data-role="layer"]') as HTMLInputElement;
    layer.value = "1";
    layer.dispatchEvent(new Event("input"));
    expect(p.mapNote.textContent).toMatch(/no full maps recorded for this layer/);
    layer.value = "3";
    layer.dispatchEvent(new Event("input"));
    expect(p.mapNote.textContent).toMatch(/^full map, step 9/);
  });

  it("keyboard: arrows step and change layer, [ ] pick heads, m toggles the mean, space plays", () => {
    vi.useFakeTimers();
    const v = mount();
    const key = (k: string, shift = false) =>
      v.root.dispatchEvent(new KeyboardEvent("keydown", { key: k, shiftKey: shift, bubbles: true }));
    key("ArrowLeft");
    expect(v.state.step).toBe(8);
    key("ArrowLeft", true);
    expect(v.state.step).toBe(0);
    key("ArrowUp");
    expect(v.state.layer).toBe(1);
    key("]");
    expect(v.state.head).toBe(0);
    key("]");
    expect(v.state.head).toBe(1);
    key("m");
    expect(v.state.head).toBe("mean");
    key("m");
    expect(v.state.head).toBe(1);
    key(" ");
    expect(v.state.playing).toBe(true);
    vi.advanceTimersByTime(3 * 150 + 10);
    expect(v.state.step).toBe(3);
    key(" ");
    vi.advanceTimersByTime(1000);
    expect(v.state.step).toBe(3);
    expect(v.root.getAttribute("data-lm-suppress-shortcuts")).toBe("true");
  });

  it("the colour scale (c, or the select) repaints the heat: log brings out more levels than linear", () => {
    const v = mount();
    const levels = (from: number) => {
      const put = canvasCalls
        .slice(from)
        .filter((c) => c.op === "putImageData")
        .at(-1)!;
      const d = (put.args[0] as { data: Uint8ClampedArray }).data;
      const seen = new Set<number>();
      for (let i = 0; i < d.length; i += 4) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    };
    let mark = canvasCalls.length;
    v.dispatch({ type: "toggleAnchors" }); // repaint (linear, no anchor overlay)
    const linear = levels(mark);
    mark = canvasCalls.length;
    v.root.dispatchEvent(new KeyboardEvent("keydown", { key: "c", bubbles: true }));
    expect(v.state.scale).toBe("sqrt");
    v.root.dispatchEvent(new KeyboardEvent("keydown", { key: "c", bubbles: true }));
    expect(v.state.scale).toBe("log");
    expect(levels(mark)).toBeGreaterThan(linear);
    expect((v.root.querySelector('select[data-role="scale"]') as HTMLSelectElement).value).toBe("log");
  });

  it("clicking a token shows its row and column from the full map", () => {
    const v = mount();
    const p = v.panels[0];
    p.strip.getBoundingClientRect = () =>
      ({ left: 0, top: 0, width: 160, height: 16, right: 160, bottom: 16, x: 0, y: 0, toJSON() {} }) as DOMRect;
    v.dispatch({ type: "layer", value: 3 });
    // position 5 at x = 5.5 / 16 · 160
    p.strip.dispatchEvent(new MouseEvent("click", { clientX: 55, clientY: 8 }));
    expect(v.state.selected).toBe(5);
    // deep-layer anchor is position 5 (last prompt token): everyone attends to it most
    expect(p.detail.textContent).toMatch(/attends most to "p5"@5/);
    expect(p.detail.textContent).toMatch(/attended most by/);
  });

  it("places untrusted token text only as text: hover, detail, title and SVG export", () => {
    const tokens = [...HOSTILE, "a", "b", "c", ...Array.from({ length: 10 }, (_, i) => `g${i}`)];
    const payload = scrubberPayload(syntheticTrace({ ...opts, tokens }), { title: `<b>title</b> "x"` });
    payload.prompt = `</svg><script>alert("p")</script>`;
    const v = mount(payload);
    const p = v.panels[0];
    p.temporal.getBoundingClientRect = () =>
      ({ left: 0, top: 0, width: 160, height: 100, right: 160, bottom: 100, x: 0, y: 0, toJSON() {} }) as DOMRect;
    p.temporal.dispatchEvent(new MouseEvent("mousemove", { clientX: 5, clientY: 5 }));
    const tip = v.root.querySelector(".fs-tooltip") as HTMLElement;
    expect(tip.textContent).toContain("<script>alert(1)</script>");
    expect(tip.textContent).toMatch(/· region query$/); // the synthetic prompt is one "query" region
    v.dispatch({ type: "select", position: 1 });
    expect(document.querySelectorAll("script, img, b").length).toBe(0);
    expect(v.root.querySelector(".fs-title")!.textContent).toBe(`<b>title</b> "x"`);

    const svg = v.exportSvg();
    const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
    expect(doc.querySelector("parsererror")).toBeNull();
    expect(doc.querySelectorAll("script, img, b").length).toBe(0);
    const titles = Array.from(doc.querySelectorAll("text > title"), (t) => t.textContent);
    // the tooltips carry the text as every label shows it (spaces made visible, "·"), escaped, never markup
    expect(titles.slice(0, 3)).toEqual(HOSTILE.map((t) => t.replace(/ /g, "·")));
    expect(doc.querySelector("desc")!.textContent).toBe(`prompt: </svg><script>alert("p")</script>`);
    expect(doc.documentElement.getAttribute("width")).not.toBeNull();
  });

  it("exports a PNG blob", async () => {
    const v = mount();
    const blob = await v.exportPng();
    expect(blob).not.toBeNull();
    expect(blob!.type).toBe("image/png");
  });

  it("shows the subsampling note", () => {
    const payload = scrubberPayload(syntheticTrace({ ...opts, steps: 40, genLength: 40 }), { maxBytes: 12_000 });
    const v = mount(payload);
    expect(v.root.querySelector(".fs-note")!.textContent).toMatch(/^To stay small, this output holds \d+ of 40 steps/);
  });
});

describe("FloatscopeRenderer", () => {
  const model = (data: unknown) => ({ data: { [MIME_SCRUBBER]: data }, metadata: {}, trusted: false, setData() {} }) as never;

  it("renders the scrubber and disposes it on re-render", async () => {
    const r = new FloatscopeRenderer(MIME_SCRUBBER, mountScrubber);
    document.body.appendChild(r.node);
    await r.renderModel(model(scrubberPayload(syntheticTrace(opts))));
    expect(r.node.querySelectorAll(".fs-scrubber").length).toBe(1);
    await r.renderModel(model(scrubberPayload(syntheticTrace(opts))));
    expect(r.node.querySelectorAll(".fs-scrubber").length).toBe(1);
    r.dispose();
  });

  it("shows a readable error instead of a blank output", async () => {
    const r = new FloatscopeRenderer(MIME_SCRUBBER, mountScrubber);
    await r.renderModel(model({ kind: "scrubber", version: 1, runs: [] }));
    expect(r.node.querySelector(".fs-error")!.textContent).toMatch(/floatscope: expected at least one run \(field: runs\)/);
  });
});
