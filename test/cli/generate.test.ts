import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { readTrace } from "../../src/trace/reader.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const llada = path.join(root, "test/fixtures/parity/llada/model");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-cli-gen-"));

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(["generate", ...argv], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("floatscope generate", () => {
  it("prints the answer and where the trace went; the trace reads back with the CLI's settings", async () => {
    const file = path.join(tmp, "run.fstrace");
    const r = await cli(
      llada,
      "--prompt",
      "the cat sat on the mat.",
      "--gen-length",
      "12",
      "--block-length",
      "4",
      "--steps",
      "6",
      "--seed",
      "5",
      "--trace",
      file,
      "--threads",
      "1",
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      new RegExp(`trace: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(\\d+ bytes; estimated \\d+\\) — llada/low_confidence, 6 steps`),
    );
    const t = readTrace(file);
    expect(t.partial).toBe(false);
    expect(t.steps.length).toBe(6);
    expect(t.settings).toMatchObject({ sampler: "llada", genLength: 12, blockLength: 4, steps: 6, seed: 5 });
    expect(r.out.startsWith(t.answer + "\ntrace: ")).toBe(true);
    expect(t.model.name).toBe("model");
  });

  it("bad settings, unknown flags and a prompt too long for the model are usage errors (2) naming the field", async () => {
    const a = await cli(llada, "--prompt", "hi", "--gen-length", "10", "--block-length", "4");
    expect(a.code).toBe(2);
    expect(a.err).toMatch(/SettingsError[\s\S]*field: blockLength/);
    const b = await cli(llada, "--prompt", "hi", "--alg", "entropy");
    expect(b.err).toMatch(/field: alg[\s\S]*"low_confidence", "random"/);
    const c = await cli(llada, "--prompt", "hi", "--stepz", "4");
    expect(c.code).toBe(2);
    const d = await cli(llada, "--prompt", "hi ".repeat(3000), "--gen-length", "1200");
    expect(d.code).toBe(2);
    expect(d.err).toMatch(/max_position_embeddings 4096/);
  });
});
