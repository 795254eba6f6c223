/**
 * `floatscope/figures`: Figures: plain JSON specs, the one SVG renderer, PNG/SVG saving, colormaps.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export { heatmap, heatmapFigure, renderHeatmapSvg, describeHeatmap } from "../figures/heatmap.js";
export type { HeatmapInput } from "../figures/heatmap.js";
export type { HeatmapSpec } from "../protocol/heatmap.js";
export { FIGURE_KINDS, describeFigure } from "../figures/registry.js";
export { drawFigure } from "../protocol/draw.js";
export type { FigureDescription, Panel, HeatPanel, LinePanel, BarPanel, LegendEntry } from "../protocol/figure.js";
export { save, figureSvg } from "../figures/save.js";
export type { SaveOptions, SavedFigure } from "../figures/save.js";
export { exportStem } from "../protocol/export-names.js";
export { absorptionFigure } from "../figures/absorption.js";
export { qkFigure } from "../figures/qk.js";
export { retrievalFigure } from "../figures/retrieval.js";
export { rolloutFigure } from "../figures/rollout.js";
export { driftFigure } from "../figures/drift.js";
export { frontierFigure } from "../figures/frontier.js";
export { tokenTypesFigure } from "../figures/token-types.js";
export { distractorFigure } from "../figures/distractor.js";
export { COLORMAPS, colorAt } from "../figures/colormap.js";
export type { Colormap } from "../figures/colormap.js";
export { escapeMarkup } from "../figures/svg.js";
// token text as readers see it (byte-level BPE / SentencePiece markers decoded)
export { displayToken, displayTokens } from "../protocol/token-text.js";
export type { TokenizerKind } from "../protocol/token-text.js";
export {
  MIME_SCRUBBER,
  MIME_FIGURE,
  FLOATSCOPE_MIME_TYPES,
  DEFAULT_PAYLOAD_CAP_BYTES,
  encodeArray,
  decodeArray,
  decodeInt32,
  describeSubsampling,
  payloadSize,
  PayloadError,
} from "../protocol/payloads.js";
export type {
  EncodedArray,
  EncodeOptions,
  PayloadDType,
  SubsampleNote,
  PayloadBase,
  ScrubberPayload,
  ScrubberRun,
  ScrubberMap,
  FloatscopePayload,
} from "../protocol/payloads.js";
export { scrubber, scrubberPayload, describeScrubber, ScrubberFigure } from "../figures/scrubber.js";
export type { ScrubberOptions } from "../figures/scrubber.js";
export { distractorPayload } from "../figures/distractor-payload.js";
export type { DistractorOptions } from "../figures/distractor-payload.js";
