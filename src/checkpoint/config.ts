/**
 * Reading JSON files of a checkpoint (config.json, generation_config.json, the shard index,
 * tokenizer files) and typed accessors over the parsed objects.
 *
 * Every accessor throws a `CheckpointError` naming the file and the key, with what was expected
 * and what was found, e.g. `requireInt(config, "num_hidden_layers", {min: 1, max: 4096})`.
 * Bounds matter: a config that claims 1e9 layers must fail here, before anything loops over it.
 */
import * as path from "node:path";
import { CheckpointError } from "../util/errors.js";
import { readFileBounded } from "../util/paths.js";

/** A parsed JSON object plus the file it came from (for error messages). */
export type JsonObject = Record<string, unknown>;

export interface AccessorOptions {
  /** File name used in messages; default "config.json". */
  file?: string;
  /** Inclusive lower bound for numbers. */
  min?: number;
  /** Inclusive upper bound for numbers. */
  max?: number;
  /** Exclusive lower bound (e.g. 0 for an epsilon that must be positive). */
  above?: number;
}

/** Default cap for a JSON file: real config files are a few KB, tokenizer.json tens of MB. */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;
export const MAX_TOKENIZER_BYTES = 128 * 1024 * 1024;

/**
 * Read a JSON file that must hold an object. Refuses files above `maxBytes` before reading them,
 * so a hostile or corrupt file cannot make us allocate gigabytes.
 */
export function readJsonObject(file: string, options: { maxBytes?: number; label?: string } = {}): JsonObject {
  const label = options.label ?? path.basename(file);
  const maxBytes = options.maxBytes ?? MAX_CONFIG_BYTES;
  // Checked for kind on the open descriptor and read with a bound: a FIFO, a folder or a huge
  // file with this name is one CheckpointError, never a hang or a giant allocation.
  const bytes = readFileBounded(file, { what: label, error: CheckpointError, field: "(file)", maxBytes });
  return parseJsonObject(bytes.toString("utf8"), file);
}

/** Parse JSON text that must hold an object; `file` names the source in errors. */
export function parseJsonObject(text: string, file: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new CheckpointError("File is not valid JSON", { file, field: "(JSON syntax)", expected: "valid JSON", found: shortMessage(e) });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new CheckpointError("File does not hold a JSON object", {
      file,
      field: "(top level)",
      expected: "a JSON object {...}",
      found: value === null ? "null" : Array.isArray(value) ? "an array" : typeof value,
    });
  }
  return value as JsonObject;
}

function shortMessage(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.length > 120 ? m.slice(0, 117) + "..." : m;
}

/** A short, safe rendering of a found value (never a whole object, never throws). */
export function describeValue(v: unknown): string {
  if (v === undefined) return "missing";
  if (v === null) return "null";
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (typeof v === "string") return JSON.stringify(v.length > 60 ? v.slice(0, 57) + "..." : v);
  if (Array.isArray(v)) return `an array of length ${v.length}`;
  if (typeof v === "object") return "an object";
  return typeof v;
}

function fail(o: AccessorOptions, key: string, expected: string, found: unknown): never {
  const name = path.basename(o.file ?? "config.json");
  throw new CheckpointError(found === undefined ? `Missing key in ${name}` : `Invalid value in ${name}`, {
    file: o.file ?? "config.json",
    field: key,
    expected,
    found: describeValue(found),
  });
}

function boundsText(o: AccessorOptions, kind: string): string {
  if (o.above !== undefined && o.max !== undefined) return `${kind} in (${o.above}, ${o.max}]`;
  if (o.above !== undefined) return `${kind} > ${o.above}`;
  if (o.min !== undefined && o.max !== undefined) return `${kind} in [${o.min}, ${o.max}]`;
  if (o.min !== undefined) return `${kind} >= ${o.min}`;
  if (o.max !== undefined) return `${kind} <= ${o.max}`;
  return kind;
}

function checkNumber(v: unknown, key: string, o: AccessorOptions, integer: boolean): number {
  const kind = integer ? "an integer" : "a finite number";
  const ok = typeof v === "number" && Number.isFinite(v) && (!integer || Number.isSafeInteger(v));
  if (!ok || (o.min !== undefined && v < o.min) || (o.max !== undefined && v > o.max) || (o.above !== undefined && v <= o.above)) {
    fail(o, key, boundsText(o, kind), v);
  }
  return v as number;
}

/** An integer that must be present. */
export function requireInt(obj: JsonObject, key: string, o: AccessorOptions = {}): number {
  return checkNumber(obj[key], key, o, true);
}

/** An integer, or `fallback` when the key is absent or null. */
export function optionalInt<T extends number | undefined>(obj: JsonObject, key: string, fallback: T, o: AccessorOptions = {}): number | T {
  const v = obj[key];
  return v === undefined || v === null ? fallback : checkNumber(v, key, o, true);
}

/** A finite number that must be present. */
export function requireNumber(obj: JsonObject, key: string, o: AccessorOptions = {}): number {
  return checkNumber(obj[key], key, o, false);
}

/** A finite number, or `fallback` when absent or null. */
export function optionalNumber<T extends number | undefined>(
  obj: JsonObject,
  key: string,
  fallback: T,
  o: AccessorOptions = {},
): number | T {
  const v = obj[key];
  return v === undefined || v === null ? fallback : checkNumber(v, key, o, false);
}

export function requireString(obj: JsonObject, key: string, o: AccessorOptions = {}): string {
  const v = obj[key];
  if (typeof v !== "string") fail(o, key, "a string", v);
  return v;
}

export function optionalString(obj: JsonObject, key: string, o: AccessorOptions = {}): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") fail(o, key, "a string", v);
  return v;
}

export function optionalBool(obj: JsonObject, key: string, fallback: boolean, o: AccessorOptions = {}): boolean {
  const v = obj[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "boolean") fail(o, key, "true or false", v);
  return v;
}

/** A nested object, or undefined when absent or null. */
export function optionalObject(obj: JsonObject, key: string, o: AccessorOptions = {}): JsonObject | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) fail(o, key, "an object", v);
  return v as JsonObject;
}

/** An integer or a list of integers (e.g. `eos_token_id`), as a list; [] when absent. */
export function optionalIntList(obj: JsonObject, key: string, o: AccessorOptions = {}): number[] {
  const v = obj[key];
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  if (list.length > 1024) fail(o, key, "an integer or a short list of integers", v);
  return list.map((x, i) => checkNumber(x, `${key}[${i}]`, { ...o, min: o.min ?? 0 }, true));
}

/** The first of several alternative keys that is present (e.g. `vocab_size` / `embedding_size`). */
export function firstPresentKey(obj: JsonObject, keys: readonly string[]): string | undefined {
  return keys.find((k) => obj[k] !== undefined && obj[k] !== null);
}
