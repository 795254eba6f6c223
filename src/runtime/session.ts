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
 * onnxruntime-node's install script). Asking for it without its libraries makes ORT throw; we
 * catch that, warn once with the command that installs it, and fall back to CPU.
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
// Must come before onnxruntime-node: see ort-env.ts (a long command line crashed ORT).
import "./ort-env.js";
import * as ort from "onnxruntime-node";
import { RuntimeError } from "../util/errors.js";

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
}

export interface CreatedSession {
  session: ort.InferenceSession;
  device: "cpu" | "cuda";
  /** Temporary folder of hard links to remove on dispose, if one was made. */
  tempDir?: string;
}

export const CUDA_INSTALL_HINT =
  "install the CUDA execution provider with `npm rebuild onnxruntime-node --onnxruntime-node-install=cuda12` " +
  "(or ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node); it also needs CUDA 12 and cuDNN 9 on the system";

/** Whether onnxruntime-node's CUDA provider library is present next to its binding. */
export function cudaProviderInstalled(): boolean {
  try {
    const req = createRequire(import.meta.url);
    const main = req.resolve("onnxruntime-node");
    const dir = path.join(path.dirname(main), "..", "bin", "napi-v6", process.platform, process.arch);
    return fs.existsSync(
      path.join(dir, process.platform === "win32" ? "onnxruntime_providers_cuda.dll" : "libonnxruntime_providers_cuda.so"),
    );
  } catch {
    return false;
  }
}

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
  if (want === "cuda" && !installed) {
    // ORT would throw "Failed to load library …providers_shared.so" (and log it); say what to do instead.
    warn(
      `floatscope: the CUDA execution provider of onnxruntime-node is not installed; running on CPU instead. To use the GPU, ${CUDA_INSTALL_HINT}.`,
    );
  } else if (want === "cuda" || (want === "auto" && installed)) {
    try {
      const session = await ort.InferenceSession.create(bytes, { ...base, executionProviders: ["cuda", "cpu"] });
      return { session, device: "cuda", tempDir: plan.tempDir };
    } catch (e) {
      const msg = e instanceof Error ? e.message.split("\n")[0] : String(e);
      warn(
        `floatscope: could not start the CUDA execution provider (${msg}); running on CPU instead. To use the GPU, ${CUDA_INSTALL_HINT}.`,
      );
    }
  }
  try {
    const session = await ort.InferenceSession.create(bytes, { ...base, executionProviders: ["cpu"] });
    return { session, device: "cpu", tempDir: plan.tempDir };
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
