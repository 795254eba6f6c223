// @vitest-environment jsdom
/**
 * Every step, layer and head in a live session: what a scrubber output does not
 * embed, the kernel that built it serves one (step, layer) at a time (figures/scrubber.ts's registry,
 * widgets/src/scrubber/live.ts asks for it). Also the measured sizes that docs/figures.md quotes for
 * SmolLM2-135M's shape (30 layers × 9 heads × T = 170 × 32 steps).
 */
import "./dom-setup.js";
import { afterEach, describe, expect, it } from "vitest";
import { scrubberBatch, scrubberPayload } from "../../../src/figures/scrubber.js";
import { setDisplaySink } from "../../../src/display/sink.js";
import {
  decodeArray,
  describeOmitted,
  LIVE_SLICE_GLOBAL,
  liveSliceCode,
  MIME_SCRUBBER_SLICE,
  payloadSize,
  type ScrubberSlice,
} from "../../../src/protocol/payloads.js";
import { ScrubberView } from "../../../widgets/src/scrubber/view.js";
import { setKernelResolver, type LiveKernel } from "../../../widgets/src/scrubber/live.js";
import { syntheticTrace, type SyntheticOptions } from "../synthetic-trace.js";

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

type Serve = (key: string, run: number, s: number, l: number) => void;

/** Run the kernel side of `liveSliceCode` here: parse its arguments and call the registry, capturing the display. */
function serveHere(code: string): ScrubberSlice | null {
  const m = /\?\.\((".*?"), (\d+), (\d+), (\d+)\)/.exec(code);
  if (!m) return null;
  const serve = (globalThis as unknown as Record<symbol, Serve | undefined>)[Symbol.for(LIVE_SLICE_GLOBAL)];
  if (!serve) return null;
  let out: ScrubberSlice | null = null;
  const prev = setDisplaySink((msg) => {
    out = msg.data[MIME_SCRUBBER_SLICE] as ScrubberSlice;
  });
  try {
    serve(JSON.parse(m[1]) as string, Number(m[2]), Number(m[3]), Number(m[4]));
  } finally {
    setDisplaySink(prev);
  }
  return out;
}

/** A kernel connection that answers slice requests from this process's registry, like the notebook's kernel would. */
function fakeKernel(requests: string[]): LiveKernel {
  return {
    requestExecute(content) {
      requests.push(content.code);
      const future = {
        onIOPub: (() => undefined) as (msg: { header: { msg_type: string }; content: Record<string, unknown> }) => void,
        done: Promise.resolve().then(() => {
          const slice = serveHere(content.code);
          if (slice) future.onIOPub({ header: { msg_type: "display_data" }, content: { data: { [MIME_SCRUBBER_SLICE]: slice } } });
          return {};
        }),
      };
      return future;
    },
  };
}

afterEach(() => {
  setKernelResolver(null);
  document.body.textContent = "";
});

describe("on-demand slices from the live kernel", () => {
  it("a payload that leaves maps out carries a live key; the kernel serves any (step, layer) with the trace's values", () => {
    const t = syntheticTrace(opts);
    const p = scrubberPayload(t, { maxBytes: 14_000 });
    expect(p.live?.key).toMatch(/\w/);
    expect(p.subsampled.some((n) => n.axis === "head-map step" || n.axis === "map step")).toBe(true);
    const slice = serveHere(liveSliceCode(p.live!.key, 0, 4, 3))!;
    expect(slice.error).toBeUndefined();
    expect(slice.headMaps!.shape).toEqual([3, 16, 16]);
    expect(slice.map!.shape).toEqual([16, 16]);
    // per-head values within the uint8 quantisation step of the trace's own
    const want = t.steps[4].probes.get("blocks.3.attn.pattern")!.data;
    const got = decodeArray(slice.headMaps!);
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(want[i] - got[i]));
    expect(worst).toBeLessThan(1 / 255);
    // an unknown key says what to do, in words
    expect(serveHere(liveSliceCode("gone", 0, 0, 0))!.error).toMatch(/run its cell again/);
    // a payload that embeds everything has no live key (nothing for the kernel to keep)
    expect(scrubberPayload(t).live).toBeUndefined();
  });

  it("the view asks the kernel for what the output lacks and draws it: the map and head view at every step", async () => {
    const payload = scrubberPayload(syntheticTrace(opts), { maxBytes: 14_000 });
    const requests: string[] = [];
    const kernel = fakeKernel(requests);
    setKernelResolver(() => kernel);
    const host = document.createElement("div");
    document.body.appendChild(host);
    const v = new ScrubberView(host, payload);
    v.dispatch({ type: "layer", value: 3 });
    const p = v.panels[0];
    for (let s = 0; s < 10; s++) {
      v.dispatch({ type: "step", value: s });
      for (let i = 0; i < 40 && !(/^full map/.test(p.mapNote.textContent ?? "") && p.headView!.lines > 0); i++)
        await new Promise((r) => setTimeout(r, 5));
      expect(p.mapNote.textContent, `step ${s}`).toMatch(/^full map, step/);
      expect(p.headView!.lines, `step ${s}`).toBeGreaterThan(0);
    }
    expect(requests.length).toBeGreaterThan(0);
    expect(v.root.querySelector(".fs-note")!.textContent).toMatch(/load from the kernel/);
    v.dispose();
  });

  it("one reply carries the following steps of the layer, as many as fit the batch size: fewer requests than steps", async () => {
    const t = syntheticTrace(opts);
    const payload = scrubberPayload(t, { maxBytes: 14_000 });
    const one = serveHere(liveSliceCode(payload.live!.key, 0, 2, 3))!;
    // steps 3… of layer 3 came with step 2, each with the trace's own values (the synthetic trace is small: all of them fit)
    expect(one.more!.map((m) => [m.stepIndex, m.layerIndex])).toEqual([3, 4, 5, 6, 7, 8, 9].map((s) => [s, 3]));
    for (const m of one.more!) {
      const want = t.steps[m.stepIndex].probes.get("blocks.3.attn.pattern")!.data;
      const got = decodeArray(m.headMaps!);
      let worst = 0;
      for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(want[i] - got[i]));
      expect(worst, `step ${m.stepIndex}`).toBeLessThan(1 / 255);
    }
    // a batch size that holds two slices sends the requested one and one more
    const plans = (globalThis as unknown as Record<symbol, { registry: { entries: Map<string, Parameters<typeof scrubberBatch>[1]> } }>)[
      Symbol.for(LIVE_SLICE_GLOBAL)
    ].registry.entries.get(payload.live!.key)!;
    const size = JSON.stringify(scrubberBatch(payload.live!.key, plans, 0, 2, 3, 0)).length;
    expect(scrubberBatch(payload.live!.key, plans, 0, 2, 3, 0).more).toBeUndefined();
    expect(scrubberBatch(payload.live!.key, plans, 0, 2, 3, 2 * size + 10).more!.map((m) => m.stepIndex)).toEqual([3]);
    // the view: walking every step of one layer asks the kernel once per batch, not once per step
    const requests: string[] = [];
    const kernel = fakeKernel(requests);
    setKernelResolver(() => kernel);
    const host = document.createElement("div");
    document.body.appendChild(host);
    const v = new ScrubberView(host, payload);
    v.dispatch({ type: "layer", value: 3 });
    const p = v.panels[0];
    for (let s = 0; s < 10; s++) {
      v.dispatch({ type: "step", value: s });
      for (let i = 0; i < 40 && !(/^full map/.test(p.mapNote.textContent ?? "") && p.headView!.lines > 0); i++)
        await new Promise((r) => setTimeout(r, 5));
      expect(p.headView!.lines, `step ${s}`).toBeGreaterThan(0);
    }
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.length).toBeLessThanOrEqual(2);
    v.dispose();
  });

  it("without a kernel (a saved notebook) the view says in words what needs a live session", () => {
    const payload = scrubberPayload(syntheticTrace(opts), { maxBytes: 14_000 });
    setKernelResolver(() => null);
    const host = document.createElement("div");
    document.body.appendChild(host);
    const v = new ScrubberView(host, payload);
    v.dispatch({ type: "layer", value: 3 });
    const missingStep = [...Array(10).keys()].find((s) => v.panels[0].data.map(s, 3, "mean") === null)!;
    expect(missingStep).toBeDefined();
    v.dispatch({ type: "step", value: missingStep });
    expect(v.panels[0].mapNote.textContent).toMatch(/not saved in this output: it loads from the kernel while the notebook runs/);
    v.dispose();
  });

  it("plain words for what an output holds (no 'subsampled')", () => {
    const text = describeOmitted([{ axis: "head-map step", kept: 2, of: 32, how: "evenly spaced" }], true);
    expect(text).toBe(
      "To stay small, this output holds per-head maps (the head view) at 2 of 32 steps. The maps of the other steps load from the kernel when you move to them, while the notebook's kernel runs; a saved copy without a kernel shows only what is held here (run the cell to see every step).",
    );
  });
});

describe("sizes for SmolLM2-135M's shape (docs/figures.md)", () => {
  it("30 layers × 9 heads × T = 170 × 32 steps: what is embedded, one slice, and everything", () => {
    const shape: SyntheticOptions = {
      promptLength: 138,
      genLength: 32,
      steps: 32,
      layers: 30,
      heads: 9,
      perHead: true,
      mapLayers: [29],
      headMapLayers: [29],
    };
    const t = syntheticTrace(shape);
    const p = scrubberPayload(t); // default cap 8 MiB
    const slice = serveHere(liveSliceCode(p.live!.key, 0, 31, 29))!;
    const sliceBytes = JSON.stringify(slice).length;
    const received = JSON.stringify(p.runs[0].received).length;
    const receivedHeads = JSON.stringify(p.runs[0].receivedHeads ?? null).length;
    const all = { headMaps: 32 * 30 * JSON.stringify(slice.headMaps).length, maps: 32 * 30 * JSON.stringify(slice.map).length };
    console.log(
      `[135M shape] payload ${payloadSize(p)} chars; received ${received}; receivedHeads ${receivedHeads}; one (step, layer) slice ${sliceBytes}; ` +
        `all per-head maps ${all.headMaps}; all head-mean maps ${all.maps}`,
    );
    // one slice: 9 × 170 × 170 uint8 per-head maps + a 170 × 170 mean, base64: ≈ 385 KB
    expect(sliceBytes).toBeGreaterThan(380_000);
    expect(sliceBytes).toBeLessThan(390_000);
    // every (step, layer) as uint8: ≈ 370 MB of JSON — why they are served on demand, not embedded
    expect(all.headMaps + all.maps).toBeGreaterThan(300e6);
    expect(payloadSize(p)).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(p.runs[0].heads).toHaveLength(9); // every head's received attention is embedded (the kernel cannot serve it later)
  }, 120_000);
});

describe("runs of different shapes under one set of controls", () => {
  it("steps by fraction of each decode (or by index), layers by relative depth (or per panel), each panel says where it is", () => {
    const a = syntheticTrace({ ...opts, steps: 10, genLength: 10, layers: 4 });
    const b = syntheticTrace({ ...opts, steps: 20, genLength: 20, layers: 8, causal: true });
    const host = document.createElement("div");
    document.body.appendChild(host);
    const v = new ScrubberView(host, scrubberPayload([a, b], { tiers: ["tiny", "real"] }));
    const [pa, pb] = v.panels;
    expect(pa.name.textContent).toBe("synthetic-mdm · tiny · MDM");
    expect(pb.name.textContent).toBe("synthetic-arm · real · ARM");
    // the shared sliders span the larger run; the last step and the deepest layer of each
    v.dispatch({ type: "step", value: 19 });
    v.dispatch({ type: "layer", value: 7 });
    expect(pa.where.textContent).toMatch(/^step 9 \(10 of 10 · 100 % of the decode\) · layer 3 of 4/);
    expect(pb.where.textContent).toMatch(/^step 19 \(20 of 20 · 100 % of the decode\) · layer 7 of 8/);
    // halfway through each decode, halfway down each model
    v.dispatch({ type: "step", value: 10 });
    v.dispatch({ type: "layer", value: 4 });
    expect(pa.where.textContent).toMatch(/^step 5 \(6 of 10/);
    expect(pa.where.textContent).toMatch(/layer 2 of 4/);
    expect(pb.where.textContent).toMatch(/^step 10 \(11 of 20/);
    // by index: the same step number, clamped to the shorter run
    const mode = v.root.querySelector('select[data-role="step-mode"]') as HTMLSelectElement;
    mode.value = "index";
    mode.dispatchEvent(new Event("change"));
    expect(pa.where.textContent).toMatch(/^step 9 \(10 of 10/);
    expect(pb.where.textContent).toMatch(/^step 10 \(11 of 20/);
    // a panel's own layer
    pa.layerSelect.value = "0";
    pa.layerSelect.dispatchEvent(new Event("change"));
    expect(pa.where.textContent).toMatch(/layer 0 of 4/);
    expect(pb.where.textContent).toMatch(/layer 4 of 8/);
    v.dispose();
  });

  it("clicking a token label selects that position in every panel; clicking it again clears it", () => {
    const host = document.createElement("div");
    document.body.appendChild(host);
    const v = new ScrubberView(host, scrubberPayload([syntheticTrace(opts), syntheticTrace({ ...opts, causal: true })]));
    const tick = v.panels[0].xAxis.querySelector('.fs-token-tick[data-pos="4"]') as HTMLElement;
    tick.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    expect(v.state.selected).toBe(4);
    for (const p of v.panels) expect(p.xAxis.querySelector(".fs-tick-selected")!.getAttribute("data-pos")).toBe("4");
    expect(v.panels[1].profiles.querySelectorAll("g.fs-profile")).toHaveLength(2);
    (v.panels[1].xAxis.querySelector('.fs-token-tick[data-pos="4"]') as HTMLElement).dispatchEvent(
      new MouseEvent("click", { bubbles: true }),
    );
    expect(v.state.selected).toBeNull();
    v.dispose();
  });

  it("head toggles and hovering a query change what the head view draws", () => {
    const host = document.createElement("div");
    document.body.appendChild(host);
    const v = new ScrubberView(host, scrubberPayload(syntheticTrace(opts)));
    v.dispatch({ type: "layer", value: 3 });
    const hv = v.panels[0].headView!;
    expect(hv.lines).toBe(3 * 16);
    (hv.root.querySelector('.fs-head-toggle[data-head="1"]') as HTMLElement).click();
    expect(hv.lines).toBe(2 * 16);
    expect(hv.canvas.dataset.lines).toBe(String(2 * 16));
    const q = hv.root.querySelector('.fs-headview-queries [data-pos="2"]') as HTMLElement;
    q.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    expect(hv.query).toBe(2);
    expect(hv.lines).toBe(2 * 16); // every key of query 2, for the two heads still on
    hv.root.querySelector(".fs-headview-queries")!.dispatchEvent(new MouseEvent("mouseleave"));
    expect(hv.query).toBeNull();
    v.dispose();
  });
});
