/**
 * What a partial trace lacks, in words, so that every analysis can say so instead of failing on (or
 * silently averaging over) a run that never finished. A trace is partial when the run was interrupted
 * (Ctrl-C, an abort, an exception: the file ends after a complete record with no `end` record) or
 * when a file cut inside its last record was loaded with `allowTruncated`.
 *
 * Pure and data-side only: works on any `Trace`, whether read from a file (`trace.source` names it)
 * or returned in memory by an interrupted sampler.
 */
import type { Trace } from "./types.js";

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
