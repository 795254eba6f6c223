/**
 * safetensors: an 8-byte little-endian header length N, N bytes of JSON header
 * `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: {str: str}}`, then the
 * data. Offsets are relative to the end of the header.
 *
 * The reader validates everything before anything is trusted: header length against the file
 * size and a sanity cap (no giant allocation from a lying length), JSON shape, dtype names,
 * shape × dtype size == byte range, ranges inside the file, no overlaps. Errors name the file
 * and the tensor/field.
 *
 * The writer is used by tests and fixtures. The byte layout and the header checks themselves are
 * in `util/safetensors-codec.ts`, shared with the trace format (one safetensors blob per record).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { CheckpointError } from "../util/errors.js";
import { openRegularFile } from "../util/paths.js";
import { decodeTensor } from "./gguf/tensor.js";
import {
  checkCoverage,
  layoutSafetensors,
  parseHeaderJson,
  validateTensorEntries,
  type SafetensorsIssue,
  type TensorBytes,
} from "../util/safetensors-codec.js";
import type { SafetensorsDType, TensorInfo } from "./types.js";

/** Bytes per element for each dtype. */
export const DTYPE_BYTES: Record<SafetensorsDType, number> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U64: 8,
  U32: 4,
  U16: 2,
  U8: 1,
  BOOL: 1,
};

/** Headers larger than this are refused: real checkpoints have headers of a few hundred KB. */
export const MAX_HEADER_BYTES = 100 * 1024 * 1024;

export interface SafetensorsHeader {
  /** Absolute, symlink-resolved path. */
  file: string;
  /** Byte offset where tensor data starts (8 + header length). */
  dataStart: number;
  fileSize: number;
  tensors: TensorInfo[];
  metadata: Record<string, string>;
}

/**
 * Read and validate the header of one safetensors file. Reads only the header bytes.
 * @param file path (symlinks are resolved: ORT external data must name the real file)
 */
export function readSafetensorsHeader(file: string): SafetensorsHeader {
  // A FIFO, socket, folder, dangling link or loop named *.safetensors is refused here; the open
  // never blocks (O_NONBLOCK) and the descriptor itself is checked.
  const opened = openRegularFile(file, { what: "safetensors file", error: CheckpointError, field: "(file)" });
  const fd = opened.fd;
  let real: string;
  try {
    real = fs.realpathSync(opened.path);
  } catch {
    fs.closeSync(fd);
    throw new CheckpointError("Safetensors file not found", { file, field: "(file)", expected: "an existing .safetensors file" });
  }
  try {
    const fileSize = opened.size;
    if (fileSize < 8) {
      throw new CheckpointError("Safetensors file is too short to hold a header length", {
        file,
        field: "header length",
        expected: "at least 8 bytes",
        found: `${fileSize} bytes`,
      });
    }
    const lenBuf = Buffer.alloc(8);
    fs.readSync(fd, lenBuf, 0, 8, 0);
    const headerLen = lenBuf.readBigUInt64LE(0);
    if (headerLen === 0n || headerLen > BigInt(Math.min(MAX_HEADER_BYTES, fileSize - 8))) {
      throw new CheckpointError("Safetensors header length is impossible", {
        file,
        field: "header length",
        expected: `1..${Math.min(MAX_HEADER_BYTES, fileSize - 8)} bytes (file is ${fileSize} bytes)`,
        found: headerLen.toString(),
      });
    }
    const n = Number(headerLen);
    const headerBuf = Buffer.alloc(n);
    const got = fs.readSync(fd, headerBuf, 0, n, 8);
    if (got !== n) {
      throw new CheckpointError("Safetensors header is truncated", {
        file,
        field: "header",
        expected: `${n} bytes`,
        found: `${got} bytes`,
      });
    }
    return parseHeader(real, headerBuf, 8 + n, fileSize);
  } finally {
    fs.closeSync(fd);
  }
}

function openOrThrow(real: string, given: string): number {
  try {
    return fs.openSync(real, "r");
  } catch (e) {
    throw new CheckpointError("Cannot open safetensors file", { file: given, field: "(file)", found: (e as Error).message });
  }
}

/** Messages for header problems, by kind (the field, expected and found come with the issue). */
const ISSUE_MESSAGE: Record<SafetensorsIssue["kind"], string> = {
  json: "Safetensors header is not valid JSON",
  header: "Safetensors header is not a JSON object",
  entry: "Safetensors header entry is invalid",
  overlap: "Safetensors tensors overlap",
  coverage: "Safetensors data is not exactly covered by its tensors",
};

function parseHeader(file: string, headerBuf: Buffer, dataStart: number, fileSize: number): SafetensorsHeader {
  const fail = (issue: SafetensorsIssue): never => {
    throw new CheckpointError(ISSUE_MESSAGE[issue.kind], { file, field: issue.field, expected: issue.expected, found: issue.found });
  };
  const json = parseHeaderJson(headerBuf.toString("utf8"), fail);
  let metadata: Record<string, string> = {};
  const entries = validateTensorEntries(json, fileSize - dataStart, DTYPE_BYTES, fail, (entry) => {
    metadata = validateMetadata(file, entry);
  });
  checkCoverage(entries, fileSize - dataStart, fail);
  const tensors: TensorInfo[] = entries.map(({ name, dtype, shape, begin, end }) => ({
    name,
    file,
    dtype: dtype as SafetensorsDType,
    shape,
    byteOffset: dataStart + begin,
    byteLength: end - begin,
  }));
  return { file, dataStart, fileSize, tensors, metadata };
}

function validateMetadata(file: string, entry: unknown): Record<string, string> {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
    throw new CheckpointError("Safetensors __metadata__ is not an object", { file, field: "__metadata__", expected: "{string: string}" });
  }
  for (const [k, v] of Object.entries(entry)) {
    if (typeof v !== "string") {
      throw new CheckpointError("Safetensors __metadata__ value is not a string", {
        file,
        field: `__metadata__.${k}`,
        expected: "string",
        found: typeof v,
      });
    }
  }
  return entry as Record<string, string>;
}

/**
 * Read one tensor's bytes (copy) in its `dtype`. Validated header first: offsets are trusted here.
 * A tensor with an `encoding` (GGUF quantised / permuted) is decoded to float32 bytes.
 */
export function readTensorBytes(info: TensorInfo): Buffer {
  if (info.encoding) {
    const f = decodeTensor(info);
    return Buffer.from(f.buffer, f.byteOffset, f.byteLength);
  }
  const buf = Buffer.alloc(info.byteLength);
  const fd = openOrThrow(info.file, info.file);
  try {
    readFully(fd, buf, info.byteOffset, info);
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}

/** readSync may return short counts (and caps one call at 2 GiB): loop until the buffer is full. */
function readFully(fd: number, buf: Buffer, position: number, info: TensorInfo): void {
  let done = 0;
  while (done < buf.length) {
    const got = fs.readSync(fd, buf, done, Math.min(buf.length - done, 1 << 30), position + done);
    if (got <= 0) {
      throw new CheckpointError("Tensor data is truncated", {
        file: info.file,
        field: info.name,
        expected: `${buf.length} bytes at offset ${position}`,
        found: `${done} bytes`,
      });
    }
    done += got;
  }
}

/**
 * Stream one tensor's bytes in chunks of at most `chunkBytes` (rounded down to whole elements),
 * so a multi-GB embedding never has to sit in memory at once. `onChunk` receives the bytes and
 * the index of the chunk's first element; the buffer is reused between calls.
 */
export function streamTensorBytes(info: TensorInfo, chunkBytes: number, onChunk: (bytes: Buffer, firstElement: number) => void): void {
  if (info.encoding) {
    // Quantised blocks decode as a whole; then hand the float32 bytes out in the same chunks.
    const all = readTensorBytes(info);
    const step = Math.max(4, Math.floor(chunkBytes / 4) * 4);
    for (let off = 0; off < all.length; off += step) onChunk(all.subarray(off, Math.min(all.length, off + step)), off / 4);
    return;
  }
  const elem = DTYPE_BYTES[info.dtype];
  const step = Math.max(elem, Math.floor(chunkBytes / elem) * elem);
  const buf = Buffer.alloc(Math.min(step, info.byteLength));
  const fd = openOrThrow(info.file, info.file);
  try {
    for (let off = 0; off < info.byteLength; off += step) {
      const n = Math.min(step, info.byteLength - off);
      const view = n === buf.length ? buf : buf.subarray(0, n);
      readFully(fd, view, info.byteOffset + off, info);
      onChunk(view, off / elem);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Read a floating-point tensor as Float32Array (F32/F16/BF16/F64 converted). */
export function readTensorF32(info: TensorInfo): Float32Array {
  if (info.encoding) return decodeTensor(info);
  const raw = readTensorBytes(info);
  const n = info.byteLength / DTYPE_BYTES[info.dtype];
  switch (info.dtype) {
    case "F32":
      // Little-endian host assumed (x86, ARM), as onnxruntime itself does; slice gives an aligned copy.
      return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
    case "F64": {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = raw.readDoubleLE(i * 8);
      return out;
    }
    case "BF16": {
      const out = new Float32Array(n);
      const u32 = new Uint32Array(out.buffer);
      for (let i = 0; i < n; i++) u32[i] = raw.readUInt16LE(i * 2) << 16;
      return out;
    }
    case "F16": {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = f16ToF32(raw.readUInt16LE(i * 2));
      return out;
    }
    default:
      throw new CheckpointError("Tensor is not floating point", {
        file: info.file,
        field: `${info.name}.dtype`,
        expected: "F32, F16, BF16 or F64",
        found: info.dtype,
      });
  }
}

/** IEEE half → float. */
export function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** A tensor to write: data must already be in the named dtype's little-endian layout (typed arrays are, on x86/ARM). */
export interface TensorToWrite {
  dtype: SafetensorsDType;
  shape: number[];
  data: ArrayBufferView;
}

/**
 * Serialise tensors into safetensors bytes. Header padded with spaces to a multiple of 8 (as HF
 * does), tensors laid out in the given order.
 */
export function encodeSafetensors(tensors: Record<string, TensorToWrite>, metadata?: Record<string, string>): Buffer {
  const laidOut = Object.entries(tensors).map(([name, t]): [string, TensorBytes] => {
    const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count * DTYPE_BYTES[t.dtype] !== bytes.length) {
      throw new CheckpointError("Tensor data does not match its shape and dtype", {
        field: name,
        expected: `${count * DTYPE_BYTES[t.dtype]} bytes`,
        found: `${bytes.length} bytes`,
      });
    }
    return [name, { dtype: t.dtype, shape: t.shape, bytes }];
  });
  const { head, parts } = layoutSafetensors(laidOut, metadata && Object.keys(metadata).length ? metadata : undefined);
  return Buffer.concat([head, ...parts]);
}

/** Write a safetensors file atomically (temp file + rename: never a half-written file). */
export function writeSafetensors(file: string, tensors: Record<string, TensorToWrite>, metadata?: Record<string, string>): void {
  const bytes = encodeSafetensors(tensors, metadata);
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
}
