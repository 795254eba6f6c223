/**
 * The public API surface: what `import … from "floatscope"` offers (src/index.ts). The list of value
 * exports is committed in test/api/exports.txt, so adding, renaming or dropping one is a visible,
 * reviewed diff (update the file with the change). Every name the notebooks and docs import from
 * "floatscope" must be exported.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import * as lib from "../../src/index.js";

const ROOT = resolve(__dirname, "../..");
const listed = readFileSync(join(__dirname, "exports.txt"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

/** Names in `import { a, b as c, type D } from "floatscope"` statements of a text (values only). */
function importedNames(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*["']floatscope["']/g)) {
    for (const part of m[1]
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      if (part.startsWith("type ")) continue;
      names.push(part.split(/\s+as\s+/)[0].trim());
    }
  }
  return names;
}

describe("public API (src/index.ts)", () => {
  const exported = Object.keys(lib).sort();

  it("exports exactly the committed list of values (test/api/exports.txt)", () => {
    expect(exported).toEqual([...listed].sort());
  });

  it("no export is undefined (a type re-exported as a value, or an import cycle)", () => {
    for (const name of exported) expect((lib as Record<string, unknown>)[name], name).toBeDefined();
  });

  it("every name the notebooks and docs import from floatscope exists", () => {
    const texts: [string, string][] = [];
    for (const f of readdirSync(join(ROOT, "notebooks")).filter((f) => f.endsWith(".ipynb"))) {
      const nb = JSON.parse(readFileSync(join(ROOT, "notebooks", f), "utf8")) as {
        cells: { cell_type: string; source: string | string[] }[];
      };
      texts.push([
        f,
        nb.cells
          .filter((c) => c.cell_type === "code")
          .map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source))
          .join("\n"),
      ]);
    }
    for (const f of ["README.md", ...readdirSync(join(ROOT, "docs")).map((d) => `docs/${d}`)].filter((f) => f.endsWith(".md"))) {
      texts.push([f, readFileSync(join(ROOT, f), "utf8")]);
    }
    let count = 0;
    for (const [file, text] of texts) {
      for (const name of importedNames(text)) {
        count++;
        expect(exported, `${file} imports ${name}`).toContain(name);
      }
    }
    expect(count).toBeGreaterThan(50);
  });
});
