/**
 * `readGgufHeader(file)`: the header, metadata and tensor directory of a GGUF file (versions 2
 * and 3, little-endian), read in bounded windows — the tensor data is never read here.
 *
 * Layout: magic "GGUF", u32 version, u64 tensor count, u64 metadata count, then the metadata
 * (string key, u32 value type, value; arrays are u32 item type + u64 count + items), then one
 * entry per tensor (name, u32 dims, u64 × dims, u32 ggml type, u64 offset), then padding to
 * `general.alignment` (default 32) and the data, each tensor at an aligned offset into it.
 *
 * Every count and length is checked against the bytes left in the file *before* anything is
 * allocated or looped over, so a corrupt or hostile file fails with a `CheckpointError` naming
 * the field instead of exhausting memory. Tensor ranges are checked to lie inside the data
 * section, to be aligned, and not to overlap.
 */
import * as fs from "node:fs";
import { CheckpointError } from "../../util/errors.js";
import {
  GGML_TYPES,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GgufValueType,
  KNOWN_UNSUPPORTED,
  SUPPORTED_TYPE_LIST,
  VALUE_BYTES,
  VALUE_TYPE_NAMES,
  type GgmlType,
  type GgufValue,
} from "./format.js";

export interface GgufEntry {
  type: GgufValueType;
  /** For arrays: the item type. */
  itemType?: GgufValueType;
  value: GgufValue;
}

export interface GgufTensorEntry {
  name: string;
  /** Dimensions in ggml order: `dims[0]` is the contiguous one (the reverse of row-major shape). */
  dims: number[];
  type: GgmlType;
  /** Absolute byte offset of the first byte in the file. */
  byteOffset: number;
  byteLength: number;
}

export interface GgufHeader {
  /** Absolute, symlink-resolved path. */
  file: string;
  version: 2 | 3;
  fileSize: number;
  alignment: number;
  /** Absolute offset of the tensor data section. */
  dataStart: number;
  metadata: Map<string, GgufEntry>;
  tensors: GgufTensorEntry[];
}

/** Caps far above any real model (SmolLM2: 33 keys, 272 tensors; an 8B model: ~300 tensors). */
const MAX_TENSORS = 1 << 20;
const MAX_KV = 1 << 16;
const MAX_STRING_BYTES = 64 * 1024 * 1024;
const MAX_DIMS = 4; // GGML_MAX_DIMS
const WINDOW = 1 << 20;

/** Reads little-endian values from a file through a moving window; never past the file's end. */
class Cursor {
  private buf = Buffer.alloc(0);
  private bufStart = 0;
  pos = 0;

  constructor(
    private readonly fd: number,
    readonly size: number,
    private readonly file: string,
  ) {}

  get left(): number {
    return this.size - this.pos;
  }

  fail(summary: string, field: string, expected: string, found: string, hint?: string): never {
    throw new CheckpointError(summary, { file: this.file, field, expected, found, hint });
  }

  /** Make `n` bytes from `pos` available; `field` names what is being read when the file ends first. */
  private ensure(n: number, field: string): void {
    if (n > this.left) {
      this.fail(
        "GGUF file ends inside its header",
        field,
        `${n} more bytes at offset ${this.pos}`,
        `${this.left} bytes left (file size ${this.size})`,
        "the file is truncated or not a GGUF file; download it again",
      );
    }
    if (this.pos >= this.bufStart && this.pos + n <= this.bufStart + this.buf.length) return;
    const len = Math.min(Math.max(n, WINDOW), this.left);
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const r = fs.readSync(this.fd, buf, got, len - got, this.pos + got);
      if (r === 0) break;
      got += r;
    }
    if (got < n) this.fail("GGUF file could not be read", field, `${n} bytes`, `${got} bytes`);
    this.buf = buf.subarray(0, got);
    this.bufStart = this.pos;
  }

  private at(n: number, field: string): number {
    this.ensure(n, field);
    const o = this.pos - this.bufStart;
    this.pos += n;
    return o;
  }

  u8(f: string) {
    const o = this.at(1, f); // first: it may move the window
    return this.buf.readUInt8(o);
  }
  i8(f: string) {
    const o = this.at(1, f); // first: it may move the window
    return this.buf.readInt8(o);
  }
  u16(f: string) {
    const o = this.at(2, f); // first: it may move the window
    return this.buf.readUInt16LE(o);
  }
  i16(f: string) {
    const o = this.at(2, f); // first: it may move the window
    return this.buf.readInt16LE(o);
  }
  u32(f: string) {
    const o = this.at(4, f); // first: it may move the window
    return this.buf.readUInt32LE(o);
  }
  i32(f: string) {
    const o = this.at(4, f); // first: it may move the window
    return this.buf.readInt32LE(o);
  }
  f32(f: string) {
    const o = this.at(4, f); // first: it may move the window
    return this.buf.readFloatLE(o);
  }
  f64(f: string) {
    const o = this.at(8, f); // first: it may move the window
    return this.buf.readDoubleLE(o);
  }
  u64(f: string): bigint {
    const o = this.at(8, f); // first: it may move the window
    return this.buf.readBigUInt64LE(o);
  }
  i64(f: string): bigint {
    const o = this.at(8, f); // first: it may move the window
    return this.buf.readBigInt64LE(o);
  }

  /** A u64 that must be a count no larger than `max` (checked before anyone allocates for it). */
  count(field: string, max: number, what: string): number {
    const v = this.u64(field);
    if (v > BigInt(max)) this.fail("GGUF count is out of range", field, `at most ${max} ${what}`, v.toString(), "the file is corrupt");
    return Number(v);
  }

  str(field: string): string {
    const n = this.count(`${field} (string length)`, Math.min(MAX_STRING_BYTES, this.left), "bytes (what is left in the file)");
    const o = this.at(n, field);
    return this.buf.toString("utf8", o, o + n);
  }
}

/** Integers beyond 2^53 stay bigint: a token count or a seed must not silently round. */
function fromBig(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

function readScalar(c: Cursor, type: number, field: string): GgufValue {
  switch (type) {
    case GgufValueType.UINT8:
      return c.u8(field);
    case GgufValueType.INT8:
      return c.i8(field);
    case GgufValueType.UINT16:
      return c.u16(field);
    case GgufValueType.INT16:
      return c.i16(field);
    case GgufValueType.UINT32:
      return c.u32(field);
    case GgufValueType.INT32:
      return c.i32(field);
    case GgufValueType.FLOAT32:
      return c.f32(field);
    case GgufValueType.FLOAT64:
      return c.f64(field);
    case GgufValueType.UINT64:
      return fromBig(c.u64(field));
    case GgufValueType.INT64:
      return fromBig(c.i64(field));
    case GgufValueType.BOOL: {
      const b = c.u8(field);
      if (b > 1) c.fail("GGUF boolean is neither 0 nor 1", field, "0 or 1", String(b));
      return b === 1;
    }
    case GgufValueType.STRING:
      return c.str(field);
    default:
      return c.fail("GGUF metadata value has an unknown type", `${field} (value type)`, "a type id in 0..12", String(type));
  }
}

function readValue(c: Cursor, type: number, field: string, depth: number): GgufEntry {
  if (type !== GgufValueType.ARRAY) return { type, value: readScalar(c, type, field) };
  const itemType = c.u32(`${field} (array item type)`);
  if (VALUE_TYPE_NAMES[itemType] === undefined)
    c.fail("GGUF array has an unknown item type", `${field} (array item type)`, "a type id in 0..12", String(itemType));
  if (itemType === GgufValueType.ARRAY && depth >= 2) c.fail("GGUF arrays are nested too deeply", field, "at most 2 levels", "more");
  // The smallest item: a fixed-size scalar, or 8 bytes (the length) of a string / an array header.
  const minItem = VALUE_BYTES[itemType] ?? (itemType === GgufValueType.STRING ? 8 : 12);
  const n = c.count(
    `${field} (array length)`,
    Math.floor(c.left / minItem),
    `items of ${VALUE_TYPE_NAMES[itemType]} (what is left in the file)`,
  );
  const out: GgufValue[] = new Array(n);
  for (let i = 0; i < n; i++) {
    out[i] =
      itemType === GgufValueType.ARRAY
        ? readValue(c, GgufValueType.ARRAY, `${field}[${i}]`, depth + 1).value
        : readScalar(c, itemType, `${field}[${i}]`);
  }
  return { type, itemType, value: out };
}

/** Read and validate a GGUF file's header and tensor directory (no tensor data). */
export function readGgufHeader(file: string): GgufHeader {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    throw new CheckpointError("GGUF file not found", { file, field: "(file)", expected: "an existing .gguf file" });
  }
  let fd: number;
  try {
    fd = fs.openSync(real, "r");
  } catch (e) {
    throw new CheckpointError("GGUF file cannot be opened", {
      file: real,
      field: "(file)",
      expected: "a readable file",
      found: (e as Error).message,
    });
  }
  try {
    const size = fs.fstatSync(fd).size;
    const c = new Cursor(fd, size, real);
    if (size < 24) c.fail("File is too short to be GGUF", "magic", "at least 24 bytes (magic, version, counts)", `${size} bytes`);
    const magic = c.u32("magic");
    if (magic !== GGUF_MAGIC) {
      c.fail(
        "Not a GGUF file",
        "magic",
        '"GGUF"',
        JSON.stringify(Buffer.from([magic & 255, (magic >> 8) & 255, (magic >> 16) & 255, magic >>> 24]).toString("latin1")),
      );
    }
    const version = c.u32("version");
    if (version !== 2 && version !== 3) {
      const swapped = ((version & 255) << 24) | (((version >> 8) & 255) << 16) | (((version >> 16) & 255) << 8) | (version >>> 24);
      c.fail(
        "Unsupported GGUF version",
        "version",
        "2 or 3",
        String(version),
        swapped === 2 || swapped === 3
          ? "this is a big-endian GGUF; convert it to little-endian (gguf-convert-endian)"
          : version === 1
            ? "GGUF v1 (32-bit counts) is obsolete; re-convert the model with a current llama.cpp"
            : undefined,
      );
    }
    // Each tensor entry takes at least 8 (name length) + 4 + 8 (one dim) + 4 + 8 bytes; each KV 8 + 4 + 1.
    const nTensors = c.count("tensor_count", Math.min(MAX_TENSORS, Math.floor(c.left / 32)), "tensors (what the file can hold)");
    const nKv = c.count("metadata_kv_count", Math.min(MAX_KV, Math.floor(c.left / 13)), "metadata entries (what the file can hold)");
    const metadata = new Map<string, GgufEntry>();
    for (let i = 0; i < nKv; i++) {
      const key = c.str(`metadata[${i}].key`);
      // Keys are looked up by name (llama.cpp's gguf_find_key): an empty one names nothing.
      if (key === "") c.fail("GGUF metadata key is empty", `metadata[${i}].key`, "a non-empty key", '""');
      if (metadata.has(key)) c.fail("GGUF metadata key appears twice", key, "unique keys", "a second entry");
      const type = c.u32(`${key} (value type)`);
      metadata.set(key, readValue(c, type, key, 0));
    }
    const alignment = readAlignment(metadata, c);
    const raw: { name: string; dims: number[]; type: GgmlType; rel: bigint }[] = [];
    const names = new Set<string>();
    for (let i = 0; i < nTensors; i++) {
      const name = c.str(`tensors[${i}].name`);
      if (name === "") c.fail("GGUF tensor name is empty", `tensors[${i}].name`, "a non-empty name", '""');
      if (names.has(name)) c.fail("GGUF tensor name appears twice", name, "unique tensor names", "a second entry");
      names.add(name);
      const nd = c.u32(`${name}.n_dims`);
      if (nd < 1 || nd > MAX_DIMS) c.fail("GGUF tensor has a bad number of dimensions", `${name}.n_dims`, `1..${MAX_DIMS}`, String(nd));
      const dims: number[] = [];
      for (let d = 0; d < nd; d++) {
        const v = c.u64(`${name}.dims[${d}]`);
        if (v < 1n || v > BigInt(Number.MAX_SAFE_INTEGER))
          c.fail("GGUF tensor dimension is out of range", `${name}.dims[${d}]`, "a positive integer", v.toString());
        dims.push(Number(v));
      }
      const typeId = c.u32(`${name}.type`);
      const type = GGML_TYPES[typeId];
      if (type === undefined) {
        c.fail(
          "GGUF tensor has an unsupported ggml type",
          `${name}.type`,
          SUPPORTED_TYPE_LIST,
          KNOWN_UNSUPPORTED[typeId] ?? `type id ${typeId}`,
          "re-quantise the model to one of the supported types (e.g. Q8_0, Q4_K) with llama-quantize",
        );
      }
      if (dims[0] % type.blockSize !== 0) {
        c.fail(
          "GGUF tensor rows are not whole quantisation blocks",
          `${name}.dims[0]`,
          `a multiple of ${type.blockSize} (${type.name} block)`,
          String(dims[0]),
        );
      }
      raw.push({ name, dims, type, rel: c.u64(`${name}.offset`) });
    }
    const dataStart = Math.ceil(c.pos / alignment) * alignment;
    const dataBytes = size - dataStart;
    if (nTensors > 0 && dataBytes < 0)
      c.fail("GGUF file ends before its tensor data", "(data section)", `data from offset ${dataStart}`, `file size ${size}`);
    const tensors: GgufTensorEntry[] = raw.map((t) => {
      const numel = t.dims.reduce((a, b) => a * b, 1);
      const byteLength = (numel / t.type.blockSize) * t.type.typeSize;
      if (!Number.isSafeInteger(byteLength)) c.fail("GGUF tensor is too large", `${t.name}.dims`, "fewer than 2^53 bytes", `[${t.dims}]`);
      if (t.rel % BigInt(alignment) !== 0n)
        c.fail("GGUF tensor data is not aligned", `${t.name}.offset`, `a multiple of general.alignment = ${alignment}`, t.rel.toString());
      if (t.rel + BigInt(byteLength) > BigInt(Math.max(dataBytes, 0))) {
        c.fail(
          "GGUF tensor data lies beyond the end of the file",
          `${t.name}.offset`,
          `offset + ${byteLength} bytes <= ${Math.max(dataBytes, 0)} (data section)`,
          t.rel.toString(),
          "the file is truncated; download it again",
        );
      }
      return { name: t.name, dims: t.dims, type: t.type, byteOffset: dataStart + Number(t.rel), byteLength };
    });
    const sorted = [...tensors].sort((a, b) => a.byteOffset - b.byteOffset);
    for (let i = 1; i < sorted.length; i++) {
      const p = sorted[i - 1];
      if (sorted[i].byteOffset < p.byteOffset + p.byteLength) {
        c.fail(
          "GGUF tensors overlap",
          `${sorted[i].name}.offset`,
          `>= ${p.byteOffset + p.byteLength - dataStart} (end of ${p.name})`,
          String(sorted[i].byteOffset - dataStart),
        );
      }
    }
    return { file: real, version: version as 2 | 3, fileSize: size, alignment, dataStart, metadata, tensors };
  } finally {
    fs.closeSync(fd);
  }
}

function readAlignment(metadata: Map<string, GgufEntry>, c: Cursor): number {
  const e = metadata.get("general.alignment");
  if (e === undefined) return GGUF_DEFAULT_ALIGNMENT;
  const v = e.value;
  if (e.type !== GgufValueType.UINT32 || typeof v !== "number" || v < 1 || v > 1 << 30 || (v & (v - 1)) !== 0) {
    c.fail("GGUF alignment is invalid", "general.alignment", "a uint32 power of two", `${VALUE_TYPE_NAMES[e.type]} ${String(v)}`);
  }
  return v as number;
}
