/**
 * `--no-kv-cache` (generate, eval, eval --grid): parsed like every runtime flag, listed in the help, and
 * the opt-out it promises: `floatscope generate` on models/tiny-llama without probes gives the same
 * answer with the key/value cache (the default) and without it.
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runtimeOptions } from "../../src/cli/runtime-flags.js";
import { runCli } from "../support/cli.js";

const MODEL = path.resolve(import.meta.dirname, "..", "..", "models", "tiny-llama");

describe("--no-kv-cache", () => {
  it("turns the engine's key/value cache off; absent, the engine decides", () => {
    expect(runtimeOptions("generate", {}).kvCache).toBeUndefined();
    expect(runtimeOptions("generate", { "no-kv-cache": true }).kvCache).toBe(false);
  });

  it("is in the help of generate and eval", async () => {
    for (const command of ["generate", "eval"]) {
      const r = await runCli(command, "--help");
      expect(r.code, command).toBe(0);
      expect(r.out, command).toMatch(/--no-kv-cache\s+re-run the whole prefix at every generated token/);
    }
  });

  it("generate: the same answer with and without the cache", async () => {
    const argv = ["generate", MODEL, "--prompt", "The capital of France is", "--gen-length", "12", "--probes", "none", "--threads", "1"];
    const cached = await runCli(...argv);
    const full = await runCli(...argv, "--no-kv-cache");
    expect(cached.code, cached.err).toBe(0);
    expect(full.code, full.err).toBe(0);
    const answer = (out: string) => out.split("\n")[0];
    expect(answer(cached.out).length).toBeGreaterThan(0);
    expect(answer(cached.out)).toBe(answer(full.out));
  });
});
