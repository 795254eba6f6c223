/**
 * `floatscope/qa`: The QA harness: datasets, settings and distractors, prompts, metrics, the runner, the paper's Table 1.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
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
} from "../qa/datasets.js";
export type { QaRecord, QaPassage, ReadQaOptions, ReadProgress, QaDataReport, SuspiciousKind } from "../qa/datasets.js";
export { buildContext, DistractorPool, settingLabel, validateSetting, goldPositionSweep } from "../qa/contexts.js";
export type { EvalSetting, GoldPosition, DistractorSource, BuiltContext } from "../qa/contexts.js";
export { buildQaPrompt, promptRegionsToTokens, LLADA_HEADER, CHAT_HEADER, CHAT_EXAMPLES, NO_CONTEXT_PASSAGE } from "../qa/prompts.js";
export type { QaPrompt, QaPromptInput, PromptRegion, BuildPromptOptions } from "../qa/prompts.js";
export {
  normalizeAnswer,
  substringAccuracy,
  tokenF1,
  exactMatch,
  scoreAnswer,
  extractAnswer,
  factScores,
  splitClaims,
} from "../qa/metrics.js";
export type { QaScores, FactScores, LongFact } from "../qa/metrics.js";
export { factSpans, placeClaims } from "../qa/fact-spans.js";
export type { RecordFact, FactSpanSource, FactSpanResult, PlacedClaim } from "../qa/fact-spans.js";
export { runEval, summarizeResults, readResults, readDoneKeys, ResultsFileError } from "../qa/runner.js";
export type { EvalOptions, EvalResult, EvalRun, EvalProgress } from "../qa/runner.js";
export { PAPER_TABLE1, paperTable1, TABLE1_DATASETS } from "../qa/paper-table1.js";
export type { Table1Row, Table1Dataset } from "../qa/paper-table1.js";
