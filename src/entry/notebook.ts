/**
 * `floatscope/notebook`: What the figure notebooks share: settings per tier, model lookup, QA decoding, which probes to view.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export {
  findModels,
  modelsNote,
  REAL_MODEL_NAMES,
  REAL_BASE_MODEL_NAMES,
  REAL_MODELS_DIR,
  HOW_TO_GET_MODELS,
  MODEL_MISSING_MARK,
  NO_MODEL_MARK,
} from "../notebook/models.js";
export type { FoundModels, ModelFolder, MissingModel } from "../notebook/models.js";
export { notebookSettings, loadQaSet, decodeQa, decodeQaWith, evaluateQa, paperRegions } from "../notebook/notebook.js";
export { decodePaperSettings, PAPER_ORDERS, PAPER_TOKENS } from "../notebook/paper-setting.js";
export type { PaperSettingRun, PaperSettingOptions } from "../notebook/paper-setting.js";
export { notebookEnv } from "../notebook/environment.js";
export type { NotebookEnv } from "../notebook/environment.js";
export { viewProbes, VIEW_PROBE_BUDGET_BYTES } from "../notebook/view-probes.js";
export type { ViewProbesSetting, ViewProbeDecision, ViewProbeRun } from "../notebook/view-probes.js";
export type {
  NotebookSettings,
  NotebookSettingsOptions,
  QaSet,
  QaContext,
  DecodeQaOptions,
  DecodedModel,
  Device,
} from "../notebook/notebook.js";
// one prompt decoded on several models, side by side in the scrubber (src/compare.ts)
export { compare } from "../compare.js";
export type { CompareOptions, Comparison, PassageInput, LayerChoice } from "../compare.js";
