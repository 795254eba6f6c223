/**
 * The scrubber's default recording: per-head received and full maps are added to a notebook's probe
 * request when the estimates say they fit, and otherwise a note names the setting that records them.
 * Sizes checked against hand-computed bytes (elements × 4 × passes), not against our own estimate.
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeQaWith, loadQaSet, notebookSettings } from "../../src/notebook/notebook.js";
import { openModelFiles } from "../../src/model/open.js";
import { VIEW_PROBE_BUDGET_BYTES, viewProbes } from "../../src/notebook/view-probes.js";
import { scrubberPayload } from "../../src/figures/scrubber.js";

const MODELS = path.resolve(__dirname, "../../models");
const tiny = openModelFiles(path.join(MODELS, "tiny-llada")).spec;
/** LLaDA-8B's attention shape (32 layers × 32 heads of 128) on the tiny model's other fields. */
const big = { ...tiny, numLayers: 32, numHeads: 32, numKvHeads: 32, headDim: 128, hiddenSize: 4096, intermediateSize: 12288 };

describe("viewProbes (default recording for the scrubber)", () => {
  it("records everything for notebook 01's run on the tiny models (≈ 4 MiB of maps, far under the budget)", () => {
    // per-head maps: 4 heads × 51² × 4 B × 6 layers × 17 passes = 4.2 MB; full maps a quarter of that
    expect(4 * 51 * 51 * 4 * 6 * 17).toBeLessThan(VIEW_PROBE_BUDGET_BYTES);
    const d = viewProbes({ received: true }, tiny, { batch: 1, traces: 1, seq: 51, steps: 16 });
    const all = [0, 1, 2, 3, 4, 5];
    expect(d.probes).toEqual({ received: true, receivedHeads: true, patternMean: { layers: all }, pattern: { layers: all } });
    expect(d.note).toBeUndefined();
  });

  it("keeps what the caller asked for and only adds", () => {
    const d = viewProbes({ received: true, argmax: true, pattern: { layers: [2], heads: [0] } }, tiny, {
      batch: 1,
      traces: 1,
      seq: 51,
      steps: 16,
    });
    expect(d.probes.argmax).toBe(true);
    expect(d.probes.pattern).toEqual({ layers: [0, 1, 2, 3, 4, 5], heads: [0] });
  });

  it("an 8B-shaped run does not fit: full maps are left out and the note names the setting", () => {
    // one full map per layer: 600² × 4 B × 33 passes = 47.5 MB; two layers already exceed 64 MiB
    expect(600 * 600 * 4 * 33 * 2).toBeGreaterThan(VIEW_PROBE_BUDGET_BYTES);
    const d = viewProbes({ received: true }, big, { batch: 1, traces: 1, seq: 600, steps: 32 });
    expect(d.probes.patternMean).toBeUndefined();
    expect(d.probes.pattern).toBeUndefined();
    // per-head received: 32 × 600 × 4 B × 32 layers × 33 passes = 81 MB > 64 MiB
    expect(d.probes.receivedHeads).toBeUndefined();
    expect(d.note).toMatch(/full maps for 32 of 32 layers/);
    expect(d.note).toContain('viewProbes: "all"');
  });

  it("between the two: fewer, evenly spaced layers (first and last kept)", () => {
    // T = 200: a full map per layer is 200² × 4 × 33 = 5.3 MB, so ~12 layers fit in 64 MiB, not 32
    const d = viewProbes({ received: true }, big, { batch: 1, traces: 1, seq: 200, steps: 32 });
    const layers = d.probes.patternMean!.layers;
    expect(layers.length).toBeGreaterThan(1);
    expect(layers.length).toBeLessThan(32);
    expect(layers[0]).toBe(0);
    expect(layers[layers.length - 1]).toBe(31);
    expect(d.note).toMatch(/full maps for \d+ of 32 layers/);
  });

  it('"none" and "all" override the estimate', () => {
    expect(viewProbes({ received: true }, big, { batch: 1, traces: 1, seq: 600, steps: 32 }, { setting: "none" }).probes).toEqual({
      received: true,
    });
    expect(
      viewProbes({ received: true }, big, { batch: 1, traces: 1, seq: 600, steps: 32 }, { setting: "all" }).probes.pattern!.layers,
    ).toHaveLength(32);
  });
});

describe("notebook 01's call, unchanged, gives the scrubber its full maps and heads", () => {
  it("decodeQaWith(…, { probes: { received: true } }) on tiny-llada records maps and per-head data", async () => {
    const S = notebookSettings({ families: ["llada"], samples: 1, env: { FLOATSCOPE_MODELS: MODELS } });
    const qa = await loadQaSet({ ...S, data: path.join(MODELS, "world/eval-heldout.jsonl.gz") });
    const r = await decodeQaWith(S, "llada", qa, { probes: { received: true }, context: "oracle", tokens: 8 });
    const t = r.traces[0];
    expect(t.steps[0].probes.has("blocks.5.attn.pattern_mean")).toBe(true);
    expect(t.steps[0].probes.has("blocks.0.attn.received_heads")).toBe(true);
    const p = scrubberPayload(t, { maxBytes: 1024 * 1024 });
    expect(p.runs[0].maps.length).toBeGreaterThan(0);
    expect(p.runs[0].heads.length).toBe(4);
    expect(p.runs[0].headMaps?.length ?? 0).toBeGreaterThan(0);
  }, 60_000);
});
