/** `floatscope generate --intervene <policy>`: the policy reaches the trace; a bad one is a typed error before any work. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { readTrace } from "../../src/trace/reader.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const llada = path.join(root, "test/fixtures/parity/llada/model");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-cli-iv-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(["generate", ...argv], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("floatscope generate --intervene", () => {
  it("records the policy and each step's plan", async () => {
    const file = path.join(tmp, "anchors.fstrace");
    const r = await cli(
      llada,
      "--prompt",
      "the cat sat on the mat.",
      "--gen-length",
      "4",
      "--steps",
      "2",
      "--trace",
      file,
      "--threads",
      "1",
      "--intervene",
      "anchors",
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/intervention anchors/);
    const t = readTrace(file);
    expect(t.intervention?.policy).toBe("anchors");
    expect(t.steps.every((s) => s.intervention !== undefined)).toBe(true);
  });
  it("a sink run starts the prompt with the sink token", async () => {
    const file = path.join(tmp, "sink.fstrace");
    const r = await cli(
      llada,
      "--prompt",
      "the cat sat.",
      "--gen-length",
      "2",
      "--steps",
      "1",
      "--trace",
      file,
      "--threads",
      "1",
      "--intervene",
      "sink",
    );
    expect(r.code, r.err).toBe(0);
    const t = readTrace(file);
    expect(t.intervention?.policy).toBe("sink");
    expect(t.prompt.ids[0]).toBe(t.intervention!.params.tokenId);
  });
  it("an unknown policy fails with the field named, and no trace is written", async () => {
    const file = path.join(tmp, "bad.fstrace");
    const r = await cli(llada, "--prompt", "hi", "--intervene", "sideways", "--trace", file);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/Unknown intervention policy[\s\S]*intervene/);
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
    expect(fs.existsSync(file)).toBe(false);
  });
});
