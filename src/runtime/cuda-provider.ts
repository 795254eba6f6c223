/**
 * onnxruntime-node's CUDA execution provider: where its library sits, and — when a CUDA session
 * could not start — why, in one line a user can act on.
 *
 * The provider is a plug-in library beside onnxruntime-node's core library, absent from the npm
 * package (`bash scripts/setup-cuda.sh` installs the one from PyPI's onnxruntime-gpu wheel of the
 * same version). When onnxruntime cannot load it, the error that reaches JavaScript says only
 * "Failed to load shared library"; the cause (a CUDA library or the NVIDIA driver's libcuda.so.1
 * that the dynamic loader cannot find) is in onnxruntime's native log, which we silence so that the
 * CLI prints one line. So we ask the loader ourselves: `ldd` lists the provider's libraries it cannot
 * resolve, with the same search path (RUNPATH, LD_LIBRARY_PATH, ldconfig) the real load used.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

/** The command (from the floatscope repository) that installs the provider and the CUDA libraries it needs. */
export const CUDA_SETUP_COMMAND = "bash scripts/setup-cuda.sh";

/** A phrase for "To use the GPU, …". */
export const CUDA_INSTALL_HINT = `install the CUDA execution provider with \`${CUDA_SETUP_COMMAND}\` (in the floatscope repository; docs/engine.md, "CUDA")`;

/** The folder of onnxruntime-node's native binding and core library, or undefined if it cannot be found. */
export function ortBinaryDir(): string | undefined {
  try {
    const main = createRequire(import.meta.url).resolve("onnxruntime-node");
    return path.join(path.dirname(main), "..", "bin", "napi-v6", process.platform, process.arch);
  } catch {
    return undefined;
  }
}

/** The CUDA provider library's path (whether or not it is there). */
export function cudaProviderPath(): string | undefined {
  const dir = ortBinaryDir();
  if (!dir) return undefined;
  return path.join(dir, process.platform === "win32" ? "onnxruntime_providers_cuda.dll" : "libonnxruntime_providers_cuda.so");
}

/** Whether onnxruntime-node's CUDA provider library is present next to its binding. */
export function cudaProviderInstalled(): boolean {
  const p = cudaProviderPath();
  return p !== undefined && fs.existsSync(p);
}

/**
 * The libraries `file` needs that the dynamic loader cannot find (`ldd`'s "=> not found" rows), or
 * undefined where that cannot be asked (no ldd: not Linux/glibc).
 */
export function unresolvedLibraries(file: string): string[] | undefined {
  if (process.platform !== "linux") return undefined;
  const r = spawnSync("ldd", [file], { encoding: "utf8", env: { ...process.env, LC_ALL: "C" }, timeout: 20_000 });
  if (r.error || r.status !== 0) return undefined;
  return parseLddMissing(r.stdout);
}

/** `ldd` output → the sonames it marks "not found". */
export function parseLddMissing(lddOutput: string): string[] {
  const missing: string[] = [];
  for (const line of lddOutput.split("\n")) {
    const m = /^\s*(\S+)\s+=>\s+not found\s*$/.exec(line);
    if (m) missing.push(m[1]);
  }
  return missing;
}

/** What is known when a CUDA session did not start. */
export interface CudaFailure {
  /** Whether the provider library is installed beside onnxruntime-node's core library. */
  installed: boolean;
  /** The provider's libraries the loader cannot find (undefined: not asked, e.g. not installed or no ldd). */
  unresolved?: string[];
  /** The first line of onnxruntime's error, if a session creation was tried. */
  ortMessage?: string;
}

/** The NVIDIA driver's library: it comes with the driver, never with CUDA packages. */
const DRIVER_LIBRARY = "libcuda.so.1";

/**
 * Why CUDA is not available, as one clause naming the cause and what to do (no trailing period).
 * Order matters: a missing provider hides everything else; a missing CUDA runtime library is fixable
 * by the set-up, a missing driver is not (it means no GPU driver, in practice no GPU).
 */
export function cudaUnavailableReason(f: CudaFailure): string {
  if (!f.installed) return `onnxruntime-node's CUDA execution provider is not installed (install it with \`${CUDA_SETUP_COMMAND}\`)`;
  const runtime = (f.unresolved ?? []).filter((l) => l !== DRIVER_LIBRARY);
  if (runtime.length > 0)
    return `the CUDA execution provider cannot load: ${runtime.join(", ")} not found (install them with \`${CUDA_SETUP_COMMAND}\`, or put CUDA 13 and cuDNN 9 on LD_LIBRARY_PATH)`;
  if (f.unresolved?.includes(DRIVER_LIBRARY))
    return `no NVIDIA driver on this machine (${DRIVER_LIBRARY} not found), so no GPU for the CUDA execution provider`;
  const msg = f.ortMessage ?? "";
  // cudaErrorNoDevice (100) and cudaErrorInsufficientDriver (35), as the CUDA runtime words them.
  if (/no CUDA-capable device|cudaErrorNoDevice|CUDA failure 100\b/i.test(msg)) return `no CUDA-capable GPU detected (${clip(msg)})`;
  if (/insufficient|CUDA failure 35\b/i.test(msg)) return `the NVIDIA driver is older than the CUDA 13 runtime needs (${clip(msg)})`;
  return `the CUDA execution provider did not start (${clip(msg) || "no message from onnxruntime"})`;
}

const clip = (s: string) => s.split("\n")[0].trim().slice(0, 240);

/**
 * Why a CUDA session cannot start here, as far as the files tell (provider missing, or libraries the
 * loader cannot resolve, the driver's included); undefined when nothing is missing. A machine whose
 * driver is present but has no GPU passes this and fails at session creation.
 */
export function cudaProviderProblem(): string | undefined {
  if (!cudaProviderInstalled()) return cudaUnavailableReason({ installed: false });
  const unresolved = unresolvedLibraries(cudaProviderPath()!);
  return unresolved && unresolved.length > 0 ? cudaUnavailableReason({ installed: true, unresolved }) : undefined;
}
