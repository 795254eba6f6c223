/**
 * The pipeline's layers depend one way (README "Project layout" → "Layers"): a layer is only real if a tool
 * checks it. This test reads every import in src/ and fails on an import that goes against the
 * arrows, e.g. an analysis that pulls in the engine, or the trace format that needs onnxruntime.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(__dirname, "../../src");

/** Which top-level folders of src/ each folder may import from (besides itself). */
const ALLOWED: Record<string, string[]> = {
  util: [],
  // The family registry (adapter tables and every list derived from them): low enough that the trace
  // format, the checkpoint readers and the samplers all read families from it.
  families: ["util"],
  protocol: ["util"],
  checkpoint: ["families", "util"],
  graph: ["families", "checkpoint", "util"],
  reference: ["graph", "families", "checkpoint", "util"],
  runtime: ["graph", "families", "checkpoint", "util"],
  trace: ["families", "util"],
  // analysis: the intervention policies detect anchors with the one detector the analyses use
  samplers: ["runtime", "graph", "families", "checkpoint", "trace", "analysis", "util"],
  analysis: ["trace", "protocol", "util"],
  figures: ["analysis", "trace", "protocol", "util"],
  display: ["figures", "protocol", "families", "util"],
  // model: opening a checkpoint (folder or GGUF) with its preset; the CLI opens models without the QA harness.
  model: ["samplers", "runtime", "graph", "families", "checkpoint", "util"],
  qa: ["model", "samplers", "runtime", "graph", "families", "checkpoint", "trace", "analysis", "util"],
  grid: ["qa", "model", "samplers", "runtime", "graph", "families", "checkpoint", "trace", "analysis", "util"],
  notebook: ["qa", "model", "display", "samplers", "runtime", "graph", "families", "checkpoint", "trace", "analysis", "util"],
  cli: ["*"],
  entry: ["*"], // the package's subpath entries (floatscope/<layer>) re-export their layer
  ".": ["*"], // src/index.ts re-exports the main entry's names
};

/** Packages only the compute side may load: an analysis must run on a saved trace without them. */
const COMPUTE_ONLY_PACKAGES = ["onnxruntime-node", "onnxruntime-common"];
const COMPUTE_LAYERS = new Set(["runtime", "samplers", "model", "qa", "grid", "notebook", "cli", "entry", "."]);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "dist" || entry.name === "node_modules") continue;
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(p));
    else if (entry.name.endsWith(".ts")) out.push(p);
  }
  return out;
}

function layerOf(file: string): string {
  const rel = path.relative(SRC, file);
  const parts = rel.split(path.sep);
  return parts.length === 1 ? "." : parts[0];
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  const specs: string[] = [];
  const re = /(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g;
  for (let m = re.exec(text); m; m = re.exec(text)) specs.push(m[1]);
  return specs;
}

describe("layering of src/", () => {
  const files = sourceFiles(SRC);

  it("finds the library's source files", () => {
    expect(files.length).toBeGreaterThan(40);
  });

  it("every relative import goes along the allowed arrows", () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      const allowed = ALLOWED[from];
      if (!allowed) {
        violations.push(`${path.relative(SRC, file)}: folder src/${from} has no entry in the layer table`);
        continue;
      }
      for (const spec of importsOf(file)) {
        if (!spec.startsWith(".")) continue;
        const target = layerOf(path.resolve(path.dirname(file), spec));
        if (target === from || allowed.includes("*") || allowed.includes(target)) continue;
        violations.push(`${path.relative(SRC, file)} imports ${spec} (src/${from} may import only: ${allowed.join(", ") || "nothing"})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("onnxruntime is loaded only on the compute side", () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      if (COMPUTE_LAYERS.has(from)) continue;
      for (const spec of importsOf(file)) {
        if (COMPUTE_ONLY_PACKAGES.some((p) => spec === p || spec.startsWith(`${p}/`))) {
          // The graph layer builds protos but must not open sessions either.
          violations.push(`${path.relative(SRC, file)} imports ${spec}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });
});
