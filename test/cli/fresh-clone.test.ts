/**
 * The CLI the way the docs call it, from a fresh clone: `git clone`, the README's set-up (its Node
 * part: `npm ci`, the build, the bin link — FLOATSCOPE_SETUP_NODE_ONLY=1 skips only the Python
 * venv and the widgets), then `npx floatscope …` and `node_modules/.bin/floatscope …`. On a
 * fresh clone this used to say "floatscope: not found": `npm ci` linked the bin before
 * src/dist/ existed, and each build rewrote cli/main.js without its exec bit.
 *
 * The clone is of the committed HEAD (uncommitted edits are not in it). npm runs with
 * --prefer-offline, so the packages come from the cache the checkout's own set-up filled.
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "fs-fresh-clone-"));
const clone = path.join(work, "floatscope");
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env, npm_config_prefer_offline: "true" },
    timeout: 600_000,
  });
}

describe("fresh clone: set-up, then the floatscope command", () => {
  let setup: SpawnSyncReturns<string>;
  beforeAll(() => {
    const c = sh("git", ["clone", "--quiet", root, clone], work);
    if (c.status !== 0) throw new Error(`git clone failed: ${c.stderr}`);
    setup = sh("bash", ["scripts/setup.sh"], clone, { FLOATSCOPE_SETUP_NODE_ONLY: "1" });
  }, 600_000);

  it("set-up succeeds and leaves an executable floatscope on node_modules/.bin", () => {
    expect(setup.status, setup.stdout + setup.stderr).toBe(0);
    const bin = path.join(clone, "node_modules/.bin/floatscope");
    expect(fs.existsSync(bin)).toBe(true);
    const target = fs.realpathSync(bin);
    expect(target).toBe(path.join(clone, "src/bin/floatscope.js"));
    expect(fs.statSync(target).mode & 0o111).not.toBe(0);
    expect(fs.statSync(path.join(clone, "src/dist/cli/main.js")).mode & 0o111).not.toBe(0);
  });

  it("`npx floatscope inspect` and `forward` work as the docs show them, with the contract's exit codes", () => {
    const help = sh("npx", ["floatscope", "--help"], clone);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: floatscope <command>/);
    const inspect = sh("npx", ["floatscope", "inspect", "models/tiny-llama"], clone);
    expect(inspect.status, inspect.stderr).toBe(0);
    expect(inspect.stdout).toMatch(/family\s+llama \(LlamaForCausalLM\)/);
    const forward = sh(path.join(clone, "node_modules/.bin/floatscope"), ["forward", "models/tiny-llama", "--ids", "1,2,3"], clone);
    expect(forward.status, forward.stderr).toBe(0);
    expect(forward.stdout).toMatch(/3 tokens, cpu/);
    const usage = sh("npx", ["floatscope", "generate", "models/tiny-llada", "--prompt", "hi", "--steps", "0"], clone);
    expect(usage.status).toBe(2);
    expect(usage.stderr).not.toMatch(/^\s+at /m);
  });
});
