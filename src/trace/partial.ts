/**
 * What a partial trace lacks, in words, so that every analysis can say so instead of failing on (or
 * silently averaging over) a run that never finished. A trace is partial when the run was interrupted
 * (Ctrl-C, an abort, an exception: the file ends after a complete record with no `end` record) or
 * when a file cut inside its last record was loaded with `allowTruncated`.
 *
 * Pure and data-side only: works on any `Trace`, whether read from a file (`trace.source` names it)
 * or returned in memory by an interrupted sampler.
 */
import { TraceFormatError, type FloatscopeErrorDetails } from "../util/errors.js";
import type { Trace } from "./types.js";

/**
 * A trace file whose last record is cut short (a writer killed inside a write). `complete` is the
 * number of whole records before the cut. The reader's hint names its option (`allowTruncated`);
 * the CLI replaces it with its flag (`withHint`), since each caller can only use its own.
 */
export class TruncatedTraceError extends TraceFormatError {
  constructor(
    readonly summary: string,
    details: FloatscopeErrorDetails,
    readonly complete: number,
  ) {
    super(summary, details);
  }

  /** The same error with another hint. */
  withHint(hint: string): TruncatedTraceError {
    const { file, field, expected, found } = this;
    return new TruncatedTraceError(this.summary, { file, field, expected, found, hint }, this.complete);
  }
}

export interface PartialCounts {
  /** Whole records read: meta, steps, final (a partial trace never has its end record). */
  records: number;
  /** Records a finished run of these settings writes (meta, steps, final, end); null when the settings do not say how many steps. */
  expected: number | null;
  /** Steps recorded, and planned (null when unknown; an upper bound when the run may stop at EOS). */
  steps: number;
  plannedSteps: number | null;
  /** Whether the last record was cut short (loaded with allowTruncated). */
  cut: boolean;
}

/** How much of a partial trace there is, in records and steps (for the CLI's JSON and a notebook's check). */
export function partialCounts(trace: Trace): PartialCounts {
  const planned = plannedSteps(trace) ?? null;
  const hadFinal = trace.source?.final ?? trace.final.probes.size > 0;
  return {
    records: 1 + trace.steps.length + (hadFinal ? 1 : 0) + (trace.partial ? 0 : 1),
    expected: planned === null ? null : planned + 3,
    steps: trace.steps.length,
    plannedSteps: planned,
    cut: trace.source?.cut ?? false,
  };
}

export interface PartialReport {
  /** One line: "partial trace <file> (<model>): the run stopped after 3 of 8 steps; missing: …". */
  summary: string;
  /** The missing parts, e.g. ["steps 3–7 (3 of 8 recorded)", "the final-sequence pass", "the end record (answer, decoded tokens)"]. */
  missing: string[];
}

/** Steps the run was set up for (`settings.steps`), when the settings say. */
function plannedSteps(trace: Trace): number | undefined {
  const n = trace.settings.steps;
  return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Undefined for a complete trace. */
export function describePartial(trace: Trace): PartialReport | undefined {
  if (!trace.partial) return undefined;
  const done = trace.steps.length;
  const planned = plannedSteps(trace);
  // An ARM run with stopAtEos may legitimately stop early: then the plan is an upper bound.
  const early = trace.settings.stopAtEos === true;
  const missing: string[] = [];
  // The reader says whether the final record made it; in memory, an abandoned run has no final probes.
  const hadFinal = trace.source?.final ?? trace.final.probes.size > 0;
  if (planned !== undefined && done < planned && !hadFinal) {
    const of = `${done} of ${early ? "at most " : ""}${planned} recorded`;
    missing.push(planned - done === 1 ? `step ${done} (${of})` : `steps ${done}–${planned - 1} (${of})`);
  }
  if (!hadFinal) missing.push("the final-sequence pass");
  missing.push("the end record (answer, decoded tokens)");
  const name = trace.source ? `${trace.source.file} (${trace.model.name})` : trace.model.name;
  const how = trace.source?.cut
    ? "its last record was cut short (loaded with allowTruncated)"
    : hadFinal
      ? `the run stopped after its final pass, before the end record`
      : `the run stopped after ${done}${planned !== undefined ? ` of ${early ? "at most " : ""}${planned}` : ""} steps`;
  return { summary: `partial trace ${name}: ${how}; missing: ${missing.join(", ")}`, missing };
}
