/**
 * `floatscope/trace`: The .fstrace file: streaming writer, validating reader, partial traces.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export { TRACE_FORMAT_VERSION } from "../trace/types.js";
export type { Trace, TraceStep, TracePrompt, TraceModelInfo, Region, PassIntervention, TraceIntervention } from "../trace/types.js";
export { readTrace, decodeTrace, readTraceHeader, traceSteps } from "../trace/reader.js";
export { describePartial } from "../trace/partial.js";
export type { PartialReport } from "../trace/partial.js";
export type { ReadTraceOptions, TraceMeta } from "../trace/reader.js";
export { TraceWriter, writeTrace, encodeTrace } from "../trace/writer.js";
export type { TraceHeader, TraceEnd } from "../trace/writer.js";
export { estimateTraceBytes, probeBytesPerPass } from "../trace/size.js";
export type { TraceDims } from "../trace/size.js";
