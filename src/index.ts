/**
 * floatscope — the library's public entry point (`import { … } from "floatscope"`).
 *
 * Every export is listed by name and grouped by layer, in pipeline order
 * (checkpoint → graph → runtime → samplers → trace → analysis → figures → display), so a change
 * to the public surface is a visible diff here. Add new exports to their layer's block.
 */

// --- errors -----------------------------------------------------------------------------------
export {
  FloatscopeError,
  CheckpointError,
  UnsupportedArchitectureError,
  BudgetError,
  ProbeMissingError,
  TraceFormatError,
  SettingsError,
  DisplayError,
  RuntimeError,
  keyword,
} from "./util/errors.js";
export type { FloatscopeErrorDetails } from "./util/errors.js";

// --- figures (plain JSON specs + static SVG fallbacks) ------------------------------------------
export { heatmap, renderHeatmapSvg, describeHeatmap } from "./figures/heatmap.js";
export type { HeatmapSpec, HeatmapInput } from "./figures/heatmap.js";
export { COLORMAPS, colorAt } from "./figures/colormap.js";
export type { Colormap } from "./figures/colormap.js";
export { escapeMarkup } from "./figures/svg.js";

// --- display (Jupyter MIME bundles, progress) ---------------------------------------------------
export { show, newDisplay } from "./display/show.js";
export type { DisplayHandle, DisplayMetadata, ShowOptions } from "./display/show.js";
export { progress } from "./display/progress.js";
export type { Progress, ProgressOptions } from "./display/progress.js";
export { mimeBundleOf, registerFormatter } from "./display/format.js";
export type { Formatter } from "./display/format.js";
export { FLOATSCOPE_MIME, STANDARD_MIME, isDisplayable } from "./display/mime.js";
export type { Displayable, MimeBundle } from "./display/mime.js";
export { setDisplaySink, captureDisplays, inKernel } from "./display/sink.js";
export type { DisplayCapture, DisplayMessage, DisplaySink } from "./display/sink.js";
