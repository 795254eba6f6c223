/**
 * The session cache: onnxruntime's optimized model, with its prepacked weights, saved on the first
 * open of a graph and loaded on the next ones.
 *
 * Why: creating a session prepacks every constant weight into the kernels' layouts, one weight after
 * another on one thread. onnxruntime can write the optimized graph with the prepacked blobs as
 * external data (`session.save_external_prepacked_constant_initializers`) and map them back on load.
 * Measured (docs/engine.md, "Opening a large quantised model"): no faster for an 8B-shaped Q4_0 GGUF
 * on onnxruntime 1.30, whose MatMulNBits kernel packs its weights again, so the engine leaves it off
 * unless asked (`EngineOptions.sessionCache`). Nor on the claims grid's 135M models (f32 weights;
 * BENCHMARKS.md, "Claims start-up and throughput", bench/startup.ts): a loaded entry saves only the
 * prepacking share of the session (a session built without prepacking costs the same), most of
 * which is onnxruntime setting up the graph's ~4000 nodes whether or not it optimises them; the
 * process's CPU to its first step falls by 3–16 %, writing an entry costs 11–39 % more, and an
 * entry is 1.08 GB, twice the weights. So `floatscope eval --grid` does not use it either.
 *
 * An entry is a folder `<dir>/<key>/` holding `model.onnx`, `model.data` and `entry.json` (format,
 * key, each file's size, the model file's SHA-256). The key hashes everything the saved model
 * depends on: the graph's bytes (which name the weight-cache entry, itself keyed by the checkpoint
 * files' identity), the identity (real path, size, mtime) of every external-data file the graph
 * reads, the onnxruntime version, the CPU (prepacked layouts are chosen per instruction set) and
 * the session options that change the optimized graph. Thread counts do not enter: the packed
 * layout does not depend on them.
 *
 * Safety: the entry is written in a temporary folder and renamed into place once complete, so a
 * reader never sees a half-written one; an entry whose files disagree with `entry.json`, or that
 * onnxruntime fails to load, is removed and rebuilt (one warning line, no stack trace). After a
 * write, the oldest entries are removed while the cache holds more than `maxBytes`.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { dedupeSubgraphInitializers } from "../graph/onnx/dedupe-initializers.js";

/** Bumped whenever an entry's layout changes, so old entries are never read. */
export const SESSION_CACHE_FORMAT = 1;

/** Entries are removed, oldest first, while the cache holds more than this (default 16 GiB; `$FLOATSCOPE_SESSION_CACHE_MAX_BYTES`). */
export function sessionCacheMaxBytes(): number {
  const env = Number(process.env.FLOATSCOPE_SESSION_CACHE_MAX_BYTES);
  return Number.isFinite(env) && env > 0 ? env : 16 * 2 ** 30;
}

export const MODEL_FILE = "model.onnx";
export const DATA_FILE = "model.data";
const ENTRY_FILE = "entry.json";

/** How the session was made: "off" (no cache), "hit" (loaded), "written" (built and saved), "rebuilt" (a broken entry was replaced). */
export type SessionCacheState = "off" | "hit" | "written" | "rebuilt";

export interface SessionCacheReport {
  state: SessionCacheState;
  /** The entry's folder, when one was read or written. */
  dir?: string;
  /** Bytes of the entry on disk (model and prepacked data). */
  bytes?: number;
}

interface EntryManifest {
  format: number;
  key: string;
  sizes: Record<string, number>;
  modelSha256: string;
}

let ortVersion: string | undefined;
function onnxruntimeVersion(): string {
  if (ortVersion === undefined) {
    try {
      const req = createRequire(import.meta.url);
      ortVersion = (req("onnxruntime-node/package.json") as { version: string }).version;
    } catch {
      ortVersion = "unknown";
    }
  }
  return ortVersion;
}

function identity(file: string): [string, number, number] {
  const real = fs.realpathSync(file);
  const st = fs.statSync(real);
  return [real, st.size, st.mtimeMs];
}

/** The key of a session built from `graph` reading `externalFiles`, under `settings` (the options that change the optimized model). */
export function sessionCacheKey(graph: Uint8Array, externalFiles: string[], settings: Record<string, unknown>): string {
  const cpu = os.cpus()[0]?.model ?? "";
  return createHash("sha256")
    .update(
      JSON.stringify({
        format: SESSION_CACHE_FORMAT,
        ort: onnxruntimeVersion(),
        platform: process.platform,
        arch: process.arch,
        cpu,
        graph: createHash("sha256").update(graph).digest("hex"),
        files: [...new Set(externalFiles)].sort().map(identity),
        settings,
      }),
    )
    .digest("hex")
    .slice(0, 32);
}

const sha256File = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

function entrySize(entry: string): number {
  let n = 0;
  for (const f of fs.readdirSync(entry)) n += fs.statSync(path.join(entry, f)).size;
  return n;
}

export type Lookup = { kind: "hit"; model: string; dir: string; bytes: number } | { kind: "miss" } | { kind: "broken"; why: string };

/** The complete entry `key` under `dir`, or why the folder there is not one (then it has been removed). */
export function lookupEntry(dir: string, key: string): Lookup {
  const entry = path.join(dir, key);
  if (!fs.existsSync(entry)) return { kind: "miss" };
  let why: string | undefined;
  try {
    const m = JSON.parse(fs.readFileSync(path.join(entry, ENTRY_FILE), "utf8")) as EntryManifest;
    if (m.format !== SESSION_CACHE_FORMAT || m.key !== key) why = `${ENTRY_FILE} is for another format or key`;
    else {
      for (const [name, size] of Object.entries(m.sizes)) {
        const st = fs.statSync(path.join(entry, name), { throwIfNoEntry: false });
        if (!st || st.size !== size) {
          why = `${name} has ${st ? st.size : "no"} bytes, expected ${size}`;
          break;
        }
      }
      if (!why && sha256File(path.join(entry, MODEL_FILE)) !== m.modelSha256) why = `${MODEL_FILE} does not match its checksum`;
    }
  } catch (e) {
    why = `${ENTRY_FILE} unreadable (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`;
  }
  if (why) {
    removeEntry(entry);
    return { kind: "broken", why };
  }
  // touched on use: eviction removes the least recently used entries first
  const now = new Date();
  fs.utimesSync(path.join(entry, ENTRY_FILE), now, now);
  return { kind: "hit", model: path.join(entry, MODEL_FILE), dir: entry, bytes: entrySize(entry) };
}

export function removeEntry(entry: string): void {
  fs.rmSync(entry, { recursive: true, force: true });
}

export interface PendingEntry {
  /** Where onnxruntime writes the optimized model (its data file goes beside it, as DATA_FILE). */
  model: string;
  /** Repair, check in and move the entry into place; returns the report. */
  commit(): SessionCacheReport & { dir: string; bytes: number };
  /** Drop the temporary folder. */
  abort(): void;
}

/** A temporary folder for entry `key` under `dir`, to be committed once onnxruntime has written into it. */
export function pendingEntry(dir: string, key: string): PendingEntry {
  fs.mkdirSync(dir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(dir, `${key}.tmp-`));
  const model = path.join(tmp, MODEL_FILE);
  return {
    model,
    commit() {
      // onnxruntime writes each subgraph initializer twice and then refuses its own file (dedupe-initializers.ts)
      const { bytes } = dedupeSubgraphInitializers(new Uint8Array(fs.readFileSync(model)));
      fs.writeFileSync(model, bytes);
      const sizes: Record<string, number> = {};
      for (const f of fs.readdirSync(tmp)) sizes[f] = fs.statSync(path.join(tmp, f)).size;
      const manifest: EntryManifest = { format: SESSION_CACHE_FORMAT, key, sizes, modelSha256: sha256File(model) };
      fs.writeFileSync(path.join(tmp, ENTRY_FILE), JSON.stringify(manifest));
      const entry = path.join(dir, key);
      try {
        fs.renameSync(tmp, entry);
      } catch {
        // another process put the same entry in place first (same key: same content)
        fs.rmSync(tmp, { recursive: true, force: true });
      }
      evict(dir, sessionCacheMaxBytes(), entry);
      return { state: "written", dir: entry, bytes: entrySize(entry) };
    },
    abort: () => fs.rmSync(tmp, { recursive: true, force: true }),
  };
}

/** Remove the least recently used entries (and stale temporary folders) while `dir` holds more than `maxBytes`; `keep` stays. */
export function evict(dir: string, maxBytes: number, keep: string): void {
  const entries: { dir: string; used: number; bytes: number }[] = [];
  for (const name of fs.readdirSync(dir)) {
    const entry = path.join(dir, name);
    try {
      if (name.includes(".tmp-")) {
        // a write that died (killed process): older than a day, it is nobody's
        if (Date.now() - fs.statSync(entry).mtimeMs > 86_400_000) removeEntry(entry);
        continue;
      }
      const used = fs.statSync(path.join(entry, ENTRY_FILE), { throwIfNoEntry: false })?.mtimeMs;
      if (used !== undefined) entries.push({ dir: entry, used, bytes: entrySize(entry) });
    } catch {
      // removed meanwhile by another process
    }
  }
  let total = entries.reduce((a, e) => a + e.bytes, 0);
  for (const e of entries.sort((a, b) => a.used - b.used)) {
    if (total <= maxBytes) break;
    if (path.resolve(e.dir) === path.resolve(keep)) continue;
    removeEntry(e.dir);
    total -= e.bytes;
  }
}
