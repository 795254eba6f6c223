/**
 * Where onnxruntime-node's CUDA provider is installed (`bash scripts/setup-cuda.sh`, a 1.35 GB download,
 * so not in CI): that it resolves — every library it links is found, except at most the NVIDIA
 * driver's libcuda.so.1, and cuDNN 9 (loaded at run time) sits on its RUNPATH — and, on a machine
 * without the driver (no GPU), that `floatscope generate … --device cuda` says so in one stderr line,
 * without a stack trace, and completes on the CPU. Skipped where the provider is absent
 * (test/runtime/cuda-setup.test.ts covers that machine); the GPU itself is test/runtime/cuda.test.ts.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cudaProviderInstalled, cudaProviderPath, unresolvedLibraries } from "../../src/runtime/cuda-provider.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-cuda-installed-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|native\))$/m;
const lines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");

/** The provider's RUNPATH folders, $ORIGIN expanded (readelf -d). */
function runpath(file: string): string[] {
  const r = spawnSync("readelf", ["-d", file], { encoding: "utf8" });
  const m = /\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]/.exec(r.stdout);
  return m ? m[1].split(":").map((d) => path.resolve(d.replace("$ORIGIN", path.dirname(file)))) : [];
}

describe.skipIf(!cudaProviderInstalled())("the installed CUDA provider (needs bash scripts/setup-cuda.sh)", () => {
  const provider = cudaProviderPath()!;
  const unresolved = unresolvedLibraries(provider) ?? [];

  it("resolves every library it links except, at most, the NVIDIA driver's libcuda.so.1; cuDNN 9 is on its search path", () => {
    expect(fs.existsSync(path.join(path.dirname(provider), "libonnxruntime_providers_shared.so"))).toBe(true);
    expect(unresolvedLibraries(provider), "ldd must run here").toBeDefined();
    expect(unresolved.filter((l) => l !== "libcuda.so.1")).toEqual([]);
    // libcudnn.so.9 is dlopen'ed, so ldd does not list it: look where the loader would.
    const dirs = [...runpath(provider), ...(process.env.LD_LIBRARY_PATH ?? "").split(":").filter(Boolean)];
    const ldconfig = spawnSync("ldconfig", ["-p"], { encoding: "utf8" }).stdout ?? "";
    const cudnn = dirs.some((d) => fs.existsSync(path.join(d, "libcudnn.so.9"))) || /\blibcudnn\.so\.9\b/.test(ldconfig);
    expect(cudnn, `libcudnn.so.9 in none of ${dirs.join(", ")} nor ldconfig`).toBe(true);
    const check = spawnSync("bash", [path.join(root, "scripts/setup-cuda.sh"), "--check"], { cwd: root, encoding: "utf8" });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/^\[setup-cuda\] resolved: every/m);
  });

  it.skipIf(!unresolved.includes("libcuda.so.1"))(
    "without the NVIDIA driver, generate --device cuda says so in one line and runs on the CPU",
    () => {
      const llada = path.join(root, "test/fixtures/parity/llada/model");
      const r = spawnSync(
        process.execPath,
        ["--import", "tsx", path.join(root, "src/cli/main.ts"), "generate", llada, "--prompt", "the cat sat", "--gen-length", "8"].concat([
          "--block-length",
          "4",
          "--steps",
          "4",
          "--threads",
          "1",
          "--device",
          "cuda",
          "--trace",
          path.join(tmp, "g.fstrace"),
        ]),
        { cwd: root, encoding: "utf8", timeout: 120_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      // onnxruntime's own error log (coloured, several lines) must not reach stderr: only our line.
      expect(lines(r.stderr)).toEqual([
        "floatscope: no NVIDIA driver on this machine (libcuda.so.1 not found), so no GPU for the CUDA execution provider; running on CPU instead.",
      ]);
      expect(r.stderr).not.toMatch(STACK_LINE);
      expect(r.stdout).toMatch(/llada\/low_confidence, 4 steps, cpu,/);
    },
  );
});
