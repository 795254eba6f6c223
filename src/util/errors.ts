/**
 * Typed errors. Every error a user can trigger with bad input names the file (or the
 * object), the field, and what was expected, so a notebook cell fails with a message
 * that says how to fix it.
 *
 * Subclasses add nothing but a name: `instanceof` is how callers and tests tell them apart.
 */

export interface FloatscopeErrorDetails {
  /** File (or logical source such as "trace", "settings") the problem was found in. */
  file?: string;
  /** Field, key, tensor name or option that is wrong. */
  field?: string;
  /** What was expected there, in words. */
  expected?: string;
  /** What was found instead (short; never a whole buffer). */
  found?: string;
  /** A one-line remedy: "record it with probes: ['received']". */
  hint?: string;
}

export class FloatscopeError extends Error {
  readonly file?: string;
  readonly field?: string;
  readonly expected?: string;
  readonly found?: string;
  readonly hint?: string;

  constructor(summary: string, details: FloatscopeErrorDetails = {}) {
    super(formatMessage(summary, details));
    this.name = new.target.name;
    this.file = details.file;
    this.field = details.field;
    this.expected = details.expected;
    this.found = details.found;
    this.hint = details.hint;
  }
}

function formatMessage(summary: string, d: FloatscopeErrorDetails): string {
  const parts = [summary];
  if (d.file !== undefined) parts.push(`file: ${d.file}`);
  if (d.field !== undefined) parts.push(`field: ${d.field}`);
  if (d.expected !== undefined) parts.push(`expected: ${d.expected}`);
  if (d.found !== undefined) parts.push(`found: ${d.found}`);
  let msg = parts.join("\n  ");
  if (d.hint !== undefined) msg += `\n  hint: ${d.hint}`;
  return msg;
}

/** A checkpoint file (config.json, *.safetensors, index, tokenizer files) is missing or malformed. */
export class CheckpointError extends FloatscopeError {}

/** The checkpoint's architecture is not one of the supported families. */
export class UnsupportedArchitectureError extends FloatscopeError {}

/** A run would not fit the memory budget (estimated before any compute). */
export class BudgetError extends FloatscopeError {}

/** A trace lacks a probe an analysis needs. */
export class ProbeMissingError extends FloatscopeError {}

/** A trace file is truncated, corrupted, or from an unknown format version. */
export class TraceFormatError extends FloatscopeError {}

/** Settings for a run or an analysis are invalid (caught before compute starts). */
export class SettingsError extends FloatscopeError {}

/** An evaluation grid, shard file or merge is malformed, from another run, or incomplete (src/grid/grid.ts, shard.ts, merge.ts). */
export class GridError extends FloatscopeError {}

/** Display was asked for something it cannot show, or no kernel/sink is available. */
export class DisplayError extends FloatscopeError {}

/** The ONNX runtime failed (session creation, execution provider, run). */
export class RuntimeError extends FloatscopeError {}

/**
 * Check an option against a fixed list of keywords, Plot-style: one helper, one message.
 * Returns the value typed as the union.
 */
export function keyword<T extends string>(value: unknown, allowed: readonly T[], where: { field: string; file?: string }): T {
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  throw new SettingsError(`Unknown value for ${where.field}`, {
    file: where.file,
    field: where.field,
    expected: `one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`,
    found: JSON.stringify(value),
  });
}
