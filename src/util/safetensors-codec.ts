/**
 * The byte layout of safetensors, shared by checkpoints (`checkpoint/safetensors.ts`, files on
 * disk) and the trace format (`trace/codec.ts`, one safetensors blob per record):
 *
 *   u64 LE header length N, N bytes of JSON header
 *   `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: …}`, then the data;
 *   offsets are relative to the end of the header.
 *
 * Dependency-free on purpose (the trace layer may import only util/). The caller owns its errors:
 * every check reports a `SafetensorsIssue` to `fail`, which throws the caller's typed error
 * (CheckpointError naming the file, TraceFormatError naming the record), and the caller decides
 * what `__metadata__` must hold and which dtypes it accepts.
 */

/** A tensor to lay out: `bytes` already in the dtype's little-endian layout. */
export interface TensorBytes {
  dtype: string;
  shape: readonly number[];
  bytes: Buffer;
}

export interface SafetensorsLayout {
  /** u64 LE header length, then the JSON header padded with spaces to a multiple of 8 (as HF does). */
  head: Buffer;
  /** Tensor data in header order; offsets in the header are into their concatenation. */
  parts: Buffer[];
  /** Total bytes of `parts`. */
  dataBytes: number;
}

/**
 * Lay out tensors in the given order; `__metadata__` (when given) is the header's first key. Shapes
 * and byte lengths are the caller's to check: this only writes what it is given.
 */
export function layoutSafetensors(tensors: Iterable<[string, TensorBytes]>, metadata?: Record<string, string>): SafetensorsLayout {
  // No prototype: a tensor named "__proto__" must become a key, not replace the prototype (and vanish).
  const header: Record<string, unknown> = Object.create(null);
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  const parts: Buffer[] = [];
  for (const [name, t] of tensors) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.length] };
    offset += t.bytes.length;
    parts.push(t.bytes);
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const jsonBuf = Buffer.from(json, "utf8");
  const head = Buffer.alloc(8 + jsonBuf.length);
  head.writeBigUInt64LE(BigInt(jsonBuf.length), 0);
  jsonBuf.copy(head, 8);
  return { head, parts, dataBytes: offset };
}

/**
 * What is wrong with a header. `kind`: "json" (not JSON), "header" (not a JSON object), "entry"
 * (one tensor's entry; `field` is `name` or `name.dtype` / `.shape` / `.data_offsets`), "overlap"
 * (two tensors' byte ranges alias; `field` is "a / b").
 */
export interface SafetensorsIssue {
  kind: "json" | "header" | "entry" | "overlap" | "coverage";
  field: string;
  expected: string;
  found?: string;
}

export type FailWith = (issue: SafetensorsIssue) => never;

/** Parse the JSON header text (trailing spaces are the format's padding) into an object. */
export function parseHeaderJson(text: string, fail: FailWith): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return fail({ kind: "json", field: "header", expected: "valid JSON", found: (e as Error).message });
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return fail({ kind: "header", field: "header", expected: "{name: {dtype, shape, data_offsets}}", found: short(json) });
  }
  return json as Record<string, unknown>;
}

/** One validated tensor entry; `begin`/`end` are relative to the start of the data. */
export interface HeaderEntry {
  name: string;
  dtype: string;
  shape: number[];
  begin: number;
  end: number;
}

/**
 * Validate every tensor entry of a parsed header, in header order: dtype one of `dtypeBytes`'s
 * keys, shape non-negative integers with an element count below 2^53, data_offsets inside
 * `dataSize` and exactly shape × dtype bytes long, no two ranges overlapping. `__metadata__` is
 * handed to `onMetadata` where it stands (the caller validates it).
 */
export function validateTensorEntries(
  header: Record<string, unknown>,
  dataSize: number,
  dtypeBytes: Readonly<Record<string, number>>,
  fail: FailWith,
  onMetadata?: (value: unknown) => void,
): HeaderEntry[] {
  const entries: HeaderEntry[] = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") {
      onMetadata?.(entry);
      continue;
    }
    entries.push(validateEntry(name, entry, dataSize, dtypeBytes, fail));
  }
  // Overlapping ranges would mean two tensors alias the same bytes: a corrupt or hostile file.
  const sorted = [...entries].sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].begin < sorted[i - 1].end) {
      fail({
        kind: "overlap",
        field: `${sorted[i - 1].name} / ${sorted[i].name}`,
        expected: "disjoint data_offsets",
        found: "overlapping ranges",
      });
    }
  }
  return entries;
}

function validateEntry(
  name: string,
  entry: unknown,
  dataSize: number,
  dtypeBytes: Readonly<Record<string, number>>,
  fail: FailWith,
): HeaderEntry {
  const bad = (field: string, expected: string, found: unknown): never =>
    fail({ kind: "entry", field: field ? `${name}.${field}` : name, expected, found: short(found) });
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return bad("", "{dtype, shape, data_offsets}", entry);
  const e = entry as Record<string, unknown>;
  // hasOwn, not `in`: "constructor" or "toString" must not pass as a dtype.
  if (typeof e.dtype !== "string" || !Object.hasOwn(dtypeBytes, e.dtype)) {
    return bad("dtype", `one of ${Object.keys(dtypeBytes).join(", ")}`, e.dtype);
  }
  const dtype = e.dtype;
  if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    return bad("shape", "an array of non-negative integers", e.shape);
  }
  const shape = e.shape as number[];
  const off = e.data_offsets;
  if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isSafeInteger(d) && d >= 0) || off[0] > off[1]) {
    return bad("data_offsets", "[begin, end] with 0 <= begin <= end", off);
  }
  const [begin, end] = off as [number, number];
  if (end > dataSize) return bad("data_offsets", `end <= ${dataSize} (data bytes after the header)`, off);
  let count = 1;
  for (const d of shape) {
    count *= d;
    if (!Number.isSafeInteger(count)) return bad("shape", "a shape whose element count fits in 2^53", shape);
  }
  const expectedBytes = count * dtypeBytes[dtype];
  if (expectedBytes !== end - begin) {
    return fail({
      kind: "entry",
      field: `${name}.data_offsets`,
      expected: `${expectedBytes} bytes for ${dtype}[${shape.join(",")}]`,
      found: `${end - begin} bytes`,
    });
  }
  return { name, dtype, shape, begin, end };
}

/**
 * Require the tensors to tile the data exactly, as the reference safetensors loader does: in offset
 * order each begins where the previous ended, the first at 0, the last at `dataSize`. A gap or
 * trailing bytes are bytes no tensor accounts for: a header that lost an entry, or a header length
 * shifted into its padding (which moves every tensor by a few bytes).
 */
export function checkCoverage(entries: readonly HeaderEntry[], dataSize: number, fail: FailWith): void {
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let pos = 0;
  for (const e of sorted) {
    if (e.begin !== pos)
      fail({
        kind: "coverage",
        field: `${e.name}.data_offsets`,
        expected: `begin ${pos} (where the previous tensor ends)`,
        found: `begin ${e.begin}`,
      });
    pos = e.end;
  }
  if (pos !== dataSize)
    fail({
      kind: "coverage",
      field: "data",
      expected: `${dataSize} data bytes covered by tensors`,
      found: `${pos} covered, ${dataSize - pos} unaccounted for`,
    });
}

/** A value for an error message: JSON, at most 80 characters, never throwing. */
export function short(v: unknown): string {
  let s: string | undefined;
  try {
    // A hostile header can nest arrays thousands deep: stringify may throw; never let it escape.
    s = JSON.stringify(v);
  } catch {
    s = Array.isArray(v) ? "a deeply nested array" : typeof v;
  }
  if (s === undefined) return String(v);
  return s.length > 80 ? s.slice(0, 77) + "..." : s;
}
