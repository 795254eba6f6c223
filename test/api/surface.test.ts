/**
 * The public API surface: what `import … from "floatscope"` offers (src/index.ts). The list of value
 * exports is committed in test/api/exports.txt, so adding, renaming or dropping one is a visible,
 * reviewed diff (update the file with the change). The main entry stays small (≤ 150 names, types
 * included); the rest is behind one subpath per layer (`floatscope/grid` → src/entry/grid.ts), each
 * listed in src/package.json `exports`. Every name the notebooks and docs import from "floatscope" or a
 * subpath must be exported there.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import * as lib from "../../src/index.js";
import * as checkpointEntry from "../../src/entry/checkpoint.js";
import * as modelEntry from "../../src/entry/model.js";
import * as engineEntry from "../../src/entry/engine.js";
import * as samplersEntry from "../../src/entry/samplers.js";
import * as traceEntry from "../../src/entry/trace.js";
import * as qaEntry from "../../src/entry/qa.js";
import * as gridEntry from "../../src/entry/grid.js";
import * as notebookEntry from "../../src/entry/notebook.js";
import * as analysisEntry from "../../src/entry/analysis.js";
import * as figuresEntry from "../../src/entry/figures.js";
import * as displayEntry from "../../src/entry/display.js";
import * as errorsEntry from "../../src/entry/errors.js";

const ROOT = resolve(__dirname, "../..");
const listed = readFileSync(join(__dirname, "exports.txt"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

/** Names in `import { a, b as c, type D } from "floatscope[/sub]"` statements of a text (values only), with the subpath ("" for the main entry). */
function importedNames(text: string): [string, string][] {
  const names: [string, string][] = [];
  for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*["']floatscope(?:\/([a-z-]+))?["']/g)) {
    for (const part of m[1]
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      if (part.startsWith("type ")) continue;
      names.push([m[2] ?? "", part.split(/\s+as\s+/)[0].trim()]);
    }
  }
  return names;
}

const pkg = JSON.parse(readFileSync(join(ROOT, "src/package.json"), "utf8")) as { exports: Record<string, unknown> };
const SUBPATHS = Object.keys(pkg.exports)
  .filter((k) => k.startsWith("./") && k !== "./package.json")
  .map((k) => k.slice(2));
const subpathModules: Record<string, Record<string, unknown>> = {
  checkpoint: checkpointEntry,
  model: modelEntry,
  engine: engineEntry,
  samplers: samplersEntry,
  trace: traceEntry,
  qa: qaEntry,
  grid: gridEntry,
  notebook: notebookEntry,
  analysis: analysisEntry,
  figures: figuresEntry,
  display: displayEntry,
  errors: errorsEntry,
};

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
      for (const [sub, name] of importedNames(text)) {
        count++;
        const from = sub === "" ? exported : Object.keys(subpathModules[sub] ?? {});
        expect(from, `${file} imports ${name} from floatscope${sub ? `/${sub}` : ""}`).toContain(name);
      }
    }
    expect(count).toBeGreaterThan(50);
  });

  it("the main entry names at most 150 values and types", () => {
    const text = readFileSync(join(ROOT, "src/index.ts"), "utf8");
    const names = [...text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
      m[1]
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean),
    );
    expect(names.length).toBeLessThanOrEqual(150);
  });

  it("every subpath in src/package.json is a file of src/entry/, and each of them is a subpath", () => {
    const files = readdirSync(join(ROOT, "src/entry")).map((f) => f.replace(/\.ts$/, ""));
    expect([...SUBPATHS].sort()).toEqual(files.sort());
    expect(Object.keys(subpathModules).sort()).toEqual(files.sort());
    for (const s of SUBPATHS) {
      expect(pkg.exports[`./${s}`]).toEqual({ types: `./dist/entry/${s}.d.ts`, default: `./dist/entry/${s}.js` });
      for (const [name, value] of Object.entries(subpathModules[s])) expect(value, `floatscope/${s} ${name}`).toBeDefined();
    }
  });

  it("each main-entry value is the same object as in its layer's subpath", () => {
    const all = Object.assign({}, ...Object.values(subpathModules)) as Record<string, unknown>;
    for (const name of exported) expect((lib as Record<string, unknown>)[name], name).toBe(all[name]);
  });
});
