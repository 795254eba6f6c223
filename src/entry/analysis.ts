/**
 * `floatscope/analysis`: The paper's statistics as pure functions over traces → arquero tables and figure data; bootstrap and table export.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export { writeTable, encodeTable, formatFromPath, TABLE_FORMATS } from "../util/table-export.js";
export type { TableFormat, TableOptions, ColumnKind } from "../util/table-export.js";
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
} from "../analysis/anchors.js";
export type { AnchorRule, AnchorExclusion, AnchorOptions, AnchorContext, ResolvedRule, UpstreamAnalysis } from "../analysis/anchors.js";
export { absorptionRate, absorptionOf, summarizeOverSamples } from "../analysis/absorption.js";
export type { AbsorptionOptions, AbsorptionResult } from "../analysis/absorption.js";
export { temporalDrift, trackAnchors, stackRows, meanVectors } from "../analysis/drift.js";
export { firstTokenSink, sinkOverSteps, argmaxKey } from "../analysis/first-token-sink.js";
export type { SinkOptions, SinkResult, SinkStats } from "../analysis/first-token-sink.js";
export { anchorFrontier, poolFrontier, type FactSpan, type FrontierOptions, type FrontierResult } from "../analysis/frontier.js";
export type { DriftOptions, DriftResult, AnchorTrack } from "../analysis/drift.js";
export { qkDecomposition, qkParts, kvHeadOf, floatingAdvantage, headRows, meanHeadRows } from "../analysis/qk-decomposition.js";
export type { QkOptions, QkResult, QkParts } from "../analysis/qk-decomposition.js";
export { retrievalHeads, evidenceSpan, charsToTokens, copyHits, rouge1Recall } from "../analysis/retrieval-heads.js";
export type { RetrievalOptions, RetrievalResult, Evidence } from "../analysis/retrieval-heads.js";
export {
  regionRollout,
  rollout,
  poolRegions,
  rowNormalize,
  stationary,
  offsetsLayout,
  upstreamLayout,
  regionMaps,
} from "../analysis/rollout.js";
export type { RolloutOptions, RolloutResult, RegionLayout } from "../analysis/rollout.js";
export { tokenTypes, classifyToken, pieceText, layerBands, isStructural, TOKEN_TYPES } from "../analysis/token-types.js";
export type { TokenTypeOptions, TokenTypeResult, TokenType, SpecialIds } from "../analysis/token-types.js";
export { getProbe, probeLayers, resolveLayers } from "../analysis/probes-access.js";
export type { PassRef } from "../analysis/probes-access.js";
export { longTable, tensorTable, concatTables } from "../analysis/tables.js";
export { accuracyCurves, bootstrap, bootstrapMean, distractorDrop, positionSpread, curvesPayload } from "../analysis/robustness.js";
export type { QaRow, Interval, AccuracyCurve, CurvePoint, RobustnessAxis } from "../analysis/robustness.js";
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
} from "../analysis/figure-data.js";
export { mean, bootstrapCi, quantile } from "../util/stats.js";
export type { BootstrapOptions } from "../util/stats.js";
