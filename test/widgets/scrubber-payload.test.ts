import { inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodeArray, decodeInt32, MIME_SCRUBBER, payloadSize } from "../../src/protocol/payloads.js";
import { crc32, encodePng } from "../../src/figures/png.js";
import { describeScrubber, scrubber, scrubberPayload } from "../../src/figures/scrubber.js";
import { scrubberDescription } from "../../src/figures/scrubber-svg.js";
import { pngRaster } from "../../src/figures/raster.js";
import { drawFigure } from "../../src/protocol/draw.js";
import { ProbeMissingError, SettingsError } from "../../src/util/errors.js";
import { syntheticAnchor, syntheticTrace, type SyntheticOptions } from "./synthetic-trace.js";

const mdm: SyntheticOptions = { promptLength: 6, genLength: 8, steps: 8, layers: 4, heads: 2, perHead: true, mapLayers: [3] };

describe("scrubberPayload", () => {
  it("carries received attention, unmask steps and tokens of the trace", () => {
    const t = syntheticTrace(mdm);
    const p = scrubberPayload(t);
    expect(p.kind).toBe("scrubber");
    expect(p.subsampled).toEqual([]);
    const r = p.runs[0];
    expect(r.received.shape).toEqual([8, 4, 14]);
    expect(r.steps).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(r.layers).toEqual([0, 1, 2, 3]);
    expect(r.tokens).toEqual(t.tokens);
    expect(Array.from(decodeInt32(r.unmaskedAt))).toEqual(Array.from(t.unmaskedAt));
    const rec = decodeArray(r.received);
    // Every value within one quantisation level of the probe.
    const src = t.steps[5].probes.get("blocks.2.attn.received")!.data;
    for (let j = 0; j < 14; j++) expect(Math.abs(rec[(5 * 4 + 2) * 14 + j] - src[j])).toBeLessThanOrEqual(r.received.scale! / 2 + 1e-6);
    expect(r.receivedHeads!.shape).toEqual([8, 4, 2, 14]);
    expect(r.maps.length).toBe(8); // layer 3, every step
    expect(r.maps[0].data.shape).toEqual([14, 14]);
  });

  it("marks the synthetic world's anchor at every (step, layer) and nothing else", () => {
    const p = scrubberPayload(syntheticTrace(mdm));
    const r = p.runs[0];
    const flat = Array.from(decodeInt32(r.anchors));
    const want: number[] = [];
    for (let s = 0; s < 8; s++) for (let l = 0; l < 4; l++) want.push((s * 4 + l) * 14 + syntheticAnchor(mdm, s, l));
    expect(flat.sort((a, b) => a - b)).toEqual(want.sort((a, b) => a - b));
    expect(r.anchorRule).toMatch(/mean\+ksigma \(k=3\)/);
  });

  it("pads an ARM's shorter early steps with missing values", () => {
    const arm = syntheticTrace({ promptLength: 5, genLength: 6, steps: 6, layers: 2, heads: 2, causal: true });
    const r = scrubberPayload(arm).runs[0];
    const rec = decodeArray(r.received);
    // step 0 has P + 1 = 6 keys of 11
    expect(Number.isNaN(rec[(0 * 2 + 0) * 11 + 6])).toBe(true);
    expect(Number.isNaN(rec[(0 * 2 + 0) * 11 + 5])).toBe(false);
    expect(r.causal).toBe(true);
  });

  it("subsamples under the cap and says what it dropped", () => {
    const big = syntheticTrace({ promptLength: 40, genLength: 88, steps: 40, layers: 8, heads: 4, perHead: true, mapLayers: [7] });
    const full = scrubberPayload(big);
    expect(full.subsampled).toEqual([]);
    const cap = 60_000;
    const small = scrubberPayload(big, { maxBytes: cap });
    expect(payloadSize(small)).toBeLessThanOrEqual(cap);
    const axes = small.subsampled.map((s) => s.axis);
    expect(axes).toContain("step");
    expect(axes).toContain("head");
    const step = small.subsampled.find((s) => s.axis === "step")!;
    expect(step.of).toBe(40);
    expect(small.runs[0].steps.length).toBe(step.kept);
    // first and last step survive
    expect(small.runs[0].steps[0]).toBe(0);
    expect(small.runs[0].steps.at(-1)).toBe(39);
    expect(describeScrubber(small)).toMatch(/\. To stay small, this output holds \d+ of 40 steps/);
    expect(describeScrubber(small)).not.toMatch(/subsampled|\n/);
  });

  it("keeps the layers whose maps were recorded when the cap drops layers (no map view left empty)", () => {
    // 12 layers, full and per-head maps at the first and last only (as viewProbes records them), T = 128, 32
    // steps: a cap that leaves room for a few layers. Evenly spaced layers alone could miss layer 0 or 11.
    const big = syntheticTrace({
      promptLength: 48,
      genLength: 80,
      steps: 32,
      layers: 12,
      heads: 2,
      perHead: true,
      mapLayers: [0, 11],
      headMapLayers: [0, 11],
    });
    const small = scrubberPayload([big, big, big, big], { maxBytes: 20_000 });
    const layerNote = small.subsampled.find((s) => s.axis === "layer");
    expect(layerNote, "the cap must drop layers for this test to mean anything").toBeDefined();
    for (const r of small.runs) {
      expect(r.layers.length).toBeLessThan(12);
      expect(r.layers).toContain(0);
      expect(r.layers).toContain(11);
      expect(r.layers).toEqual([...r.layers].sort((a, b) => a - b));
      expect((r.missing ?? []).map((m) => m.view)).not.toContain("maps");
      expect((r.missing ?? []).map((m) => m.view)).not.toContain("headMaps");
    }
  });

  it("puts MDM and ARM runs side by side", () => {
    const p = scrubberPayload([syntheticTrace(mdm), syntheticTrace({ ...mdm, causal: true, perHead: false, mapLayers: [] })]);
    expect(p.runs.map((r) => r.label)).toEqual(["synthetic-mdm (MDM)", "synthetic-arm (ARM)"]);
  });

  it("rejects traces without received attention and unknown layers", () => {
    const t = syntheticTrace(mdm);
    for (const s of t.steps) for (const k of [...s.probes.keys()]) if (k.endsWith(".received")) s.probes.delete(k);
    expect(() => scrubberPayload(t)).toThrow(ProbeMissingError);
    expect(() => scrubberPayload(syntheticTrace(mdm), { layers: [9] })).toThrow(SettingsError);
  });

  it("bundles payload, the temporal view drawn by the one figure renderer (protocol/draw.ts) and a one-line summary", () => {
    const t = syntheticTrace(mdm);
    const b = scrubber(t).toMimeBundle();
    expect(Object.keys(b).sort()).toEqual([MIME_SCRUBBER, "image/svg+xml", "text/plain"].sort());
    const svg = String(b["image/svg+xml"]);
    // the same drawing as a figure description of the temporal view (one heat panel per run)
    expect(svg).toBe(drawFigure(scrubberDescription(scrubber(t).payload), { width: 800, raster: pngRaster }));
    expect(svg).toContain(">denoising step</text>");
    expect(svg).toContain("<title>denoising step 0 · key position (token) p0:");
    expect(svg).toContain("synthetic-mdm · MDM · layer 3, mean over heads");
    // a long run is one raster: steps × positions, each cell a whole number of pixels
    const big = String(scrubber(syntheticTrace({ ...mdm, genLength: 150, steps: 20 })).toMimeBundle()["image/svg+xml"]);
    const m = /href="data:image\/png;base64,([^"]+)"/.exec(big);
    const png = Buffer.from(m![1], "base64");
    expect(png.subarray(1, 4).toString("ascii")).toBe("PNG");
    expect(png.readUInt32BE(16) % 156).toBe(0);
    expect(png.readUInt32BE(20) % 20).toBe(0);
    expect(b["text/plain"]).toMatch(/^Attention scrubber — synthetic-mdm \(MDM\): 8 steps × 4 layers × 14 tokens/);
    expect(b["text/plain"]).not.toMatch(/\n/);
  });
});

describe("encodePng", () => {
  it("writes valid chunks (CRC checked independently) and the pixels back", () => {
    const rgb = Uint8Array.from({ length: 3 * 4 * 2 }, (_, i) => (i * 37) & 255);
    const png = encodePng(4, 2, rgb);
    // Walk chunks, verify CRC-32 with zlib's crc32 when available, else ours against a known value.
    let o = 8;
    let idat = Buffer.alloc(0);
    while (o < png.length) {
      const len = png.readUInt32BE(o);
      const type = png.subarray(o + 4, o + 8).toString("ascii");
      const body = png.subarray(o + 8, o + 8 + len);
      const crc = png.readUInt32BE(o + 8 + len);
      expect((crc32(png.subarray(o + 4, o + 8 + len)) ^ 0xffffffff) >>> 0).toBe(crc);
      if (type === "IDAT") idat = Buffer.concat([idat, body]);
      o += 12 + len;
    }
    const raw = inflateSync(idat);
    expect(raw.length).toBe(2 * (1 + 12));
    expect(Array.from(raw.subarray(1, 13))).toEqual(Array.from(rgb.subarray(0, 12)));
    // CRC-32 of "123456789" is 0xCBF43926 (the standard check value).
    expect((crc32(Buffer.from("123456789")) ^ 0xffffffff) >>> 0).toBe(0xcbf43926);
  });
});
