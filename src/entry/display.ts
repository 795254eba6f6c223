/**
 * `floatscope/display`: Jupyter display: MIME bundles, show(), progress, findings and the claims table.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export { escapeMarkdown } from "../display/escape.js";
export { show, newDisplay } from "../display/show.js";
export type { DisplayHandle, DisplayMetadata, ShowOptions } from "../display/show.js";
export { progress } from "../display/progress.js";
export type { Progress, ProgressOptions } from "../display/progress.js";
export { mimeBundleOf, registerFormatter } from "../display/format.js";
export type { Formatter } from "../display/format.js";
export { FLOATSCOPE_MIME, STANDARD_MIME, isDisplayable } from "../display/mime.js";
export type { Displayable, MimeBundle } from "../display/mime.js";
export { setDisplaySink, captureDisplays, inKernel } from "../display/sink.js";
export type { DisplayCapture, DisplayMessage, DisplaySink } from "../display/sink.js";
export { findings, readFindings, CLAIM_IDS, MIME_FINDINGS } from "../display/findings.js";
export {
  meanFinding,
  valueFinding,
  compareGroups,
  findingsText,
  markdown,
  formatNumber,
  sinkFindings,
  sinkLayerTable,
  SINK_QUANTITIES,
} from "../display/findings-text.js";
export type { FindingBase, FindingsTextOptions, Measurement, SinkSample, SinkLayer } from "../display/findings-text.js";
export type { Finding, FindingsRecord, ClaimId } from "../display/findings.js";
export {
  buildClaims,
  judgeClaims,
  collectFindings,
  formatClaimNumber,
  CLAIMS,
  VERDICTS,
  neededN,
  separation,
  comparison,
  decide,
  verdictsSideBySide,
  findingsFileLine,
} from "../display/claims.js";
export type { ClaimResult, ClaimText, Verdict, SourcedFinding, TierVerdict, Estimate, Separation, Comparison } from "../display/claims.js";
