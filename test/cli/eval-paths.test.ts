/**
 * `floatscope eval` on empty or misplaced inputs and outputs: one message and the contract's exit
 * code, before any model is opened (an empty data file used to crash with ENOENT on the results
 * file after the run).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const model = path.join(root, "models/tiny-qwen");
const data = path.join(root, "models/world/eval-heldout.jsonl.gz");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-cli-eval-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function run(...argv: string[]) {
  let out = "",
    err = "";
  const code = await main(["eval", ...argv], { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}
const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m;

describe("floatscope eval inputs and outputs", () => {
  it.each([
    ["empty", ""],
    ["blank", "\n  \n\n"],
  ])("an %s data file is one error (exit 1), no ENOENT, no results file", async (name, text) => {
    const file = path.join(tmp, `${name}.jsonl`);
    fs.writeFileSync(file, text);
    const out = path.join(tmp, `${name}-results.jsonl`);
    const r = await run(model, "--data", file, "--out", out);
    expect(r.code).toBe(1);
    expect(r.err).not.toMatch(/ENOENT/);
    expect(r.err).not.toMatch(STACK_LINE);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("--data that is a folder or missing says what it is (exit 1)", async () => {
    const a = await run(model, "--data", tmp);
    expect(a.code).toBe(1);
    expect(a.err).toMatch(/DatasetError: --data \S+ is a folder; expected a regular file \(QA data file\)/);
    const b = await run(model, "--data", path.join(tmp, "nope.jsonl"));
    expect(b.code).toBe(1);
    expect(b.err).toMatch(/DatasetError: --data \S+nope\.jsonl does not exist; expected a regular file \(QA data file\)/);
  });

  it("an existing folder as --out, a file as --traces, or a missing folder without --mkdir are usage errors (2)", async () => {
    const a = await run(model, "--data", data, "--out", tmp, "--limit", "1");
    expect(a.code).toBe(2);
    expect(a.err).toMatch(/--out file is a folder/);
    const f = path.join(tmp, "a-file");
    fs.writeFileSync(f, "x");
    const b = await run(model, "--data", data, "--traces", f, "--limit", "1");
    expect(b.code).toBe(2);
    expect(b.err).toMatch(/--traces folder is a regular file/);
    const c = await run(model, "--data", data, "--out", path.join(tmp, "no", "such", "r.jsonl"), "--limit", "1");
    expect(c.code).toBe(2);
    expect(c.err).toMatch(/pass --mkdir/);
    expect(fs.existsSync(path.join(tmp, "no"))).toBe(false);
  });

  it("--skip past the end leaves no questions: exit 1 before the model is opened", async () => {
    const r = await run(model, "--data", data, "--skip", "100000");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/No questions to evaluate/);
  });
});
