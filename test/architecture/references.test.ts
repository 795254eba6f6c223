/**
 * The repository stands alone: code, docs and notebooks cite the paper or our own docs, never notes a
 * reader of the repository does not have (design notes kept outside it, a sibling `shared/` folder,
 * issue numbers of the tracker the work was planned in). This test greps every text file we ship.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "../..");
const SKIP_DIRS = new Set(["node_modules", "dist", ".venv", ".git", ".cache", "runs", "labextension", "lib", "__pycache__", "_executed"]);
const TEXT = /\.(ts|tsx|js|cjs|mjs|md|py|sh|ipynb|json|css|txt|yml|yaml|toml|cfg)$/;

/** What an outside reference looks like (this file, which spells them out, is not scanned). */
const OUTSIDE: [string, RegExp][] = [
  [
    "design notes kept outside the repository",
    new RegExp(
      ["paper", "analyses"].join("-") +
        "|" +
        ["aesth", "etics"].join("") +
        "|" +
        ["jupyter", "integration"].join("-") +
        "(\\.md| §)|" +
        ["onnx", "feasibility"].join("-") +
        "|peers(\\.md| §)|architecture-sketch|tiny-models-calibration|real-models-notes",
      "i",
    ),
  ],
  ["a path outside the repository", new RegExp(["\\.\\.", "shared"].join("/") + "|/work/" + "shared")],
  ["an issue number", new RegExp("\\b[Ii]ssue\\s*#\\d+|#\\d+,? item \\d")],
];

function textFiles(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name) && !(dir === ROOT && e.name === "models")) textFiles(path.join(dir, e.name), out);
    } else if (TEXT.test(e.name) && e.name !== "package-lock.json" && path.join(dir, e.name) !== __filename)
      out.push(path.join(dir, e.name));
  }
  return out;
}

describe("references stay inside the repository", () => {
  const files = textFiles(ROOT);

  it("scans the code, docs and notebooks", () => {
    const rel = files.map((f) => path.relative(ROOT, f));
    for (const f of ["README.md", "src/index.ts", "docs/analyses.md", "notebooks/02-absorption.ipynb", "training/train.py"])
      expect(rel).toContain(f);
  });

  it("no file cites a document the reader does not have", () => {
    const found: string[] = [];
    for (const file of files) {
      const lines = fs.readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        for (const [what, re] of OUTSIDE)
          if (re.test(line)) found.push(`${path.relative(ROOT, file)}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(found).toEqual([]);
  });
});
