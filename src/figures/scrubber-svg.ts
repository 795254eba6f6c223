/**
 * Static fallback of the scrubber: the temporal view (steps × positions, step 0 at the top) of
 * each run's last kept layer, head-mean, in the paper's Purples with anchors in orange, runs
 * stacked, framed with tokens and steps (framed.ts). Rendered in the kernel from the payload
 * itself, so the picture GitHub shows is the data the widget shows.
 */
import { decodeArray, decodeInt32, type ScrubberPayload, type ScrubberRun } from "../protocol/payloads.js";
import { framedRasterSvg } from "./framed.js";
import { rgbAt } from "../protocol/colormap.js";
import { encodePng } from "./png.js";

/** The paper's temporal-drift colour map (stops declared once in protocol/colormap.ts). */
function purple(t: number): [number, number, number] {
  return rgbAt("purples", t);
}

const ANCHOR: [number, number, number] = [255, 127, 14];
const MISSING: [number, number, number] = [235, 235, 235];

/** Colour of t ∈ [0, 1] in the Purples map, as "#rrggbb" (for the frame's colour bar). */
export function purpleHex(t: number): string {
  return (
    "#" +
    purple(t)
      .map((c) => c.toString(16).padStart(2, "0"))
      .join("")
  );
}

interface TemporalPanel {
  run: ScrubberRun;
  S: number;
  N: number;
  layer: number;
  heat: Float32Array;
  anchor: Uint8Array;
  min: number;
  max: number;
}

/** Each run's last kept layer: head-mean attention received per (step, key), and its anchors. */
function temporalPanels(p: ScrubberPayload): TemporalPanel[] {
  return p.runs.map((run) => {
    const [S, L, N] = run.received.shape;
    const all = decodeArray(run.received, "received");
    const li = L - 1;
    const heat = new Float32Array(S * N);
    let min = Infinity;
    let max = -Infinity;
    for (let s = 0; s < S; s++) {
      for (let j = 0; j < N; j++) {
        const v = all[(s * L + li) * N + j];
        heat[s * N + j] = v;
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
    const anchor = new Uint8Array(S * N);
    for (const flat of decodeInt32(run.anchors, "anchors")) {
      const j = flat % N;
      const sl = (flat - j) / N;
      if (sl % L === li) anchor[Math.floor(sl / L) * N + j] = 1;
    }
    return { run, S, N, layer: run.layers[li], heat, anchor, min, max };
  });
}

const rowsOf = (S: number) => Math.max(2, Math.floor(240 / S));

/** Paint one panel, `width` px wide, into rgb. */
function paintTemporal(q: TemporalPanel, width: number, rgb: Uint8Array): void {
  const rh = rowsOf(q.S);
  const span = q.max > q.min ? q.max - q.min : 1;
  for (let y = 0; y < q.S * rh; y++) {
    const s = Math.floor(y / rh);
    for (let x = 0; x < width; x++) {
      // Columns: nearest position; when downscaling, an anchor anywhere in the span wins.
      const j0 = Math.floor((x * q.N) / width);
      const j1 = Math.max(j0 + 1, Math.floor(((x + 1) * q.N) / width));
      let c: [number, number, number] | null = null;
      for (let j = j0; j < j1 && j < q.N; j++) if (q.anchor[s * q.N + j]) c = ANCHOR;
      if (!c) {
        const v = q.heat[s * q.N + j0];
        c = Number.isNaN(v) ? MISSING : purple((v - q.min) / span);
      }
      const o = (y * width + x) * 3;
      rgb[o] = c[0];
      rgb[o + 1] = c[1];
      rgb[o + 2] = c[2];
    }
  }
}

const panelWidth = (q: TemporalPanel, maxWidth: number) => Math.min(maxWidth, q.N * Math.max(1, Math.floor(800 / q.N)));

/**
 * The static fallback of the scrubber: each run's temporal view (steps down, positions across, last
 * kept layer, head mean) framed with its tokens, step numbers and a colour bar (framed.ts).
 */
export function scrubberSvg(p: ScrubberPayload, maxWidth = 800): string {
  const panels = temporalPanels(p).map((q) => {
    const width = panelWidth(q, maxWidth);
    const height = q.S * rowsOf(q.S);
    const rgb = new Uint8Array(width * height * 3).fill(255);
    paintTemporal(q, width, rgb);
    return {
      png: encodePng(width, height, rgb),
      width,
      height,
      cols: q.N,
      rows: q.S,
      title: `${q.run.label} · layer ${q.layer}, mean over heads`,
      xLabels: q.run.tokens,
      yLabels: q.run.steps.map((s) => `step ${s}`),
      min: q.min,
      max: q.max,
    };
  });
  return framedRasterSvg({
    title: p.title ?? "Attention received over denoising steps",
    panels,
    direction: "column",
    xTitle: "key position (token)",
    yTitle: "denoising step",
    colour: purpleHex,
    valueLabel: panels.length > 1 ? "1st panel" : "received",
    note: [
      `orange = floating anchor (${p.runs[0]?.anchorRule ?? "anchor rule"}); open in JupyterLab to scrub layers and heads`,
      ...new Set(p.runs.flatMap((r) => (r.missing ?? []).map((m) => m.note))),
    ].join(" · "),
  });
}
