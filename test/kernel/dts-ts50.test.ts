/**
 * The library's published declarations (src/dist/**\/*.d.ts) must type-check under the
 * TypeScript that tslab compiles notebook cells with (5.0.4, Node10 resolution, non-strict).
 *
 * tslab itself runs with skipLibCheck, so a post-5.0 type in a .d.ts (NoInfer, …) would not fail
 * loudly there: it would silently turn into an error type and break user cells in odd ways.
 * Here we check with skipLibCheck off. One diagnostic is ignored on purpose: TS ≥ 5.3 writes
 * `/// <reference types="node" resolution-mode="require"/>`, which 5.0 flags under Node10
 * resolution (TS1452) but which is harmless with tslab's skipLibCheck.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./env.js";

const require = createRequire(import.meta.url);
const entry = join(ROOT, "src", "dist", "index.d.ts");
const IGNORED = new Set([1452]);

describe.skipIf(!existsSync(entry))("public .d.ts under tslab's TypeScript 5.0", () => {
  it("has no type errors (skipLibCheck off)", () => {
    // tslab's own TypeScript fork, resolved the way the kernel resolves it.
    const ts = require(require.resolve("@tslab/typescript-for-tslab", { paths: [join(ROOT, "node_modules", "tslab")] }));
    expect(ts.version).toMatch(/^5\.0\./);
    const program = ts.createProgram([entry], {
      noEmit: true,
      skipLibCheck: false,
      strict: false,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2022.d.ts"],
      esModuleInterop: true,
      types: ["node"],
      typeRoots: [join(ROOT, "node_modules", "@types")],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d: any) => !IGNORED.has(d.code) && (!d.file || d.file.fileName.includes("/src/dist/")))
      .map((d: any) => {
        const where = d.file ? `${relative(ROOT, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : "(program)";
        return `${where} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
      });
    expect(problems, problems.join("\n")).toEqual([]);
    // The check really covered the library, not just an empty entry point.
    expect(program.getSourceFiles().filter((f: any) => f.fileName.includes("/src/dist/")).length).toBeGreaterThan(10);
  }, 120_000);
});
