/**
 * The CLI on inputs a careful new user tries: each case below was a crash, a hang, a stack trace
 * or a silent acceptance before, and must now be one clear message with the contract's exit code
 * (0 ok, 1 failure, 2 usage) and nothing half-written.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSafetensorsHeader } from "../../src/checkpoint/safetensors.js";
import { COMMANDS } from "../../src/cli/commands.js";
import { main } from "../../src/cli/main.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const tinyLlama = path.join(root, "models/tiny-llama");
const tinyLlada = path.join(root, "models/tiny-llada");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-cli-rel-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "",
    err = "";
  const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}

/** A stack trace line as Node prints them. */
const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|native\))$/m;

/** A copy of a model folder under tmp, optionally changed by `edit`. */
function copyModel(src: string, name: string, edit?: (dir: string) => void): string {
  const dir = path.join(tmp, name);
  fs.cpSync(src, dir, { recursive: true });
  edit?.(dir);
  return dir;
}

function editJson(file: string, edit: (j: Record<string, unknown>) => void): void {
  const j = JSON.parse(fs.readFileSync(file, "utf8"));
  edit(j);
  fs.writeFileSync(file, JSON.stringify(j));
}

const isRoot = process.getuid?.() === 0;

describe("paths are checked for kind before they are opened", () => {
  it("a FIFO named model.safetensors is refused at once (inspect and forward do not hang)", async () => {
    const dir = copyModel(tinyLlama, "fifo", (d) => {
      fs.rmSync(path.join(d, "model.safetensors"));
      // mkfifo has no Node API; the coreutils binary is on every Debian machine
      const r = spawnSync("mkfifo", [path.join(d, "model.safetensors")]);
      if (r.status !== 0) throw new Error("mkfifo failed");
    });
    for (const argv of [
      ["inspect", dir],
      ["forward", dir, "--ids", "1,2,3"],
    ]) {
      const r = await run(...argv);
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(/model\.safetensors/);
      expect(r.err).toMatch(/a FIFO \(named pipe\)/);
      expect(r.err).not.toMatch(STACK_LINE);
    }
  }, 20_000);

  it("a folder named model.safetensors is a CheckpointError naming the path, not a stack trace", async () => {
    const dir = copyModel(tinyLlama, "dir-weights", (d) => {
      fs.rmSync(path.join(d, "model.safetensors"));
      fs.mkdirSync(path.join(d, "model.safetensors"));
    });
    const r = await run("inspect", dir);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/CheckpointError: The path given as weights file is a folder/);
    expect(r.err).toContain(path.join(dir, "model.safetensors"));
    expect(r.err).not.toMatch(STACK_LINE);
  });

  it('symlink loops and dangling links say so (not "has no config.json" / "no weight files")', async () => {
    const loop = path.join(tmp, "loop");
    fs.mkdirSync(loop);
    fs.symlinkSync(path.join(loop, "b"), path.join(loop, "a"));
    fs.symlinkSync(path.join(loop, "a"), path.join(loop, "b"));
    const a = await run("inspect", path.join(loop, "a"));
    expect(a.code).toBe(1);
    expect(a.err).toMatch(/symbolic link loop/);
    const dangling = path.join(tmp, "dangling");
    fs.symlinkSync(path.join(tmp, "no-such-target"), dangling);
    const b = await run("forward", dangling, "--ids", "1");
    expect(b.code).toBe(1);
    expect(b.err).toMatch(/symbolic link whose target does not exist/);
    // inside a checkpoint: a dangling weights link, a looping config.json
    const inner = copyModel(tinyLlama, "dangling-weights", (d) => {
      fs.rmSync(path.join(d, "model.safetensors"));
      fs.symlinkSync(path.join(d, "gone.safetensors"), path.join(d, "model.safetensors"));
    });
    const c = await run("inspect", inner);
    expect(c.code).toBe(1);
    expect(c.err).toMatch(/weights file is a symbolic link whose target does not exist/);
    expect(c.err).not.toMatch(/no weight files/);
    const cfgLoop = copyModel(tinyLlama, "config-loop", (d) => {
      fs.rmSync(path.join(d, "config.json"));
      fs.symlinkSync(path.join(d, "config.json"), path.join(d, "config.json"));
    });
    const e = await run("inspect", cfgLoop);
    expect(e.code).toBe(1);
    expect(e.err).toMatch(/config\.json is a symbolic link loop/);
    expect(e.err).not.toMatch(/has no config\.json/);
  });

  it.skipIf(isRoot)("an unreadable checkpoint folder says permission denied (skipped as root: root reads everything)", async () => {
    const dir = copyModel(tinyLlama, "unreadable");
    fs.chmodSync(dir, 0o000);
    try {
      const r = await run("inspect", dir);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/permission denied/);
    } finally {
      fs.chmodSync(dir, 0o755);
    }
  });

  it("a checkpoint folder given to analyze is a clear error (exit 1), not EISDIR", async () => {
    const r = await run("analyze", "absorption", tinyLlama);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/TraceFormatError: <trace> \S+tiny-llama is a folder; expected a regular file \(trace file\)/);
    expect(r.err).not.toMatch(STACK_LINE);
  });
});

describe("output paths: checked before any work, folders created only with --mkdir", () => {
  it("an existing folder as --trace is a usage error and nothing is computed or written", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "trace-dir-"));
    const r = await run("generate", tinyLlada, "--prompt", "hi", "--gen-length", "4", "--trace", dir);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--trace file is a folder/);
    expect(r.err).not.toMatch(STACK_LINE);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("a missing output folder is refused without --mkdir, and created and announced with it", async () => {
    const target = path.join(tmp, "new-out", "sub", "p.safetensors");
    const a = await run("forward", tinyLlama, "--ids", "1,2,3", "--out", target);
    expect(a.code).toBe(2);
    expect(a.err).toMatch(/folder of the --out file does not exist[\s\S]*hint: create it, or pass --mkdir/);
    expect(fs.existsSync(path.join(tmp, "new-out"))).toBe(false);
    const b = await run("forward", tinyLlama, "--ids", "1,2,3", "--out", target, "--mkdir");
    expect(b.code, b.err).toBe(0);
    expect(b.err).toContain(`created folder ${path.join(tmp, "new-out")}\n`);
    expect(b.err).toContain(`created folder ${path.join(tmp, "new-out", "sub")}\n`);
    expect(readSafetensorsHeader(target).tensors.length).toBeGreaterThan(0);
  });

  it("a forward refused by the memory guard writes no --out file", async () => {
    const file = path.join(tmp, "guard.safetensors");
    const r = await run("forward", tinyLlama, "--ids", "1,2,3", "--memory-budget", "1000", "--out", file);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/BudgetError: Forward pass would exceed the memory budget/);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("a generate refused by the memory guard leaves no trace file", async () => {
    const file = path.join(tmp, "guard.fstrace");
    const r = await run("generate", tinyLlada, "--prompt", "hi", "--gen-length", "4", "--memory-budget", "1000", "--trace", file);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/BudgetError/);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("numbers are parsed strictly; usage errors exit 2 whatever the flag", () => {
  it.each([
    [["generate", tinyLlada, "--prompt", "hi", "--gen-length", "0x10"], /--gen-length[\s\S]*"0x10"/],
    [["generate", tinyLlada, "--prompt", "hi", "--steps", "0"], /--steps[\s\S]*≥ 1[\s\S]*"0"/],
    [["generate", tinyLlada, "--prompt", "hi", "--steps", "-3"], /--steps[\s\S]*≥ 1[\s\S]*"-3"/],
    [["generate", tinyLlada, "--prompt", "hi", "--steps=-3"], /--steps[\s\S]*"-3"/],
    [["generate", tinyLlada, "--prompt", "hi", "--temperature", "Infinity"], /--temperature/],
    [["generate", tinyLlada, "--prompt", "hi", "--top-p", "1e3"], /--top-p[\s\S]*≤ 1/],
    [["generate", tinyLlada, "--prompt", "hi", "--seed", "1.5"], /--seed/],
    [["inspect", tinyLlama, "--seq", "0"], /--seq[\s\S]*"0"/],
    [["inspect", tinyLlama, "--seq", "64,4096"], /--seq[\s\S]*≤ 512[\s\S]*"4096"/],
    [["inspect", tinyLlama, "--batch", "1_000"], /--batch/],
    [["forward", tinyLlama, "--ids", "1,0x2"], /--ids[\s\S]*"0x2"/],
    [["forward", tinyLlama, "--ids", "1,2", "--top", "0"], /--top/],
    [["forward", tinyLlama, "--ids", "1,99999"], /--ids[\s\S]*≤ 775/],
    [["eval", tinyLlama, "--data", "x.jsonl", "--k", "four"], /--k/],
    [["analyze", "absorption", "x.fstrace", "--k", "3abc"], /--k/],
  ])("%j", async (argv, message) => {
    const r = await run(...argv);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).not.toMatch(STACK_LINE);
  });

  it("--sampler arm on a masked-diffusion model is refused (it used to return an empty answer)", async () => {
    const r = await run("generate", tinyLlada, "--prompt", "hi", "--sampler", "arm", "--gen-length", "4");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/The arm sampler needs a causal model[\s\S]*"llada"/);
  });

  it("settings errors from the sampler config are usage errors too (2, not 1)", async () => {
    const r = await run("generate", tinyLlada, "--prompt", "hi", "--gen-length", "10", "--block-length", "4");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/field: blockLength/);
  });
});

describe("inputs are checked against the model's positions in every command", () => {
  const ids = Array.from({ length: 12_000 }, (_, i) => i % 700).join(",");
  it("forward with 12,000 ids on a 512-position model is refused like generate (exit 2, before any compute)", async () => {
    const t0 = performance.now();
    const r = await run("forward", tinyLlama, "--ids", ids);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/longer than the model's maximum positions[\s\S]*at most 512 tokens[\s\S]*12000 tokens/);
    expect(performance.now() - t0).toBeLessThan(20_000);
    const g = await run("generate", tinyLlama, "--prompt", "w ".repeat(600), "--gen-length", "4");
    expect(g.code).toBe(2);
    expect(g.err).toMatch(/max_position_embeddings 512/);
  });

  it("forward --text longer than the model is refused the same way", async () => {
    const r = await run("forward", tinyLlama, "--text", "the ".repeat(600));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--text[\s\S]*at most 512 tokens/);
  });
});

describe("weights and config are checked at load", () => {
  it("NaN weights are refused by forward with the tensor named; --no-weight-scan loads them anyway", async () => {
    const name = "model.layers.1.mlp.up_proj.weight";
    const dir = copyModel(tinyLlama, "nan", (d) => {
      const file = path.join(d, "model.safetensors");
      const t = readSafetensorsHeader(file).tensors.find((x) => x.name === name)!;
      expect(t.dtype).toBe("F32");
      const fd = fs.openSync(file, "r+");
      // IEEE-754 single quiet NaN 0x7fc00000 at element 7, +Inf 0x7f800000 at element 9 (little-endian)
      fs.writeSync(fd, Buffer.from([0x00, 0x00, 0xc0, 0x7f]), 0, 4, t.byteOffset + 7 * 4);
      fs.writeSync(fd, Buffer.from([0x00, 0x00, 0x80, 0x7f]), 0, 4, t.byteOffset + 9 * 4);
      fs.closeSync(fd);
    });
    const r = await run("forward", dir, "--ids", "1,2,3");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/CheckpointError: Checkpoint weights contain NaN\/Inf in 1 of \d+ tensors/);
    expect(r.err).toContain(`${name} (F32: 1 NaN, 1 Inf, first at flat index 7)`);
    expect(r.err).toMatch(/--no-weight-scan/);
    // the cheap checks come first: a usage error does not wait for the scan (and wins over it)
    const tooLong = await run("generate", dir, "--prompt", "hi", "--gen-length", "600");
    expect(tooLong.code).toBe(2);
    expect(tooLong.err).toMatch(/max_position_embeddings 512/);
    const skip = await run("forward", dir, "--ids", "1,2,3", "--no-weight-scan");
    expect(skip.code).toBe(0);
    expect(skip.out).toMatch(/NaN/);
    const inspect = await run("inspect", dir, "--scan-weights");
    expect(inspect.code).toBe(1);
    expect(inspect.err).toContain(name);
    const clean = await run("inspect", tinyLlama, "--scan-weights");
    expect(clean.code).toBe(0);
    expect(clean.out).toMatch(/weights +\d+ tensors scanned .*: no NaN\/Inf/);
  });

  it("rms_norm_eps 0 is refused (it divides by zero on an all-zero row)", async () => {
    const dir = copyModel(tinyLlama, "eps0", (d) =>
      editJson(path.join(d, "config.json"), (j) => {
        j.rms_norm_eps = 0;
      }),
    );
    const r = await run("inspect", dir);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/field: rms_norm_eps[\s\S]*expected: a finite number in \(0, 1\][\s\S]*found: 0/);
  });

  it("rope_theta ≤ 1 is refused", async () => {
    const dir = copyModel(tinyLlama, "theta1", (d) =>
      editJson(path.join(d, "config.json"), (j) => {
        j.rope_theta = 1;
      }),
    );
    const r = await run("inspect", dir);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/field: rope_theta[\s\S]*found: 1/);
  });

  it("an unknown tokenizer model type is refused (the library used to guess one)", async () => {
    const dir = copyModel(tinyLlama, "tok-type", (d) =>
      editJson(path.join(d, "tokenizer.json"), (j) => {
        (j.model as Record<string, unknown>).type = "WordSoup";
      }),
    );
    const r = await run("forward", dir, "--text", "a b");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/unknown tokenizer model type[\s\S]*field: model\.type[\s\S]*"WordSoup"/);
  });
});

describe("one top-level handler: no stack trace unless --debug", () => {
  it("an internal error prints one line and exit 1; --debug adds the stack", async () => {
    COMMANDS["test-boom"] = {
      summary: "test only",
      load: async () => ({
        command: {
          help: "Usage: floatscope test-boom",
          flags: {},
          paths: [],
          run: async () => {
            throw new TypeError("cannot read properties of undefined");
          },
        },
      }),
    };
    try {
      const a = await run("test-boom");
      expect(a.code).toBe(1);
      expect(a.err).toMatch(/^floatscope test-boom: internal error: TypeError: cannot read properties of undefined\n/);
      expect(a.err).toMatch(/rerun with --debug/);
      expect(a.err).not.toMatch(STACK_LINE);
      const b = await run("test-boom", "--debug");
      expect(b.code).toBe(1);
      expect(b.err).toMatch(STACK_LINE);
    } finally {
      delete COMMANDS["test-boom"];
    }
  });

  it("a system error escaping a command names the path and what it is", async () => {
    COMMANDS["test-eisdir"] = {
      summary: "test only",
      load: async () => ({
        command: {
          help: "Usage: floatscope test-eisdir",
          flags: {},
          paths: [],
          run: async () => {
            fs.writeFileSync(tmp, "x");
            return 0;
          },
        },
      }),
    };
    try {
      const r = await run("test-eisdir");
      expect(r.code).toBe(1);
      expect(r.err).toContain(`floatscope test-eisdir: cannot open ${tmp}: EISDIR; it is a folder`);
      expect(r.err).not.toMatch(STACK_LINE);
    } finally {
      delete COMMANDS["test-eisdir"];
    }
  });
});
