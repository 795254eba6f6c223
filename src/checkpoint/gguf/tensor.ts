/**
 * Decoding a GGUF tensor's stored bytes (`TensorInfo.encoding`): read exactly its bytes, put q/k
 * rows back in Hugging Face order, dequantise to float32. Row reordering happens on the stored
 * bytes (a row is a whole number of blocks), so it is the same for every ggml type.
 */
import * as fs from "node:fs";
import { CheckpointError } from "../../util/errors.js";
import type { TensorInfo } from "../types.js";
import { dequantize } from "./dequant.js";
import { GGML_TYPES, type GgmlTypeName } from "./format.js";

const TYPE_BY_NAME = new Map(Object.values(GGML_TYPES).map((t) => [t.name as string, t]));

/** Read `info`'s stored bytes (no decoding). */
export function readStoredBytes(info: TensorInfo): Buffer {
  const buf = Buffer.allocUnsafe(info.byteLength);
  let fd: number;
  try {
    fd = fs.openSync(info.file, "r");
  } catch (e) {
    throw new CheckpointError("Weight file cannot be opened", {
      file: info.file,
      field: info.name,
      expected: "a readable file",
      found: (e as Error).message,
    });
  }
  try {
    let done = 0;
    while (done < buf.length) {
      const got = fs.readSync(fd, buf, done, Math.min(buf.length - done, 1 << 30), info.byteOffset + done);
      if (got <= 0) {
        throw new CheckpointError("Tensor data is truncated", {
          file: info.file,
          field: info.name,
          expected: `${buf.length} bytes at offset ${info.byteOffset}`,
          found: `${done} bytes`,
        });
      }
      done += got;
    }
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Stream `info`'s stored bytes (no decoding) in chunks of whole `unitBytes` units (a quantised block or
 * one float), at most about `chunkBytes` each; the buffer is reused between calls.
 */
export function streamStoredBytes(info: TensorInfo, unitBytes: number, chunkBytes: number, onChunk: (bytes: Buffer) => void): void {
  const step = Math.max(unitBytes, Math.floor(chunkBytes / unitBytes) * unitBytes);
  const buf = Buffer.allocUnsafe(Math.min(step, info.byteLength));
  const fd = fs.openSync(info.file, "r");
  try {
    for (let off = 0; off < info.byteLength; off += step) {
      const view = buf.subarray(0, Math.min(step, info.byteLength - off));
      let done = 0;
      while (done < view.length) {
        const got = fs.readSync(fd, view, done, view.length - done, info.byteOffset + off + done);
        if (got <= 0) {
          throw new CheckpointError("Tensor data is truncated", {
            file: info.file,
            field: info.name,
            expected: `${info.byteLength} bytes at offset ${info.byteOffset}`,
            found: `${off + done} bytes`,
          });
        }
        done += got;
      }
      onChunk(view);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Rows in llama.cpp's rotary order → HF order: within each head of `d` rows, file row 2i + s
 * holds HF row s·d/2 + i. `rowBytes` is the stored size of one row.
 */
export function unpermuteRows(src: Uint8Array, rows: number, rowBytes: number, heads: number): Uint8Array {
  const d = rows / heads;
  const out = new Uint8Array(src.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < d / 2; i++) {
      for (let s = 0; s < 2; s++) {
        const from = (h * d + 2 * i + s) * rowBytes;
        const to = (h * d + s * (d / 2) + i) * rowBytes;
        out.set(src.subarray(from, from + rowBytes), to);
      }
    }
  }
  return out;
}

/** The tensor's values as float32 (decoded, rows in HF order). */
export function decodeTensor(info: TensorInfo): Float32Array {
  const enc = info.encoding;
  const type = TYPE_BY_NAME.get(enc?.ggmlType ?? info.dtype);
  if (type === undefined) {
    throw new CheckpointError("Tensor has an unknown encoding", {
      file: info.file,
      field: `${info.name}.encoding`,
      expected: "a ggml type name",
      found: String(enc?.ggmlType),
    });
  }
  const count = info.shape.reduce((a, b) => a * b, 1);
  let bytes: Uint8Array = readStoredBytes(info);
  const heads = enc?.unpermuteHeads;
  if (heads !== undefined) {
    const rows = info.shape[0];
    if (info.shape.length < 1 || rows % heads !== 0 || (rows / heads) % 2 !== 0) {
      throw new CheckpointError("Rotary rows do not split into heads", {
        file: info.file,
        field: info.name,
        expected: `rows divisible into ${heads} heads of even size`,
        found: `[${info.shape}]`,
      });
    }
    bytes = unpermuteRows(bytes, rows, bytes.length / rows, heads);
  }
  return dequantize(type.name as GgmlTypeName, bytes, count);
}
