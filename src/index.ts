/**
 * floatscope — the library's main entry (`import { … } from "floatscope"`): what the notebooks and the
 * README use, grouped by layer in pipeline order. Everything else is one subpath away, one per layer
 * (src/entry/*.ts, `exports` in src/package.json): `floatscope/checkpoint`, `floatscope/model`,
 * `floatscope/engine`, `floatscope/samplers`, `floatscope/trace`, `floatscope/qa`, `floatscope/grid`,
 * `floatscope/notebook`, `floatscope/analysis`, `floatscope/figures`, `floatscope/display`,
 * `floatscope/errors`. test/api/exports.txt lists the values exported here (≤ 150 names in all).
 */

// --- errors ------------------------------------------------------------------------------------
export { DisplayError, FloatscopeError, CheckpointError, SettingsError, TraceFormatError } from "./entry/errors.js";
export type { FloatscopeErrorDetails } from "./entry/errors.js";

// --- checkpoint --------------------------------------------------------------------------------
export { describeCheckpoint, loadTokenizer, openCheckpoint, scanWeights } from "./entry/checkpoint.js";

// --- model -------------------------------------------------------------------------------------
export {
  defaultPreset,
  isTinyWorldTokenizer,
  openModel,
  paradigmOf,
  resolveModelSpec,
  FAMILIES,
  openModelFiles,
  startEngine,
  paperPreset,
  tinyPreset,
} from "./entry/model.js";
export type { OpenModel, OpenModelOptions, ModelSpec, Family, Paradigm, EvalPreset } from "./entry/model.js";

// --- engine ------------------------------------------------------------------------------------
export { createEngine, DEFAULT_PROBES, referenceForward, estimateMemory } from "./entry/engine.js";
export type { Engine, EngineOptions, OnnxEngine, ProbeRequest } from "./entry/engine.js";

// --- samplers ----------------------------------------------------------------------------------
export { generate, resolveRunConfig, parsePolicy } from "./entry/samplers.js";
export type { RunConfig, GenerateOptions, GenerateResult, PromptInput, InterventionPolicy } from "./entry/samplers.js";

// --- trace -------------------------------------------------------------------------------------
export { describePartial, readTrace, readTraceHeader, traceSteps, writeTrace } from "./entry/trace.js";
export type { Trace, TraceStep, Region } from "./entry/trace.js";

// --- qa ----------------------------------------------------------------------------------------
export {
  NQ_ENV,
  buildContext,
  buildQaPrompt,
  loadQaJsonl,
  promptRegionsToTokens,
  runEval,
  summarizeResults,
  scoreAnswer,
  paperTable1,
  factSpans,
} from "./entry/qa.js";
export type { EvalResult, EvalSetting, QaRecord, RecordFact } from "./entry/qa.js";

// --- grid --------------------------------------------------------------------------------------
export { mergeShards, prepareGrid, resolveGrid, runShard, shardFilesIn } from "./entry/grid.js";
export type { GridRow, GridSpec } from "./entry/grid.js";

// --- notebook ----------------------------------------------------------------------------------
export {
  compare,
  decodeQa,
  decodePaperSettings,
  evaluateQa,
  findModels,
  loadQaSet,
  notebookEnv,
  notebookSettings,
} from "./entry/notebook.js";
export type { CompareOptions, Comparison, DecodedModel, PaperSettingRun } from "./entry/notebook.js";

// --- analysis ----------------------------------------------------------------------------------
export {
  absorptionRate,
  accuracyCurves,
  bootstrapCi,
  concatTables,
  curvesPayload,
  distractorDrop,
  longTable,
  mean,
  positionSpread,
  qkDecomposition,
  regionRollout,
  retrievalHeads,
  temporalDrift,
  tokenTypes,
  detectAnchors,
  getProbe,
  writeTable,
  anchorFrontier,
  poolFrontier,
} from "./entry/analysis.js";
export type { AnchorExclusion, AnchorOptions, AbsorptionResult, DriftResult } from "./entry/analysis.js";

// --- figures -----------------------------------------------------------------------------------
export {
  MIME_FIGURE,
  heatmap,
  scrubber,
  save,
  absorptionFigure,
  qkFigure,
  retrievalFigure,
  rolloutFigure,
  driftFigure,
  tokenTypesFigure,
  distractorFigure,
  frontierFigure,
  heatmapFigure,
  COLORMAPS,
  displayToken,
} from "./entry/figures.js";
export type { Colormap, HeatmapSpec, SaveOptions, TokenizerKind } from "./entry/figures.js";

// --- display -----------------------------------------------------------------------------------
export {
  FLOATSCOPE_MIME,
  buildClaims,
  collectFindings,
  captureDisplays,
  compareGroups,
  findings,
  findingsFileLine,
  findingsText,
  judgeClaims,
  markdown,
  meanFinding,
  newDisplay,
  progress,
  show,
  valueFinding,
  verdictsSideBySide,
  escapeMarkdown,
  readFindings,
} from "./entry/display.js";
export type { Finding, Measurement, MimeBundle, Displayable } from "./entry/display.js";

// --- the sink claim: first-token sink across steps, its findings and per-layer table (notebook 02) ----
export { firstTokenSink } from "./entry/analysis.js";
export { sinkFindings, sinkLayerTable } from "./entry/display.js";
