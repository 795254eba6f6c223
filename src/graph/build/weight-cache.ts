/**
 * Where decoded weights go (GGUF quantised blocks repacked for MatMulNBits, tensors dequantised or
 * reordered): a file onnxruntime maps into memory, or buffers handed to it from JS.
 *
 * The file is a cache: `<dir>/<key>.bin` holds every decoded tensor at a page-aligned offset and
 * `<key>.json` says where. The key hashes the checkpoint files (real path, size, mtime) and the
 * settings that change the decoded bytes, so the next engine on the same checkpoint decodes
 * nothing. Why a file rather than buffers: onnxruntime maps external-data files and, once a
 * MatMulNBits weight is prepacked, drops its mapping, so the blocks are in memory once; buffers
 * handed over from JS stay alive beside onnxruntime's copy while the session is built (an 8B-shaped
 * Q4_0 GGUF peaked at 16 GB that way, and at 5.1 GB, 1.13× its file, through the mapped file).
 *
 * A cache entry is written to temporary names and renamed into place, the data before the index, so
 * a reader never sees a half-written one; two processes building the same entry each write their
 * own and the last rename wins (same bytes).
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { RuntimeError } from "../../util/errors.js";

/** Bumped whenever the decoded layout changes, so old cache entries are never read. */
export const WEIGHT_CACHE_FORMAT = 1;

/** Offsets are multiples of this, so onnxruntime can map each tensor on its own. */
const ALIGN = 4096;

export interface DecodedTensor {
  name: string;
  dataType: number;
  dims: number[];
  data: Uint8Array;
}

/** Where one decoded tensor's bytes are: ONNX external-data fields. */
export interface PlacedTensor {
  name: string;
  dataType: number;
  dims: number[];
  location: string;
  offset: number;
  length: number;
}

export interface DecodedSink {
  /**
   * The tensors of group `key` (the decoded forms of one checkpoint tensor), made by `make` unless
   * already cached; undefined when `make` declined (then nothing is stored for the group).
   */
  group(key: string, make: () => DecodedTensor[] | undefined): PlacedTensor[] | undefined;
  /** Close the entry (rename it into place). Call once, after the last group. */
  finish(): void;
  /** Drop a half-written entry (the graph build failed). */
  abort(): void;
  /** Real paths of the files the placed tensors live in. */
  files(): string[];
  /** Tensors held in memory (no cache dir, or a group the cache entry lacks), by virtual location. */
  buffers: { path: string; data: Uint8Array }[];
  /** "memory", "hit" (nothing decoded) or "written" (decoded and stored now). */
  readonly state: () => "memory" | "hit" | "written";
}

/** `$FLOATSCOPE_CACHE_DIR`, else `<tmpdir>/floatscope-weights`. */
export function defaultWeightCacheDir(): string {
  return process.env.FLOATSCOPE_CACHE_DIR || path.join(os.tmpdir(), "floatscope-weights");
}

/** The cache key of decoded weights from `files` under `settings` (files identified by real path, size and mtime). */
export function weightCacheKey(files: string[], settings: Record<string, unknown>): string {
  const ids = [...new Set(files)].sort().map((f) => {
    const real = fs.realpathSync(f);
    const st = fs.statSync(real);
    return [real, st.size, st.mtimeMs];
  });
  return createHash("sha256")
    .update(JSON.stringify({ format: WEIGHT_CACHE_FORMAT, ids, settings }))
    .digest("hex")
    .slice(0, 32);
}

interface Manifest {
  format: number;
  key: string;
  size: number;
  groups: Record<string, Omit<PlacedTensor, "location">[] | null>;
}

/**
 * Write all of `data` at `position` of `file` (open as `fd`), in calls of at most `maxChunk` bytes:
 * fs.writeSync takes at most 2 GiB − 1 bytes a call, and a Dream-7B embedding in float32 is 2.18 GB.
 * A full disk is a RuntimeError naming the file and what would help, not an internal error.
 */
export function writeAllAt(fd: number, data: Uint8Array, position: number, file: string, maxChunk = 1 << 30): void {
  let done = 0;
  try {
    while (done < data.byteLength) done += fs.writeSync(fd, data, done, Math.min(data.byteLength - done, maxChunk), position + done);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOSPC" && code !== "EDQUOT") throw e;
    throw new RuntimeError("No space left for the decoded-weight cache", {
      file,
      expected: `room for ${data.byteLength - done} more bytes of a decoded tensor`,
      found: code,
      hint: "free disk space, point $FLOATSCOPE_CACHE_DIR at a disk with room, or open with weightCache: false",
    });
  }
}

/** Decoded tensors as in-memory buffers under virtual locations (no cache). */
export function memorySink(): DecodedSink {
  const buffers: { path: string; data: Uint8Array }[] = [];
  const place = (t: DecodedTensor): PlacedTensor => {
    const location = `floatscope-decoded-${buffers.length}.bin`;
    buffers.push({ path: location, data: t.data });
    return { name: t.name, dataType: t.dataType, dims: t.dims, location, offset: 0, length: t.data.byteLength };
  };
  return {
    group: (_key, make) => make()?.map(place),
    finish: () => undefined,
    abort: () => undefined,
    files: () => [],
    buffers,
    state: () => "memory",
  };
}

function readManifest(file: string, key: string, bin: string): Manifest | undefined {
  try {
    const m = JSON.parse(fs.readFileSync(file, "utf8")) as Manifest;
    if (m.format !== WEIGHT_CACHE_FORMAT || m.key !== key || fs.statSync(bin).size !== m.size) return undefined;
    return m;
  } catch {
    return undefined;
  }
}

/**
 * Decoded tensors in the cache entry `key` under `dir`: read from it when it is complete, else
 * decoded now and written to it. A group the complete entry lacks is decoded into memory.
 */
export function cacheSink(dir: string, key: string): DecodedSink {
  fs.mkdirSync(dir, { recursive: true });
  const bin = path.join(dir, `${key}.bin`);
  const index = path.join(dir, `${key}.json`);
  const location = path.basename(bin);
  const hit = readManifest(index, key, bin);
  const fallback = memorySink();
  if (hit) {
    return {
      group(k, make) {
        const g = hit.groups[k];
        if (g === null) return undefined;
        if (g === undefined) return fallback.group(k, make);
        return g.map((t) => ({ ...t, location }));
      },
      finish: () => undefined,
      abort: () => undefined,
      files: () => [fs.realpathSync(bin)],
      buffers: fallback.buffers,
      state: () => "hit",
    };
  }
  const tmp = `${bin}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, "w");
  let size = 0;
  const groups: Manifest["groups"] = {};
  const write = (t: DecodedTensor): PlacedTensor => {
    const offset = Math.ceil(size / ALIGN) * ALIGN;
    writeAllAt(fd, t.data, offset, tmp);
    size = offset + t.data.byteLength;
    return { name: t.name, dataType: t.dataType, dims: t.dims, location, offset, length: t.data.byteLength };
  };
  let finished = false;
  return {
    group(k, make) {
      const made = make();
      const placed = made?.map(write);
      groups[k] = placed ? placed.map(({ location: _, ...rest }) => rest) : null;
      return placed;
    },
    finish() {
      if (finished) return;
      finished = true;
      fs.closeSync(fd);
      fs.renameSync(tmp, bin);
      const manifest: Manifest = { format: WEIGHT_CACHE_FORMAT, key, size, groups };
      fs.writeFileSync(`${index}.${process.pid}.tmp`, JSON.stringify(manifest));
      fs.renameSync(`${index}.${process.pid}.tmp`, index);
    },
    abort() {
      if (finished) return;
      finished = true;
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
    },
    files: () => [path.resolve(bin)],
    buffers: fallback.buffers,
    state: () => "written",
  };
}
