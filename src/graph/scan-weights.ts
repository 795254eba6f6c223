/**
 * `scanWeights`: stream through a checkpoint's float tensors and report non-finite values (NaN,
 * ±Inf) by tensor name — a corrupt download or a diverged fine-tune shows up here, before it
 * shows up as a NaN attention map. Reads one chunk at a time (default 16 MiB), so a multi-GB
 * checkpoint never sits in memory.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { quantBlockBytes, quantScalesFinite } from "../checkpoint/gguf/dequant.js";
import type { GgmlTypeName } from "../checkpoint/gguf/format.js";
import { decodeTensor, streamStoredBytes } from "../checkpoint/gguf/tensor.js";
import { DTYPE_BYTES, streamTensorBytes } from "../checkpoint/safetensors.js";
import type { Checkpoint, TensorInfo } from "../checkpoint/types.js";
import { CheckpointError } from "../util/errors.js";
import { specTensorNames } from "./adapters/index.js";
import type { ModelSpec } from "./spec.js";

export interface NonFiniteTensor {
  tensor: string;
  file: string;
  dtype: string;
  /** NaN + Inf count. */
  count: number;
  nanCount: number;
  infCount: number;
  /** Flat (row-major) index of the first non-finite element. */
  firstIndex: number;
}

export interface ScanProgress {
  tensor: string;
  /** 0-based index of the tensor being scanned, of `total`. */
  index: number;
  total: number;
  bytesDone: number;
  bytesTotal: number;
}

export interface ScanResult {
  tensorsScanned: number;
  bytesScanned: number;
  /** Tensors with at least one non-finite value, in scan order; empty when the weights are clean. */
  nonFinite: NonFiniteTensor[];
  /** True when nothing was read: the same files were found clean before (`assertFiniteWeights`' verdict cache). */
  cached?: boolean;
}

export interface ScanOptions {
  onProgress?: (p: ScanProgress) => void;
  /** Bytes read per chunk (default 16 MiB). */
  chunkBytes?: number;
}

/**
 * Scan the tensors the spec reads (or, without a spec, every float tensor of the checkpoint).
 * @example
 *   const { nonFinite } = scanWeights(ckpt, spec, { onProgress: (p) => bar.update(p.bytesDone / p.bytesTotal) });
 */
export function scanWeights(checkpoint: Pick<Checkpoint, "tensors">, spec?: ModelSpec, options: ScanOptions = {}): ScanResult {
  const tensors = scannedTensors(checkpoint, spec);
  const bytesTotal = tensors.reduce((a, t) => a + t.byteLength, 0);
  const chunk = options.chunkBytes ?? 16 * 1024 * 1024;
  const nonFinite: NonFiniteTensor[] = [];
  let bytesDone = 0;
  tensors.forEach((t, index) => {
    options.onProgress?.({ tensor: t.name, index, total: tensors.length, bytesDone, bytesTotal });
    let nan = 0,
      inf = 0,
      first = -1;
    if (t.encoding && storedBytesClean(t, chunk)) {
      // GGUF: the stored bytes are clean, so the decoded tensor is too; nothing to count.
    } else if (t.encoding) {
      // Something to report (rare): decode and count exactly, by index in the decoded (HF) order.
      const f = decodeTensor(t);
      const r = countNonFinite(Buffer.from(f.buffer, f.byteOffset, f.byteLength), "F32");
      [nan, inf, first] = [r.nan, r.inf, r.first];
    } else {
      streamTensorBytes(t, chunk, (bytes, firstElement) => {
        const r = countNonFinite(bytes, t.dtype);
        if (r.first >= 0 && first < 0) first = firstElement + r.first;
        nan += r.nan;
        inf += r.inf;
      });
    }
    bytesDone += t.byteLength;
    if (nan + inf > 0) {
      nonFinite.push({ tensor: t.name, file: t.file, dtype: t.dtype, count: nan + inf, nanCount: nan, infCount: inf, firstIndex: first });
    }
  });
  options.onProgress?.({ tensor: "", index: tensors.length, total: tensors.length, bytesDone, bytesTotal });
  return { tensorsScanned: tensors.length, bytesScanned: bytesDone, nonFinite };
}

/** The tensors a scan reads: the float tensors the spec uses (or every float tensor). */
function scannedTensors(checkpoint: Pick<Checkpoint, "tensors">, spec?: ModelSpec): TensorInfo[] {
  const names = spec ? specTensorNames(spec) : [...checkpoint.tensors.keys()];
  return names
    .map((n) => checkpoint.tensors.get(n))
    .filter((t): t is TensorInfo => t !== undefined && ["F32", "F16", "BF16", "F64"].includes(t.dtype));
}

/**
 * Where a clean verdict on these tensors is remembered: a file named by the hash of the tensor
 * names and of each file's real path, size and mtime (a rewritten file is scanned again).
 * Undefined when a file cannot be identified.
 */
function verdictFile(dir: string, tensors: TensorInfo[]): string | undefined {
  try {
    const files = [...new Set(tensors.map((t) => t.file))].sort().map((f) => {
      const real = fs.realpathSync(f);
      const st = fs.statSync(real);
      return [real, st.size, st.mtimeMs];
    });
    const names = tensors.map((t) => t.name).sort();
    const key = createHash("sha256")
      .update(JSON.stringify({ format: 1, files, names }))
      .digest("hex")
      .slice(0, 32);
    return path.join(dir, "finite", key);
  } catch {
    return undefined;
  }
}

/**
 * A GGUF tensor checked on its stored bytes, without decoding: float types by bit pattern, quantised
 * types by their block scales (`quantScalesFinite`). The engine decodes these tensors anyway; the
 * scan used to decode them a first time just to look for NaN.
 */
function storedBytesClean(t: TensorInfo, chunk: number): boolean {
  const type = t.encoding!.ggmlType as GgmlTypeName;
  const block = quantBlockBytes(type);
  const unit = block ?? DTYPE_BYTES[type as keyof typeof DTYPE_BYTES];
  if (unit === undefined) return false; // unknown here: let the decoder decide (and name the problem)
  let clean = true;
  streamStoredBytes(t, unit, chunk, (bytes) => {
    if (clean) clean = block !== undefined ? quantScalesFinite(type, bytes) : countNonFinite(bytes, type).first < 0;
  });
  return clean;
}

/**
 * Count NaN/Inf by bit pattern (exponent all ones): no conversion to float needed. Little-endian
 * data (the safetensors format) on a little-endian host.
 */
export function countNonFinite(bytes: Buffer, dtype: string): { nan: number; inf: number; first: number } {
  let nan = 0,
    inf = 0,
    first = -1;
  const n = bytes.length / DTYPE_BYTES[dtype as keyof typeof DTYPE_BYTES];
  const note = (i: number, isNan: boolean) => {
    if (isNan) nan++;
    else inf++;
    if (first < 0) first = i;
  };
  // Copy only when unaligned (typed-array views need aligned offsets).
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : Buffer.from(bytes);
  if (dtype !== "F64" && !anyNonFinite(aligned, dtype)) return { nan, inf, first };
  if (dtype === "F32") {
    const u = new Uint32Array(aligned.buffer, aligned.byteOffset, n);
    for (let i = 0; i < n; i++) if ((u[i] & 0x7f800000) === 0x7f800000) note(i, (u[i] & 0x007fffff) !== 0);
  } else if (dtype === "F16") {
    const u = new Uint16Array(aligned.buffer, aligned.byteOffset, n);
    for (let i = 0; i < n; i++) if ((u[i] & 0x7c00) === 0x7c00) note(i, (u[i] & 0x03ff) !== 0);
  } else if (dtype === "BF16") {
    const u = new Uint16Array(aligned.buffer, aligned.byteOffset, n);
    for (let i = 0; i < n; i++) if ((u[i] & 0x7f80) === 0x7f80) note(i, (u[i] & 0x007f) !== 0);
  } else if (dtype === "F64") {
    const f = new Float64Array(aligned.buffer, aligned.byteOffset, n);
    for (let i = 0; i < n; i++) if (!Number.isFinite(f[i])) note(i, Number.isNaN(f[i]));
  }
  return { nan, inf, first };
}

/** Exponent masks per 32-bit word and the add that carries into each element's top bit when its exponent is all ones. */
const WORD_TEST: Record<string, { mask: number; add: number; top: number }> = {
  F32: { mask: 0x7f800000, add: 0x00800000, top: 0x80000000 },
  BF16: { mask: 0x7f807f80, add: 0x00800080, top: 0x80008000 },
  F16: { mask: 0x7c007c00, add: 0x04000400, top: 0x80008000 },
};

/**
 * Whether any element of a (4-byte aligned) chunk is NaN or ±Inf, two 16-bit elements per
 * 32-bit word: an exponent field e (masked) is all ones exactly when e + (its lowest bit) carries
 * into the element's sign position, and no carry crosses into the next element. About 2.5× faster
 * than testing element by element, and weights are almost always clean, so the exact count
 * above runs only on chunks that have something to report.
 */
function anyNonFinite(bytes: Buffer, dtype: string): boolean {
  const t = WORD_TEST[dtype];
  if (!t) return true;
  const words = bytes.length >>> 2;
  const w = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
  let acc = 0;
  for (let i = 0; i < words; i++) acc |= ((w[i] & t.mask) + t.add) & t.top;
  if (acc !== 0) return true;
  // a trailing 16-bit element (odd count) is left to the exact loop
  return bytes.length % 4 !== 0;
}

/** How many non-finite tensors an error lists by name before "and N more". */
const LISTED = 5;

export interface AssertFiniteOptions extends ScanOptions {
  /**
   * Folder where a clean verdict is remembered (opening a model passes the weight cache's,
   * `defaultWeightCacheDir()`), so the next check of the same unchanged files reads nothing (an 8B
   * GGUF took 8 s to scan). Only clean verdicts are kept. Default: none, always scan.
   */
  verdictCache?: string;
}

/**
 * Refuse weights with NaN/Inf: a `CheckpointError` naming each affected tensor (up to five,
 * then a count), its file, and the first bad index. Used by `createEngine` unless
 * `scanWeights: false` (CLI: `--no-weight-scan`).
 */
export function assertFiniteWeights(
  checkpoint: Pick<Checkpoint, "tensors">,
  spec?: ModelSpec,
  options: AssertFiniteOptions = {},
): ScanResult {
  const verdict = options.verdictCache ? verdictFile(options.verdictCache, scannedTensors(checkpoint, spec)) : undefined;
  if (verdict && fs.existsSync(verdict)) {
    const tensors = scannedTensors(checkpoint, spec);
    return { tensorsScanned: tensors.length, bytesScanned: 0, nonFinite: [], cached: true };
  }
  const r = scanWeights(checkpoint, spec, options);
  if (r.nonFinite.length === 0) {
    if (verdict) {
      try {
        fs.mkdirSync(path.dirname(verdict), { recursive: true });
        fs.writeFileSync(verdict, "");
      } catch {
        // a read-only cache folder: scan again next time
      }
    }
    return r;
  }
  const first = r.nonFinite[0];
  const listed = r.nonFinite
    .slice(0, LISTED)
    .map((t) => `${t.tensor} (${t.dtype}: ${t.nanCount} NaN, ${t.infCount} Inf, first at flat index ${t.firstIndex})`);
  const more = r.nonFinite.length > LISTED ? `; and ${r.nonFinite.length - LISTED} more tensors` : "";
  throw new CheckpointError(`Checkpoint weights contain NaN/Inf in ${r.nonFinite.length} of ${r.tensorsScanned} tensors`, {
    file: first.file,
    field: first.tensor,
    expected: "finite values in every weight",
    found: listed.join("; ") + more,
    hint: "the download is corrupt or the fine-tune diverged; to load it anyway pass --no-weight-scan (library: scanWeights: false)",
  });
}
