/**
 * Typed access to GGUF metadata: each getter checks the value's GGUF type and range and throws a
 * `CheckpointError` naming the key, so the mapping code reads like a table.
 */
import { CheckpointError } from "../../util/errors.js";
import { GgufValueType, VALUE_TYPE_NAMES, type GgufValue } from "./format.js";
import type { GgufEntry } from "./reader.js";

const INT_TYPES = new Set<number>([
  GgufValueType.UINT8,
  GgufValueType.INT8,
  GgufValueType.UINT16,
  GgufValueType.INT16,
  GgufValueType.UINT32,
  GgufValueType.INT32,
  GgufValueType.UINT64,
  GgufValueType.INT64,
]);
const FLOAT_TYPES = new Set<number>([GgufValueType.FLOAT32, GgufValueType.FLOAT64]);

export class GgufMetadata {
  constructor(
    readonly file: string,
    readonly entries: Map<string, GgufEntry>,
  ) {}

  has(key: string): boolean {
    return this.entries.has(key);
  }

  private fail(key: string, expected: string, e: GgufEntry | undefined): never {
    throw new CheckpointError(e ? "GGUF metadata value has the wrong type or range" : "GGUF metadata key is missing", {
      file: this.file,
      field: key,
      expected,
      found: e ? describe(e) : "missing",
    });
  }

  int(key: string, opts: { min?: number; max?: number } = {}): number | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    const want = `an integer${opts.min !== undefined ? ` >= ${opts.min}` : ""}${opts.max !== undefined ? ` <= ${opts.max}` : ""}`;
    if (!INT_TYPES.has(e.type) || typeof e.value !== "number") this.fail(key, want, e);
    const v = e.value as number;
    if ((opts.min !== undefined && v < opts.min) || (opts.max !== undefined && v > opts.max)) this.fail(key, want, e);
    return v;
  }

  requireInt(key: string, opts: { min?: number; max?: number } = {}): number {
    const v = this.int(key, opts);
    if (v === undefined) this.fail(key, "an integer", undefined);
    return v;
  }

  float(key: string, opts: { min?: number; max?: number } = {}): number | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    const want = `a number${opts.min !== undefined ? ` >= ${opts.min}` : ""}${opts.max !== undefined ? ` <= ${opts.max}` : ""}`;
    if (!(FLOAT_TYPES.has(e.type) || INT_TYPES.has(e.type)) || typeof e.value !== "number" || !Number.isFinite(e.value))
      this.fail(key, want, e);
    const v = e.type === GgufValueType.FLOAT32 ? shortestF32(e.value as number) : (e.value as number);
    if ((opts.min !== undefined && v < opts.min) || (opts.max !== undefined && v > opts.max)) this.fail(key, want, e);
    return v;
  }

  requireFloat(key: string, opts: { min?: number; max?: number } = {}): number {
    const v = this.float(key, opts);
    if (v === undefined) this.fail(key, "a number", undefined);
    return v;
  }

  bool(key: string): boolean | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.type !== GgufValueType.BOOL) this.fail(key, "a bool", e);
    return e.value as boolean;
  }

  string(key: string): string | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.type !== GgufValueType.STRING) this.fail(key, "a string", e);
    return e.value as string;
  }

  stringArray(key: string): string[] | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.type !== GgufValueType.ARRAY || e.itemType !== GgufValueType.STRING) this.fail(key, "an array of strings", e);
    return e.value as string[];
  }

  intArray(key: string): number[] | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.type !== GgufValueType.ARRAY || e.itemType === undefined || !INT_TYPES.has(e.itemType)) this.fail(key, "an array of integers", e);
    return e.value as number[];
  }
}

/**
 * The shortest decimal that rounds to this float32: GGUF stores ε = 1e-5 as 9.99999975e-6, and
 * the spec (and `inspect`) should say 1e-5, as config.json does. The graph stores it as float32
 * again, so the computation is unchanged.
 */
function shortestF32(v: number): number {
  for (let p = 1; p <= 9; p++) {
    const d = Number(v.toPrecision(p));
    if (Math.fround(d) === v) return d;
  }
  return v;
}

function describe(e: GgufEntry): string {
  const t =
    e.type === GgufValueType.ARRAY
      ? `array of ${VALUE_TYPE_NAMES[e.itemType ?? -1] ?? "?"}`
      : (VALUE_TYPE_NAMES[e.type] ?? `type ${e.type}`);
  return `${t} ${short(e.value)}`;
}

function short(v: GgufValue): string {
  if (Array.isArray(v)) return `(${v.length} items)`;
  const s = typeof v === "string" ? JSON.stringify(v) : String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
