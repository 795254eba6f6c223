/**
 * The one registry of figure kinds. `show(x)` and `save(x, file)` look `x.kind` up here:
 * - most kinds name the function of their module in `src/figures/<kind>.ts` that turns the
 *   analysis result into a `FigureDescription`; the kernel draws it (protocol/draw.ts) for the
 *   static image and sends the description itself under `MIME_FIGURE`, which the widget draws
 *   with the same function;
 * - the scrubber has an interactive widget of its own and builds its bundle itself.
 * Adding a figure is one module and one line here (docs/figures.md).
 */
import { MIME_FIGURE, MIME_SCRUBBER, decodeInt32, type ScrubberPayload } from "../protocol/payloads.js";
import type { FigureDescription } from "../protocol/figure.js";
import { drawFigure } from "../protocol/draw.js";
import { absorptionFigure } from "./absorption.js";
import { distractorFigure } from "./distractor.js";
import { driftFigure } from "./drift.js";
import { frontierFigure } from "./frontier.js";
import { heatmap, heatmapFigure } from "./heatmap.js";
import { qkFigure } from "./qk.js";
import { retrievalFigure } from "./retrieval.js";
import { rolloutFigure } from "./rollout.js";
import { tokenTypesFigure } from "./token-types.js";
import { describeScrubber } from "./scrubber.js";
import { scrubberSvg } from "./scrubber-svg.js";
import { pngRaster } from "./raster.js";
import { checkDescription } from "./check.js";

export interface FigureBundle {
  "text/plain": string;
  [mime: string]: unknown;
}

type Describe = (input: never) => FigureDescription;

export const FIGURE_KINDS: Record<string, { describe: Describe } | { bundle: (input: never) => FigureBundle }> = {
  absorption: { describe: absorptionFigure },
  qk: { describe: qkFigure },
  retrieval: { describe: retrievalFigure },
  rollout: { describe: rolloutFigure },
  drift: { describe: driftFigure },
  frontier: { describe: frontierFigure },
  "token-types": { describe: tokenTypesFigure },
  distractor: { describe: distractorFigure },
  // hand-written specs are re-validated by heatmap()
  heatmap: { describe: (s: never) => heatmapFigure(heatmap(s)) },
  // a description built elsewhere (or saved) is shown as it is, after a shape check
  figure: { describe: (d: never) => checkDescription(d) },
  scrubber: { bundle: (p: never) => scrubberBundle(p) },
};

/** The known kind of `x`, or null. */
export function figureKindOf(x: unknown): string | null {
  if (typeof x !== "object" || x === null) return null;
  const kind = (x as { kind?: unknown }).kind;
  return typeof kind === "string" && Object.prototype.hasOwnProperty.call(FIGURE_KINDS, kind) ? kind : null;
}

/** The figure description of `x` (any kind but the scrubber). */
export function describeFigure(x: { kind: string }): FigureDescription {
  const entry = FIGURE_KINDS[x.kind];
  if (!entry || !("describe" in entry)) throw new TypeError(`figure kind ${JSON.stringify(x.kind)} has no static description`);
  return (entry.describe as (i: unknown) => FigureDescription)(x);
}

/** Description → MIME bundle: the description for the widget, its SVG for everywhere else, one line of text. */
export function descriptionBundle(d: FigureDescription): FigureBundle {
  return { [MIME_FIGURE]: d, "image/svg+xml": drawFigure(d, { raster: pngRaster }), "text/plain": d.text + warningSuffix(d) };
}

function warningSuffix(d: FigureDescription): string {
  return d.warnings.length ? ` (${d.warnings.length} warning${d.warnings.length > 1 ? "s" : ""}: ${d.warnings.join("; ")})` : "";
}

/** The MIME bundle of any registered kind. */
export function kindBundle(x: { kind: string }): FigureBundle {
  const entry = FIGURE_KINDS[x.kind];
  if (entry && "bundle" in entry) return (entry.bundle as (i: unknown) => FigureBundle)(x);
  return descriptionBundle(describeFigure(x));
}

function scrubberBundle(p: ScrubberPayload): FigureBundle {
  decodeInt32(p.runs[0].anchors, "anchors"); // validate before drawing
  return { [MIME_SCRUBBER]: p, "image/svg+xml": scrubberSvg(p), "text/plain": describeScrubber(p) };
}
