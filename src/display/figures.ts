/**
 * Figure specs → MIME bundles. A figure spec is plain JSON with a `kind`; each kind maps to one
 * function that returns our vendor type (the spec itself, for the widget), a static image
 * (SVG rendered in the kernel) and a one-line text/plain.
 *
 * Adding a figure kind (the spec an analysis returns, shown by `show(spec)`):
 * 1. its type and MIME name in `src/protocol/` — `payloads.ts` for a widget payload, `specs.ts` for an
 *    analysis spec (`MIME_<KIND>`, `application/vnd.floatscope.<kind>.v1+json`) — and the type in
 *    `ViewPayload`;
 * 2. its static image and text/plain in `src/figures/bundles.ts`: an entry in `VIEW_MIME` and a case in
 *    `bundleOf` (a renderer of its own in `src/figures/` when it needs one); FIGURE_FORMATTERS below
 *    then routes it with no change here;
 * 3. the widget: a renderer registered for the MIME type in `widgets/src/index.ts`.
 * A figure without a widget (only `heatmap` today) gets its own line in FIGURE_FORMATTERS instead.
 */
import { describeHeatmap, heatmap, renderHeatmapSvg } from "../figures/heatmap.js";
import type { HeatmapSpec } from "../protocol/heatmap.js";
import { FLOATSCOPE_MIME, type MimeBundle } from "./mime.js";
import { payloadBundle, VIEW_MIME } from "../figures/bundles.js";

/** Bundle for a heatmap spec. The spec is re-validated: hand-written JSON specs are allowed. */
export function heatmapBundle(input: HeatmapSpec): MimeBundle {
  const spec = heatmap(input);
  return {
    [FLOATSCOPE_MIME.heatmap]: spec,
    "image/svg+xml": renderHeatmapSvg(spec),
    "text/plain": describeHeatmap(spec),
  };
}

/** kind → bundle function. */
export const FIGURE_FORMATTERS: Record<string, (spec: never) => MimeBundle> = {
  heatmap: heatmapBundle,
  // Widget payloads and analysis specs (scrubber, qk, absorption, retrieval, rollout, distractor, drift, token-types).
  ...Object.fromEntries(Object.keys(VIEW_MIME).map((kind) => [kind, payloadBundle as (spec: never) => MimeBundle])),
};

/** The `kind` of a figure spec we know how to show, or null. */
export function figureKind(x: unknown): string | null {
  if (typeof x !== "object" || x === null) return null;
  const kind = (x as { kind?: unknown }).kind;
  return typeof kind === "string" && Object.prototype.hasOwnProperty.call(FIGURE_FORMATTERS, kind) ? kind : null;
}

/** Bundle for any known figure spec (call `figureKind` first). */
export function figureBundle(spec: { kind: string }): MimeBundle {
  return (FIGURE_FORMATTERS[spec.kind] as (s: unknown) => MimeBundle)(spec);
}
