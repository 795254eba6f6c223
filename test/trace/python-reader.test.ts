/**
 * The Python reading example of docs/trace-format.md (scripts/read_fstrace.py) reads our traces:
 * run only where Debian's python3 with numpy is available (CI without it skips, saying why).
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { generate } from "../../src/samplers/generate.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const python = "/usr/bin/python3";
const hasNumpy = fs.existsSync(python) && spawnSync(python, ["-c", "import numpy"]).status === 0;
const script = path.resolve(import.meta.dirname, "../../scripts/read_fstrace.py");

describe.skipIf(!hasNumpy)("scripts/read_fstrace.py (needs /usr/bin/python3 with numpy)", () => {
  it("reads a complete trace and a truncated one", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-py-"));
    const file = path.join(dir, "t.fstrace");
    await generate(
      new FakeEngine(),
      ["t5 t6 t7"],
      { genLength: 4, steps: 2 },
      { tokenizer: new FakeTokenizer(), traceFiles: [file], modelName: "fake" },
    );
    const out = execFileSync(python, [script, file], { encoding: "utf8" });
    expect(out.split("\n")[0]).toBe("fake llada steps 2 received (7,) complete");
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(file, bytes.subarray(0, bytes.length - 10));
    expect(execFileSync(python, [script, file], { encoding: "utf8" }).split("\n")[0]).toBe("fake llada steps 2 received (7,) partial");
  });
});

describe("docs/trace-format.md", () => {
  it("quotes scripts/read_fstrace.py's reader verbatim (the example that the test above runs)", () => {
    const src = fs.readFileSync(script, "utf8");
    const fn = src.slice(src.indexOf("import json"), src.indexOf("if __name__")).trimEnd();
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, "../../docs/trace-format.md"), "utf8");
    expect(doc.includes(fn)).toBe(true);
  });
});
