/**
 * Creating the onnxruntime session: where the external weights are, which execution provider.
 *
 * External data: ORT refuses absolute locations, `../` and symlinks that leave the model folder,
 * and a model loaded from bytes resolves locations against the process CWD unless
 * `session.model_external_initializers_file_folder_path` names a folder. So the graph uses the
 * basename of the REAL (symlink-resolved) file as location and the session gets its folder. If
 * shards live in several real folders (unusual: the HF cache keeps all blobs in one `blobs/`),
 * we hard-link them into one temporary folder; if that fails (different file systems) we hand
 * ORT the bytes themselves (`externalData` buffers), which costs a copy of the weights in RAM.
 *
 * CUDA: the CUDA execution provider is not in the npm tarball (the project disables
 * onnxruntime-node's install script; `bash scripts/setup-cuda.sh` installs it). Asking for it when it
 * cannot start makes ORT throw; we catch that, warn in one line naming the cause (cuda-provider.ts),
 * and fall back to CPU.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
// Must come before onnxruntime-node: see ort-env.ts (a long command line crashed ORT).
import "./ort-env.js";
import * as ort from "onnxruntime-node";
import { RuntimeError } from "../util/errors.js";
import { cudaProviderInstalled, cudaProviderPath, cudaUnavailableReason, unresolvedLibraries } from "./cuda-provider.js";
import { DATA_FILE, lookupEntry, pendingEntry, removeEntry, sessionCacheKey, type SessionCacheReport } from "./session-cache.js";

export type DeviceRequest = "cpu" | "cuda" | "auto";

export interface SessionOptions {
  device?: DeviceRequest;
  /** Intra-op threads (default: ORT's choice, all cores). */
  threads?: number;
  /** `session.disable_prepacking`: weights stay memory-mapped (evictable) instead of copied. */
  lowMemory?: boolean;
  /**
   * ORT's CPU memory arena (default on). Off: every tensor is malloc'd and freed, so peak memory
   * is closer to what the graph really holds at once (the arena grows in doubling chunks and
   * keeps them), at some cost in speed. See BENCHMARKS.md "Engine".
   */
  cpuMemArena?: boolean;
  /** onnxruntime's graph optimisation level (default "all"; docs/engine.md, "Session options", says why). */
  graphOptimizationLevel?: "disabled" | "basic" | "extended" | "all";
  /** "sequential" (default) or "parallel" (independent nodes on `interOpThreads` threads). */
  executionMode?: "sequential" | "parallel";
  /** Inter-op threads, used by the parallel execution mode only (default 1). */
  interOpThreads?: number;
  /** Called with warnings (default: console.warn). */
  warn?: (message: string) => void;
  /** Weights decoded in memory (BuiltGraph.externalBuffers), by their virtual locations. */
  externalBuffers?: { path: string; data: Uint8Array }[];
  /**
   * Folder of the session cache (session-cache.ts): the optimized model with its prepacked weights
   * is loaded from there, or saved there for the next time. Used on CPU only, and only when every
   * weight is read from a file (no `externalBuffers`) and prepacking is on (not `lowMemory`).
   */
  sessionCacheDir?: string;
}

export interface CreatedSession {
  session: ort.InferenceSession;
  device: "cpu" | "cuda";
  /** Temporary folder of hard links to remove on dispose, if one was made. */
  tempDir?: string;
  /** Whether the session came from the session cache. */
  sessionCache: SessionCacheReport;
}

export { CUDA_INSTALL_HINT, cudaProviderInstalled } from "./cuda-provider.js";

interface ExternalPlan {
  folder?: string;
  tempDir?: string;
  buffers?: { path: string; data: Uint8Array }[];
}

function planExternalData(files: string[], warn: (m: string) => void): ExternalPlan {
  const dirs = [...new Set(files.map((f) => path.dirname(f)))];
  if (dirs.length <= 1) return { folder: dirs[0] ?? process.cwd() };
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-weights-"));
  try {
    for (const f of files) fs.linkSync(f, path.join(tempDir, path.basename(f)));
    return { folder: tempDir, tempDir };
  } catch {
    fs.rmSync(tempDir, { recursive: true, force: true });
    warn(
      `floatscope: weight files live in ${dirs.length} folders on different file systems; reading them into memory (one extra copy of the weights).`,
    );
    return { buffers: files.map((f) => ({ path: path.basename(f), data: fs.readFileSync(f) })) };
  }
}

export async function createSession(bytes: Uint8Array, externalFiles: string[], o: SessionOptions = {}): Promise<CreatedSession> {
  const warn = o.warn ?? ((m: string) => console.warn(m));
  const plan = planExternalData(externalFiles, warn);
  const base: ort.InferenceSession.SessionOptions = {
    graphOptimizationLevel: o.graphOptimizationLevel ?? "all",
    executionMode: o.executionMode ?? "sequential",
    interOpNumThreads: o.interOpThreads ?? 1,
    enableCpuMemArena: o.cpuMemArena ?? true,
    logSeverityLevel: 3,
    ...(o.threads ? { intraOpNumThreads: o.threads } : {}),
    ...(plan.buffers || o.externalBuffers?.length ? { externalData: [...(plan.buffers ?? []), ...(o.externalBuffers ?? [])] } : {}),
    extra: {
      session: {
        ...(plan.folder ? { model_external_initializers_file_folder_path: plan.folder } : {}),
        ...(o.lowMemory ? { disable_prepacking: "1" } : {}),
      },
    },
  };
  const want = o.device ?? "cpu";
  const installed = cudaProviderInstalled();
  const cleanup = () => plan.tempDir && fs.rmSync(plan.tempDir, { recursive: true, force: true });
  const off: SessionCacheReport = { state: "off" };
  if (want === "cuda" && !installed) {
    // ORT would throw "Failed to load library …providers_shared.so" (and log it); say what to do instead.
    warn(`floatscope: ${cudaUnavailableReason({ installed: false })}; running on CPU instead.`);
  } else if (want === "cuda" || (want === "auto" && installed)) {
    // A failed provider load is logged by ORT's process-wide logger in several coloured lines before it
    // throws; we report it ourselves in one line, so that logger only speaks for fatal errors. The level
    // is read when the first session of the process starts (later assignments are ignored by ORT).
    ort.env.logLevel = "fatal";
    try {
      const session = await ort.InferenceSession.create(bytes, { ...base, executionProviders: ["cuda", "cpu"] });
      return { session, device: "cuda", tempDir: plan.tempDir, sessionCache: off };
    } catch (e) {
      const provider = cudaProviderPath();
      const reason = cudaUnavailableReason({
        installed: true,
        unresolved: provider ? unresolvedLibraries(provider) : undefined,
        ortMessage: firstLine(e),
      });
      warn(`floatscope: ${reason}; running on CPU instead.`);
    }
  }
  const cached =
    o.sessionCacheDir && !base.externalData && !o.lowMemory
      ? await cachedCpuSession(bytes, externalFiles, base, o.sessionCacheDir, warn)
      : undefined;
  if (cached) return { session: cached.session, device: "cpu", tempDir: plan.tempDir, sessionCache: cached.report };
  try {
    const session = await ort.InferenceSession.create(bytes, { ...base, executionProviders: ["cpu"] });
    return { session, device: "cpu", tempDir: plan.tempDir, sessionCache: off };
  } catch (e) {
    cleanup();
    throw new RuntimeError("onnxruntime could not create a session for the model graph", {
      file: plan.folder,
      field: "InferenceSession.create",
      expected: "a loadable graph with readable external weights",
      found: e instanceof Error ? e.message.slice(0, 400) : String(e),
    });
  }
}

const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0].slice(0, 300);

/**
 * A CPU session through the session cache: loaded from its entry when there is a sound one, else
 * built from `bytes` while onnxruntime saves the optimized model (with prepacked weights) as a new
 * entry. Undefined when building with the cache failed (the caller then builds without it).
 */
async function cachedCpuSession(
  bytes: Uint8Array,
  externalFiles: string[],
  base: ort.InferenceSession.SessionOptions,
  dir: string,
  warn: (m: string) => void,
): Promise<{ session: ort.InferenceSession; report: SessionCacheReport } | undefined> {
  let key: string;
  try {
    key = sessionCacheKey(bytes, externalFiles, { graphOptimizationLevel: base.graphOptimizationLevel, device: "cpu" });
  } catch (e) {
    warn(`floatscope: session cache off for this open (${firstLine(e)}).`);
    return undefined;
  }
  let rebuilt = false;
  const found = lookupEntry(dir, key);
  if (found.kind === "hit") {
    try {
      // The saved model is already optimized, and its external data sits beside it.
      const { externalData: _, extra: __, ...plain } = base;
      const session = await ort.InferenceSession.create(found.model, {
        ...plain,
        graphOptimizationLevel: "disabled",
        executionProviders: ["cpu"],
      });
      return { session, report: { state: "hit", dir: found.dir, bytes: found.bytes } };
    } catch (e) {
      warn(`floatscope: the cached session ${found.dir} could not be loaded (${firstLine(e)}); rebuilding it.`);
      removeEntry(found.dir);
      rebuilt = true;
    }
  } else if (found.kind === "broken") {
    warn(`floatscope: the cached session ${path.join(dir, key)} was incomplete (${found.why}); rebuilding it.`);
    rebuilt = true;
  }
  let pending: ReturnType<typeof pendingEntry>;
  try {
    pending = pendingEntry(dir, key);
  } catch (e) {
    warn(`floatscope: session cache off for this open (${firstLine(e)}).`);
    return undefined;
  }
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes, {
      ...base,
      executionProviders: ["cpu"],
      optimizedModelFilePath: pending.model,
      extra: {
        session: {
          ...(base.extra as { session?: Record<string, string> } | undefined)?.session,
          save_external_prepacked_constant_initializers: "1",
          optimized_model_external_initializers_file_name: DATA_FILE,
          optimized_model_external_initializers_min_size_in_bytes: "1024",
        },
      },
    });
  } catch {
    pending.abort();
    return undefined; // the plain build reports the error, if it is not about saving
  }
  try {
    const report = pending.commit();
    return { session, report: { ...report, state: rebuilt ? "rebuilt" : "written" } };
  } catch (e) {
    pending.abort();
    warn(`floatscope: could not store the session in the cache ${dir} (${firstLine(e)}).`);
    return { session, report: { state: "off" } };
  }
}
