/**
 * Static fallback of the scrubber: the temporal view (steps × positions, step 0 at the top) of
 * each run's last kept layer, head-mean, in the paper's Purples with anchors in orange, one panel
 * per run. It is a figure description like every other figure, drawn by the one renderer
 * (protocol/draw.ts), from the payload itself, so the picture GitHub shows is the data the widget
 * shows.
 */
import { decodeArray, decodeInt32, type ScrubberPayload, type ScrubberRun } from "../protocol/payloads.js";
import { drawFigure } from "../protocol/draw.js";
import { rgbAt } from "../protocol/colormap.js";
import type { FigureDescription, HeatPanel } from "../protocol/figure.js";
import { displayTokens } from "../protocol/token-text.js";
import { describe, extent } from "./describe.js";
import { pngRaster } from "./raster.js";

const ANCHOR = "#ff7f0e";

/** Colour of t ∈ [0, 1] in the Purples map, as "#rrggbb". */
export function purpleHex(t: number): string {
  return (
    "#" +
    rgbAt("purples", t)
      .map((c) => c.toString(16).padStart(2, "0"))
      .join("")
  );
}

/** "smollm2-135m-dream-world · real-base · MDM" (older payloads: their label). */
export function runName(run: ScrubberRun): string {
  return run.model ? [run.model, run.tier, run.paradigm ?? (run.causal ? "ARM" : "MDM")].filter(Boolean).join(" · ") : run.label;
}

/** One run's temporal view at its last kept layer, head mean, anchors marked. */
function temporalPanel(run: ScrubberRun): HeatPanel {
  const [S, L, N] = run.received.shape;
  const all = decodeArray(run.received, "received");
  const li = L - 1;
  const values: (number | null)[] = new Array<number | null>(S * N);
  for (let s = 0; s < S; s++)
    for (let j = 0; j < N; j++) {
      const v = all[(s * L + li) * N + j];
      values[s * N + j] = Number.isFinite(v) ? v : null;
    }
  const cells: number[] = [];
  for (const flat of decodeInt32(run.anchors, "anchors")) {
    const j = flat % N;
    const sl = (flat - j) / N;
    if (sl % L === li) cells.push(Math.floor(sl / L) * N + j);
  }
  const [, hi] = extent(values);
  return {
    type: "heat",
    title: `${runName(run)} · layer ${run.layers[li]}, mean over heads`,
    rows: S,
    cols: N,
    values,
    scale: { colormap: "purples", domain: [0, hi > 0 ? hi : 1], diverging: false },
    valueLabel: "attention received",
    x: { title: "key position (token)", labels: displayTokens(run.tokens) },
    y: { title: "denoising step", labels: run.steps.map(String) },
    cellMarks: { cells: cells.sort((a, b) => a - b), colour: ANCHOR },
  };
}

/** The scrubber's static image as a figure description (one temporal panel per run). */
export function scrubberDescription(p: ScrubberPayload): FigureDescription {
  const panels = p.runs.map(temporalPanel);
  return describe("scrubber", {
    title: p.title ?? "Attention received over denoising steps",
    subtitle: [`anchor rule: ${p.runs[0]?.anchorRule ?? "—"}`],
    panels,
    columns: 1,
    legend: [
      { label: "floating anchor", colour: ANCHOR, mark: "swatch" },
      { label: "position absent at that step", colour: "#e6e6e6", mark: "swatch" },
    ],
    notes: [
      "static image: each run's last layer, mean over heads; open in JupyterLab to scrub steps, layers and heads",
      ...new Set(p.runs.flatMap((r) => (r.missing ?? []).map((m) => m.note))),
    ],
    warnings: p.warnings ?? [],
    exportName: { models: p.runs.map((r) => r.model ?? r.label), layer: p.runs.map((r) => r.layers[r.layers.length - 1]) },
    text: `Attention scrubber — ${p.runs.map((r) => `${runName(r)}: ${r.steps.length} steps × ${r.tokens.length} tokens`).join("; ")}`,
  });
}

/** The static fallback of the scrubber, drawn by protocol/draw.ts (the one renderer). */
export function scrubberSvg(p: ScrubberPayload, maxWidth = 800): string {
  return drawFigure(scrubberDescription(p), { width: maxWidth, raster: pngRaster });
}
