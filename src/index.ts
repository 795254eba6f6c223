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
  GridError,
  DisplayError,
  RuntimeError,
  keyword,
} from "./util/errors.js";
export type { FloatscopeErrorDetails } from "./util/errors.js";

// --- checkpoint: files → validated index, config, tokenizer ---------------------------------------
export { openCheckpoint, readTokenizerFiles } from "./checkpoint/checkpoint.js";
export { openGgufCheckpoint, type GgufCheckpoint } from "./checkpoint/gguf/open.js";
export { readGgufHeader, type GgufHeader, type GgufTensorEntry, type GgufEntry } from "./checkpoint/gguf/reader.js";
export { dequantize as dequantizeGgml } from "./checkpoint/gguf/dequant.js";
export {
  readJsonObject,
  requireInt,
  optionalInt,
  requireNumber,
  optionalNumber,
  requireString,
  optionalString,
  optionalBool,
  optionalObject,
  optionalIntList,
} from "./checkpoint/config.js";
export type { JsonObject, AccessorOptions } from "./checkpoint/config.js";
export {
  readSafetensorsHeader,
  readTensorBytes,
  readTensorF32,
  streamTensorBytes,
  writeSafetensors,
  encodeSafetensors,
  f16ToF32,
  DTYPE_BYTES,
} from "./checkpoint/safetensors.js";
export type { SafetensorsHeader, TensorToWrite } from "./checkpoint/safetensors.js";
export { loadTokenizer } from "./checkpoint/tokenizer.js";
export type { LoadedTokenizer, TokenizerEncoding, TokenizerSpecHints } from "./checkpoint/tokenizer.js";
export { charSpanToTokenSpan, tokenSpanToCharSpan } from "./checkpoint/spans.js";
export type { TokenSpan } from "./checkpoint/spans.js";
export { addsBosFromFiles, templatePrefixTokens } from "./checkpoint/special-tokens.js";
export type { Checkpoint, TensorInfo, TokenizerFiles, SafetensorsDType, GgmlEncoding } from "./checkpoint/types.js";
export type { TextTokenizer, Encoding, CharSpan, ChatMessage } from "./runtime/types.js";

// --- graph: family adapters, spec, weight scan, description ----------------------------------------
export { resolveModelSpec, detectFamily, specTensorNames, ADAPTERS, LIMITS } from "./graph/adapters/index.js";
export type { FamilyAdapter, BlockNames } from "./graph/adapters/index.js";
export { FAMILIES } from "./graph/spec.js";
export type { ModelSpec, Family, BlockWeights, RopeSettings } from "./graph/spec.js";
export { scanWeights, countNonFinite, assertFiniteWeights } from "./graph/scan-weights.js";
export type { ScanResult, ScanOptions, ScanProgress, NonFiniteTensor } from "./graph/scan-weights.js";
export { describeCheckpoint } from "./graph/describe.js";
export type { CheckpointDescription } from "./graph/describe.js";

// --- graph + runtime: the ONNX model engine ---------------------------------------------------
export { buildModelGraph, F32_MIN } from "./graph/model.js";
export type { BuildOptions, BuiltGraph } from "./graph/model.js";
export { probeOutputs, validateProbeRequest } from "./graph/probes.js";
export { PROBES, PROBE_AXES, DEFAULT_PROBES, REQUEST_KEYS, probeInfo, probeName, parseProbeName } from "./util/probes.js";
export type { ProbeRequest, ProbeInfo, ProbeKind, RequestKey, CostClass, Axis } from "./util/probes.js";
export type { ProbeOutput } from "./graph/probes.js";
export { ropeInvFreq, positionIdsFromMask } from "./graph/rope.js";
export { GraphBuilder } from "./graph/onnx/builder.js";
export { encodeModel } from "./graph/onnx/proto.js";
export { createEngine } from "./runtime/engine.js";
export type { EngineOptions, EngineSource, OnnxEngine } from "./runtime/engine.js";
export { estimateMemory, defaultMemoryBudget, formatBytes } from "./runtime/memory.js";
export type { MemoryEstimate, MemoryEstimateOptions } from "./runtime/memory.js";
export { cudaProviderInstalled, CUDA_INSTALL_HINT } from "./runtime/session.js";
export type { DeviceRequest } from "./runtime/session.js";
export type { Engine, ForwardInput, ForwardOutput, AttentionIntervention } from "./runtime/types.js";
export { INTERVENTION_INPUTS } from "./graph/interventions.js";
export { referenceForward, probesFromAttention } from "./reference/forward.js";
export type { ReferenceInput, ReferenceOutput } from "./reference/forward.js";

// --- samplers: LLaDA / Dream / ARM over one step loop, seeded, recording traces ---------------------
export { generate, prepareRun, STRATEGIES } from "./samplers/generate.js";
export type { GenerateOptions, GenerateResult, PromptInput } from "./samplers/generate.js";
export { resolveRunConfig, SAMPLERS, ALGS, SAMPLER_DEFAULTS, DEFAULT_SAMPLER } from "./samplers/config.js";
export type { RunConfig, SamplerKind } from "./samplers/config.js";
export { Rng } from "./samplers/rng.js";
export { lladaTransferCounts, dreamTimesteps, dreamTransferCount, dreamOriginProbability } from "./samplers/schedule.js";
export { runSteps, finalPass } from "./samplers/loop.js";
export type { Strategy, RowState, Transfer, LoopOptions, LoopResult, FinalPass } from "./samplers/loop.js";
export { TraceRecorder } from "./samplers/recorder.js";
export {
  parsePolicy,
  resolvePolicy,
  canonicalName,
  policyLabel,
  policyProbes,
  makeIntervener,
  batchIntervention,
  Intervener,
  POLICY_KINDS,
} from "./samplers/interventions.js";
export type { InterventionPolicy, CustomPolicy, PolicyInput, PolicyPass, PolicyKind, ResolvedPolicy } from "./samplers/interventions.js";

// --- trace: the .fstrace file (streaming writer, validating reader) -------------------------------
export { TRACE_FORMAT_VERSION } from "./trace/types.js";
export type { Trace, TraceStep, TracePrompt, TraceModelInfo, Region, PassIntervention, TraceIntervention } from "./trace/types.js";
export { readTrace, decodeTrace, readTraceHeader, traceSteps } from "./trace/reader.js";
export { describePartial } from "./trace/partial.js";
export type { PartialReport } from "./trace/partial.js";
export type { ReadTraceOptions, TraceMeta } from "./trace/reader.js";
export { TraceWriter, writeTrace, encodeTrace } from "./trace/writer.js";
export type { TraceHeader, TraceEnd } from "./trace/writer.js";
export { estimateTraceBytes, probeBytesPerPass } from "./trace/size.js";
export type { TraceDims } from "./trace/size.js";

// --- eval: QA harness (datasets, settings, prompts, metrics, runner) ----------------------------
export {
  readQaJsonl,
  loadQaJsonl,
  recordId,
  goldPassageIndex,
  DatasetError,
  NQ_ENV,
  newDataReport,
  describeDataReport,
  SUSPICIOUS_KINDS,
} from "./eval/datasets.js";
export type { QaRecord, QaPassage, ReadQaOptions, ReadProgress, QaDataReport, SuspiciousKind } from "./eval/datasets.js";
export { buildContext, DistractorPool, settingLabel, validateSetting, goldPositionSweep } from "./eval/contexts.js";
export type { EvalSetting, GoldPosition, DistractorSource, BuiltContext } from "./eval/contexts.js";
export {
  buildQaPrompt,
  promptRegionsToTokens,
  PROMPT_FORMATS,
  PAPER_FORMAT_OF_FAMILY,
  LLADA_HEADER,
  CHAT_HEADER,
  CHAT_EXAMPLES,
  NO_CONTEXT_PASSAGE,
} from "./eval/prompts.js";
export type { PromptFormat, QaPrompt, QaPromptInput, PromptRegion, BuildPromptOptions } from "./eval/prompts.js";
export { normalizeAnswer, substringAccuracy, tokenF1, exactMatch, scoreAnswer, extractAnswer, ANSWER_EXTRACTIONS } from "./eval/metrics.js";
export type { QaScores, AnswerExtraction } from "./eval/metrics.js";
export { runEval, summarizeResults, readResults, readDoneKeys, ResultsFileError } from "./eval/runner.js";
export type { EvalOptions, EvalResult, EvalRun, EvalProgress } from "./eval/runner.js";
export { defaultPreset, tinyPreset, paperPreset, defaultPromptFormat, isTinyWorldTokenizer } from "./eval/presets.js";
export type { EvalPreset } from "./eval/presets.js";
export { openModel, openModelFiles, startEngine, openEvalModel } from "./eval/open.js";
export {
  findModels,
  modelsNote,
  canonicalFamily,
  FAMILY_ALIASES,
  TINY_MODEL_NAMES,
  REAL_MODEL_NAMES,
  REAL_BASE_MODEL_NAMES,
  REAL_MODELS_DIR,
  HOW_TO_GET_MODELS,
  MODEL_MISSING_MARK,
  NO_MODEL_MARK,
} from "./eval/models.js";
export type { FoundModels, ModelFolder, MissingModel } from "./eval/models.js";
export type { OpenModel, OpenModelOptions, ModelFiles, ModelFilesOptions, EvalModel } from "./eval/open.js";
export { notebookSettings, loadQaSet, decodeQa, decodeQaWith, evaluateQa, paperRegions } from "./eval/notebook.js";
export { viewProbes, VIEW_PROBE_BUDGET_BYTES } from "./eval/view-probes.js";
export type { ViewProbesSetting, ViewProbeDecision, ViewProbeRun } from "./eval/view-probes.js";
export type {
  NotebookSettings,
  NotebookSettingsOptions,
  QaSet,
  QaContext,
  DecodeQaOptions,
  DecodedModel,
  Device,
} from "./eval/notebook.js";
export { PAPER_TABLE1, paperTable1, TABLE1_DATASETS } from "./eval/paper-table1.js";
export type { Table1Row, Table1Dataset } from "./eval/paper-table1.js";
export { resolveGrid, readGrid, expandGrid, expandSetting, parseShard, shardUnits } from "./eval/grid.js";
export type { GridSpec, GridSetting, GridModel, GridDataset, GridGoldPosition, ResolvedGrid, WorkUnit } from "./eval/grid.js";
export {
  prepareGrid,
  runShard,
  readShardFile,
  shardFileName,
  fingerprintModel,
  fingerprintFile,
  floatscopeVersion,
  SHARD_FORMAT,
} from "./eval/shard.js";
export type {
  PreparedGrid,
  ShardManifest,
  ManifestKey,
  ShardRow,
  ShardFile,
  RunShardOptions,
  ShardRunSummary,
  ShardProgress,
} from "./eval/shard.js";
export { mergeShards, collectShards, shardFilesIn, summarizeProgress, describeMissing, GRID_COLUMNS, GRID_TYPES } from "./eval/merge.js";
export type { GridRow, GridProgress, MergeResult, StatusSummary, UnitProgress } from "./eval/merge.js";
export { writeTable, encodeTable, formatFromPath, TABLE_FORMATS } from "./util/table-export.js";
export type { TableFormat, TableOptions, ColumnKind } from "./util/table-export.js";

// --- analysis: the paper's statistics as pure functions over traces → arquero tables + figure specs --
export {
  ANCHOR_RULES,
  ANCHOR_EXCLUSIONS,
  resolveRule,
  upstreamRule,
  detectAnchors,
  adjustReceived,
  eligibleKeys,
  topKIndices,
  meanStd,
  passAnchors,
  passReceived,
  anchorContext,
  describeRule,
} from "./analysis/anchors.js";
export type { AnchorRule, AnchorExclusion, AnchorOptions, AnchorContext, ResolvedRule, UpstreamAnalysis } from "./analysis/anchors.js";
export { absorptionRate, absorptionOf, summarizeOverSamples } from "./analysis/absorption.js";
export type { AbsorptionOptions, AbsorptionResult } from "./analysis/absorption.js";
export { temporalDrift, trackAnchors, stackRows, meanVectors } from "./analysis/drift.js";
export { anchorFrontier, poolFrontier, type FactSpan, type FrontierOptions, type FrontierResult } from "./analysis/frontier.js";
export type { DriftOptions, DriftResult, AnchorTrack } from "./analysis/drift.js";
export { qkDecomposition, qkParts, kvHeadOf, floatingAdvantage, headRows, meanHeadRows } from "./analysis/qk-decomposition.js";
export type { QkOptions, QkResult, QkParts } from "./analysis/qk-decomposition.js";
export { retrievalHeads, evidenceSpan, charsToTokens, copyHits, rouge1Recall } from "./analysis/retrieval-heads.js";
export type { RetrievalOptions, RetrievalResult, Evidence } from "./analysis/retrieval-heads.js";
export {
  regionRollout,
  rollout,
  poolRegions,
  rowNormalize,
  stationary,
  offsetsLayout,
  upstreamLayout,
  regionMaps,
} from "./analysis/rollout.js";
export type { RolloutOptions, RolloutResult, RegionLayout } from "./analysis/rollout.js";
export { tokenTypes, classifyToken, pieceText, layerBands, isStructural, TOKEN_TYPES } from "./analysis/token-types.js";
export type { TokenTypeOptions, TokenTypeResult, TokenType, SpecialIds } from "./analysis/token-types.js";
export { getProbe, probeLayers, resolveLayers } from "./analysis/probes-access.js";
export type { PassRef } from "./analysis/probes-access.js";
export { longTable, tensorTable, concatTables } from "./analysis/tables.js";
export {
  accuracyCurves,
  bootstrap,
  bootstrapMean,
  distractorDrop,
  positionSpread,
  curvesPayload,
  quantile,
} from "./analysis/robustness.js";
export type {
  QaRow,
  Interval,
  AccuracyCurve,
  CurvePoint,
  RobustnessAxis,
  BootstrapOptions as RobustnessBootstrapOptions,
} from "./analysis/robustness.js";
export type {
  AbsorptionSpec,
  QKSpec,
  QkSummarySpec,
  QkLayerMaps,
  RetrievalSpec,
  RolloutSpec,
  DriftSpec,
  TokenTypesSpec,
  DistractorSpec,
  FrontierSpec,
  AnalysisSpec,
  Grid,
} from "./analysis/figure-data.js";

// --- figures (plain JSON specs + static SVG fallbacks) ------------------------------------------
export { heatmap, heatmapFigure, renderHeatmapSvg, describeHeatmap } from "./figures/heatmap.js";
export type { HeatmapInput } from "./figures/heatmap.js";
export type { HeatmapSpec } from "./protocol/heatmap.js";
// one figure description per figure, drawn by one renderer in the kernel and in the widget
export { FIGURE_KINDS, describeFigure } from "./figures/registry.js";
export { drawFigure } from "./protocol/draw.js";
export type { FigureDescription, Panel, HeatPanel, LinePanel, BarPanel, LegendEntry } from "./protocol/figure.js";
export { save, figureSvg } from "./figures/save.js";
export type { SaveOptions, SavedFigure } from "./figures/save.js";
export { exportStem } from "./protocol/export-names.js";
export { absorptionFigure } from "./figures/absorption.js";
export { qkFigure } from "./figures/qk.js";
export { retrievalFigure } from "./figures/retrieval.js";
export { rolloutFigure } from "./figures/rollout.js";
export { driftFigure } from "./figures/drift.js";
export { frontierFigure } from "./figures/frontier.js";
export { tokenTypesFigure } from "./figures/token-types.js";
export { distractorFigure } from "./figures/distractor.js";
export { COLORMAPS, colorAt } from "./figures/colormap.js";
export type { Colormap } from "./figures/colormap.js";
export { escapeMarkup } from "./figures/svg.js";
export { escapeMarkdown } from "./display/escape.js"; // names into Markdown you write (markdown(`…`))
// widget payloads (kernel ↔ JupyterLab contract), the attention-step scrubber, static fallbacks
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
} from "./protocol/payloads.js";
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
} from "./protocol/payloads.js";
export { scrubber, scrubberPayload, describeScrubber, ScrubberFigure } from "./figures/scrubber.js";
// one prompt decoded on several models, side by side in the scrubber (src/compare.ts)
export { compare } from "./compare.js";
export type { CompareOptions, Comparison, PassageInput, LayerChoice } from "./compare.js";
// token text as readers see it (byte-level BPE / SentencePiece markers decoded)
export { displayToken } from "./protocol/token-text.js";
export type { TokenizerKind } from "./protocol/token-text.js";
export type { ScrubberOptions } from "./figures/scrubber.js";
export { distractorPayload } from "./figures/distractor-payload.js";
export type { DistractorOptions } from "./figures/distractor-payload.js";

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
export { findings, readFindings, CLAIM_IDS, MIME_FINDINGS } from "./display/findings.js";
export {
  meanFinding,
  valueFinding,
  compareGroups,
  findingsText,
  markdown,
  formatNumber,
  PARADIGM_OF_FAMILY,
} from "./display/findings-text.js";
export type { FindingBase, FindingsTextOptions, Measurement } from "./display/findings-text.js";
export { mean, bootstrapCi } from "./util/stats.js";
export type { BootstrapOptions } from "./util/stats.js";
export type { Finding, FindingsRecord, ClaimId } from "./display/findings.js";
export { buildClaims, judgeClaims, collectFindings, formatClaimNumber, CLAIMS, PARADIGM_OF } from "./display/claims.js";
export type { ClaimResult, ClaimText, Verdict, SourcedFinding, Paradigm } from "./display/claims.js";
