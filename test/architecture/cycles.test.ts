/**
 * No import cycle in src/: a module can be read (and loaded) after everything it imports. Cycles are
 * how a layer quietly starts depending on itself in a loop (the CLI's command table once imported every
 * command file and each command file the table). Static imports count, `import type` included; a lazy
 * `import()` does not (it is how the command table loads its commands).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(__dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "dist" || e.name === "node_modules" ? [] : sourceFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

function staticImports(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+["'](\.[^"']+)["']/gm)) {
    out.push(path.resolve(path.dirname(file), m[1]).replace(/\.js$/, ".ts"));
  }
  return out;
}

describe("imports in src/", () => {
  it("form no cycle", () => {
    const files = sourceFiles(SRC);
    const edges = new Map(files.map((f) => [f, staticImports(f).filter((t) => fs.existsSync(t))]));
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (f: string, stack: string[]) => {
      if (state.get(f) === "done") return;
      if (state.get(f) === "open") {
        cycles.push([...stack.slice(stack.indexOf(f)), f].map((x) => path.relative(SRC, x)).join(" → "));
        return;
      }
      state.set(f, "open");
      for (const t of edges.get(f) ?? []) visit(t, [...stack, f]);
      state.set(f, "done");
    };
    for (const f of files) visit(f, []);
    expect(cycles).toEqual([]);
  });
});
