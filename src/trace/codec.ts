/**
 * Byte layout of a `.fstrace` file (docs/trace-format.md is the full description):
 *
 *   preamble  16 bytes: ASCII "FSTRACE\n", u32 LE format version, u32 LE reserved (0)
 *   record*   u64 LE n, n bytes of one safetensors blob, u32 LE CRC-32 of those n bytes
 *
 * Each blob is an ordinary safetensors buffer (8-byte header length, JSON header, data). Its
 * `__metadata__` holds `kind` (meta | step | final | end) and `json`, a JSON string with the
 * record's structured fields. Tensors are little-endian F32 or I32.
 *
 * Decoding validates every length and offset before use and only ever `JSON.parse`s: nothing in
 * a trace file is executed. This module is self-contained (no compute-side imports) so a trace can
 * be read where no model or runtime is installed.
 */
import * as fs from "node:fs";
import * as zlib from "node:zlib";
import { TraceFormatError } from "../util/errors.js";
import { TRACE_FORMAT_VERSION } from "./types.js";
import {
  checkCoverage,
  layoutSafetensors,
  parseHeaderJson,
  short,
  validateTensorEntries,
  type SafetensorsIssue,
  type TensorBytes,
} from "../util/safetensors-codec.js";

export const TRACE_MAGIC = "FSTRACE\n";
export const PREAMBLE_BYTES = 16;
/** Framing around each blob: u64 length before, u32 CRC after. */
export const RECORD_OVERHEAD = 12;

export type RecordKind = "meta" | "step" | "final" | "end";
export const RECORD_KINDS: readonly RecordKind[] = ["meta", "step", "final", "end"];

export type TraceDType = "F32" | "I32";
/** The only dtypes a trace holds, 4 bytes each. */
const TRACE_DTYPE_BYTES: Record<TraceDType, number> = { F32: 4, I32: 4 };

export interface RawTensor {
  dtype: TraceDType;
  shape: number[];
  data: Float32Array | Int32Array;
}

export interface TraceRecord {
  kind: RecordKind;
  /** Structured fields (parsed JSON object). */
  json: Record<string, unknown>;
  /** Tensors in file order. */
  tensors: Map<string, RawTensor>;
}

export function encodePreamble(version: number): Buffer {
  const b = Buffer.alloc(PREAMBLE_BYTES);
  b.write(TRACE_MAGIC, 0, "ascii");
  b.writeUInt32LE(version, 8);
  b.writeUInt32LE(0, 12);
  return b;
}

/** Parse the preamble (magic, a version this reader knows, reserved field 0); returns the format version. */
export function decodePreamble(buf: Buffer, file: string): number {
  if (buf.length < PREAMBLE_BYTES) {
    throw new TraceFormatError("Trace file is too short to be a trace", {
      file,
      field: "preamble",
      expected: `${PREAMBLE_BYTES} bytes starting with "FSTRACE\\n"`,
      found: `${buf.length} bytes`,
    });
  }
  const magic = buf.toString("latin1", 0, 8);
  if (magic !== TRACE_MAGIC) {
    throw new TraceFormatError("Not a floatscope trace file", {
      file,
      field: "magic",
      expected: JSON.stringify(TRACE_MAGIC),
      found: JSON.stringify(magic),
    });
  }
  const version = buf.readUInt32LE(8);
  // A newer version is refused by number before anything else is read (it may use the reserved field).
  if (version > TRACE_FORMAT_VERSION) {
    throw new TraceFormatError(`Trace format version ${version} is newer than this floatscope reads`, {
      file,
      field: "format version",
      expected: `≤ ${TRACE_FORMAT_VERSION}`,
      found: String(version),
      hint: "upgrade floatscope to read this trace",
    });
  }
  if (version < 1)
    throw new TraceFormatError("Unknown trace format version", { file, field: "format version", expected: "≥ 1", found: String(version) });
  // Reserved for a future writer: a nonzero value means a file this reader does not understand.
  const reserved = buf.readUInt32LE(12);
  if (reserved !== 0) {
    throw new TraceFormatError("Trace preamble has a nonzero reserved field", {
      file,
      field: "reserved (preamble bytes 12–15)",
      expected: "0",
      found: String(reserved),
      hint: "the file was written by another tool or is damaged",
    });
  }
  return version;
}

/** One framed record: length, safetensors blob, CRC-32. */
export function encodeRecord(rec: TraceRecord): Buffer {
  const tensors = [...rec.tensors].map(([name, t]): [string, TensorBytes] => {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) {
      throw new TraceFormatError("Tensor data does not match its shape", {
        field: name,
        expected: `${count} elements`,
        found: `${t.data.length}`,
      });
    }
    return [name, { dtype: t.dtype, shape: t.shape, bytes: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength) }];
  });
  const { head, parts, dataBytes } = layoutSafetensors(tensors, { kind: rec.kind, json: JSON.stringify(rec.json) });
  // Framed in one buffer (no second copy): u64 blob length, blob = head + data, u32 CRC-32.
  const blobLen = head.length + dataBytes;
  const out = Buffer.alloc(8 + blobLen + 4);
  out.writeBigUInt64LE(BigInt(blobLen), 0);
  head.copy(out, 8);
  let p = 8 + head.length;
  for (const part of parts) {
    part.copy(out, p);
    p += part.length;
  }
  out.writeUInt32LE(zlib.crc32(out.subarray(8, 8 + blobLen)), 8 + blobLen);
  return out;
}

/** Where a record sits, for error messages. */
export interface RecordPlace {
  file: string;
  index: number;
  offset: number;
  /** Bytes in the whole file (or buffer), quoted when a claimed size is refused. */
  fileSize?: number;
}

const where = (p: RecordPlace, field: string) => ({ file: p.file, field: `record ${p.index} (byte ${p.offset}): ${field}` });

/** Decode one safetensors blob (already CRC-checked) into a record, validating its header. */
export function decodeBlob(blob: Buffer, place: RecordPlace): TraceRecord {
  const bad = (field: string, expected: string, found: string) =>
    new TraceFormatError("Trace record is malformed", { ...where(place, field), expected, found });
  if (blob.length < 8) throw bad("header length", "at least 8 bytes", `${blob.length} bytes`);
  const headerLen = blob.readBigUInt64LE(0);
  if (headerLen > BigInt(blob.length - 8)) throw bad("header length", `≤ ${blob.length - 8}`, headerLen.toString());
  const hl = Number(headerLen);
  const fail = (issue: SafetensorsIssue): never => {
    throw bad(issue.field, issue.expected, issue.found ?? "");
  };
  const h = parseHeaderJson(blob.toString("utf8", 8, 8 + hl), fail);
  const meta = h.__metadata__ as Record<string, unknown> | undefined;
  if (!meta || typeof meta !== "object" || typeof meta.kind !== "string" || typeof meta.json !== "string") {
    throw bad("__metadata__", '{"kind": string, "json": string}', meta === undefined ? "missing" : short(meta));
  }
  if (!(RECORD_KINDS as readonly string[]).includes(meta.kind)) throw bad("__metadata__.kind", RECORD_KINDS.join(" | "), meta.kind);
  let json: unknown;
  try {
    json = JSON.parse(meta.json);
  } catch (e) {
    throw bad("__metadata__.json", "valid JSON", (e as Error).message);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw bad("__metadata__.json", "a JSON object", typeof json);

  const dataStart = 8 + hl;
  const tensors = new Map<string, RawTensor>();
  const entries = validateTensorEntries(h, blob.length - dataStart, TRACE_DTYPE_BYTES, fail);
  checkCoverage(entries, blob.length - dataStart, fail);
  for (const { name, dtype, shape, begin, end } of entries) {
    // Copy into a fresh, aligned array: blob offsets need not be 4-byte aligned in memory.
    const count = (end - begin) / 4;
    const data = dtype === "F32" ? new Float32Array(count) : new Int32Array(count);
    blob.copy(Buffer.from(data.buffer), 0, dataStart + begin, dataStart + end);
    tensors.set(name, { dtype: dtype as TraceDType, shape, data });
  }
  return { kind: meta.kind as RecordKind, json: json as Record<string, unknown>, tensors };
}

export interface FramedRecord {
  blob: Buffer;
  offset: number;
}

/** Reads `len` bytes at byte `pos` (fewer at the end of the source). */
export type ReadAt = (pos: number, len: number) => Buffer;

export interface RecordStream {
  /** Complete, CRC-checked records in file order (read lazily: one blob in memory at a time). */
  records: Iterable<FramedRecord>;
  /** After iterating: where a cut-short last record began and how many bytes it had, if any. */
  truncation(): { at: number; trailing: number; complete: number } | undefined;
}

/**
 * Walk the framed records after the preamble, checking each CRC. A tail shorter than its declared
 * length ends the walk and is reported by `truncation()` rather than thrown, so the caller decides
 * between an error and a partial load.
 */
export function framedRecords(read: ReadAt, size: number, file: string): RecordStream {
  let cut: { at: number; trailing: number; complete: number } | undefined;
  function* walk(): Generator<FramedRecord> {
    let p = PREAMBLE_BYTES;
    let index = 0;
    while (p < size) {
      const n = size - p >= 8 ? read(p, 8).readBigUInt64LE(0) : undefined;
      // Either a torn final write or a corrupted length: no complete record here.
      if (n === undefined || n > BigInt(size - p - RECORD_OVERHEAD)) {
        cut = { at: p, trailing: size - p, complete: index };
        return;
      }
      const len = Number(n);
      const framed = read(p + 8, len + 4);
      const blob = framed.subarray(0, len);
      const stored = framed.readUInt32LE(len);
      const actual = zlib.crc32(blob);
      if (stored !== actual) {
        throw new TraceFormatError("Trace record is corrupted (checksum mismatch)", {
          file,
          field: `record ${index} (byte ${p})`,
          expected: `CRC-32 ${stored.toString(16).padStart(8, "0")}`,
          found: actual.toString(16).padStart(8, "0"),
        });
      }
      yield { blob, offset: p };
      index++;
      p += len + RECORD_OVERHEAD;
    }
  }
  return { records: { [Symbol.iterator]: walk }, truncation: () => cut };
}

/** Random access over an in-memory buffer. */
export function bufferReader(buf: Buffer): ReadAt {
  return (pos, len) => buf.subarray(pos, pos + len);
}

/** Random access over an open file descriptor. */
export function fileReader(fd: number): ReadAt {
  return (pos, len) => {
    const out = Buffer.alloc(len);
    let got = 0;
    while (got < len) {
      const n = fs.readSync(fd, out, got, len - got, pos + got);
      if (n === 0) break;
      got += n;
    }
    return out.subarray(0, got);
  };
}
