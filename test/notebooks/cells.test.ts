/**
 * Every notebook in notebooks/ reads as research: no code cell over 25 lines (pipeline code lives in
 * the library), and each figure notebook (01–07) ends by emitting its numbers as findings.
 * Static checks on the committed files; executing them is test/notebooks/figures.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../kernel/env.js";

const DIR = join(ROOT, "notebooks");
const files = readdirSync(DIR).filter((f) => f.endsWith(".ipynb")).sort();
const join1 = (v: unknown) => (Array.isArray(v) ? v.join("") : typeof v === "string" ? v : "");
const code = (f: string) =>
  (JSON.parse(readFileSync(join(DIR, f), "utf8")) as { cells: { cell_type: string; source: unknown }[] }).cells
    .filter((c) => c.cell_type === "code")
    .map((c) => join1(c.source));

describe("notebooks/", () => {
  it("holds the figure notebooks", () => {
    expect(files.filter((f) => /^0[1-7]-/.test(f))).toHaveLength(7);
  });

  it.each(files.map((f) => [f]))("%s: no code cell longer than 25 lines", (f) => {
    for (const [i, src] of code(f).entries()) expect(src.split("\n").length, `${f} code cell ${i}`).toBeLessThanOrEqual(25);
  });

  it.each(files.filter((f) => /^0[1-7]-/.test(f)).map((f) => [f]))("%s runs a real tier beside the tiny one (notebookSettings with tier)", (f) => {
    expect(code(f).join("\n")).toMatch(/notebookSettings\(\{ families: \[[^\]]*\], tier: "real(-base)?"/);
  });

  // tslab type-checks every cell: a cast to any would hide a library type that is wrong or missing, and a
  // notebook reading process.env itself skips the checks and defaults notebookSettings / notebookEnv apply.
  it.each(files.map((f) => [f]))("%s: no `as any` and no process.env in its code cells", (f) => {
    for (const [i, src] of code(f).entries()) {
      expect(src, `${f} code cell ${i}`).not.toMatch(/\bas\s+any\b/);
      expect(src, `${f} code cell ${i}`).not.toMatch(/\bprocess\.env\b/);
    }
  });

  // The figure notebooks after 07 take their models and settings the way 01–07 do.
  it.each([
    ["08-robustness.ipynb", ["notebookSettings", "notebookEnv"]],
    ["09-interventions.ipynb", ["notebookSettings"]],
    ["10-claims.ipynb", ["notebookEnv"]],
  ])("%s takes its settings from the shared notebook helpers", (f, helpers) => {
    const src = code(f).join("\n");
    const imported = /import\s*\{([^}]*)\}\s*from\s*"floatscope"/.exec(src)?.[1] ?? "";
    for (const h of helpers) {
      expect(imported, `${f} imports ${h} from floatscope`).toMatch(new RegExp(`\\b${h}\\b`));
      expect(src, `${f} calls ${h}`).toMatch(new RegExp(`\\b${h}\\(`));
    }
  });

  it.each(files.filter((f) => /^0[1-7]-/.test(f)).map((f) => [f]))("%s ends by showing its findings under its own name", (f) => {
    const cells = code(f);
    const last = cells[cells.length - 1].trim().split("\n");
    expect(last[last.length - 1]).toMatch(new RegExp(`^show\\(findings\\("${f.replace(".ipynb", "")}", `));
  });
});
