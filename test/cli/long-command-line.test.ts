/**
 * A long command line must not crash onnxruntime. It did: with ~30 KB of arguments (8,000
 * `--ids`), `floatscope forward` died with SIGSEGV (exit 139) while creating its first session.
 * Cause (src/runtime/ort-env.ts): ORT's telemetry SDK matches /proc/self/cmdline with a
 * std::regex that recurses once per character and overflows the 8 MiB main-thread stack. The
 * fix disables ORT telemetry before onnxruntime loads. These tests run the real CLI in a child
 * process, since only a child has a long command line.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-long-argv-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The CLI from source, as a child process (tsx compiles it on the fly). */
function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, ["--import", "tsx", path.join(root, "src/cli/main.ts"), ...args], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 120_000,
    maxBuffer: 1 << 24,
  });
}

describe("long command lines", () => {
  it("forward with a 60 KB --text argument runs (exit 0), even with ORT_DISABLE_TELEMETRY=0 in the environment", () => {
    // tiny-llama's tokenizer splits on whitespace: 60 KB of spaces around two words is two tokens,
    // so the forward pass is tiny and only the command line is long.
    const text = `the${" ".repeat(60_000)}cat`;
    const r = cli(["forward", "models/tiny-llama", "--text", text], { ORT_DISABLE_TELEMETRY: "0" });
    expect(r.signal, r.stderr.slice(0, 2000)).toBeNull();
    expect(r.status, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout).toMatch(/llama LlamaForCausalLM, \d tokens, cpu/);
  });

  it("8,000 --ids on a 512-position model are refused with exit 2 (not a crash, not a run)", () => {
    const ids = Array.from({ length: 8000 }, (_, i) => ((i * 37) % 770) + 5).join(",");
    expect(ids.length).toBeGreaterThan(30_000);
    const r = cli(["forward", "models/tiny-llama", "--ids", ids]);
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr.slice(0, 2000)).toBe(2);
    expect(r.stderr).toMatch(/at most 512 tokens/);
  });

  it("a bigger-position model runs 8,000 ids from the command line (exit 0)", () => {
    // Same tiny weights, config raised to 8,192 positions: RoPE is computed for any position.
    const dir = path.join(tmp, "tiny-llama-8k");
    fs.cpSync(path.join(root, "models/tiny-llama"), dir, { recursive: true });
    const cfgPath = path.join(dir, "config.json");
    const cfg = JSON.parse(fs.readFileSync(cfgPath, "utf8"));
    cfg.max_position_embeddings = 8192;
    fs.writeFileSync(cfgPath, JSON.stringify(cfg));
    const ids = Array.from({ length: 8000 }, (_, i) => ((i * 37) % 770) + 5).join(",");
    const r = cli(["forward", dir, "--ids", ids, "--query-chunks", "8", "--threads", "1"]);
    expect(r.signal, r.stderr.slice(0, 2000)).toBeNull();
    expect(r.status, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout).toMatch(/8000 tokens, cpu/);
  }, 300_000);
});
