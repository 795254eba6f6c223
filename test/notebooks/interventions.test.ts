/**
 * Notebook 09 (interventions), executed headless through `scripts/reproduce.sh` (what `npm run
 * reproduce` runs) on the models present, then read back. Kept apart from figures.test.ts (01–07)
 * so each notebook family's checks stay next to its own expectations; the execution is the same.
 *
 * Checked: no error and no stderr; the Δ-accuracy heatmap over the models present; one drift view per
 * (MDM, variant) and the side-by-side scrubber; the findings output (read back with `readFindings`)
 * with one finding per (model, intervention), each value inside its own 95 % interval, claims by
 * paradigm; the generated text naming the models and the missing ones; the committed copy.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFindings } from "../../src/display/findings.js";
import { findModels } from "../../src/notebook/models.js";
import { ROOT, setupMissing } from "../kernel/env.js";
import { reproduce, runProblems } from "./reproduce-run.js";
import { figures, join1, markdownOf, outputsOf, type Desc, type Notebook } from "./nb-outputs.js";
import { bpeMarkersShown } from "./token-labels.js";

const NAME = "09-interventions";
const V = (kind: string) => `application/vnd.floatscope.${kind}.v1+json`;
const MODELS = resolve(ROOT, "notebooks", process.env.FLOATSCOPE_MODELS ?? "../models");
const FOUND = findModels(MODELS, ["llama", "qwen", "llada", "dream"], JSON.parse(process.env.FLOATSCOPE_MODEL_NAMES ?? "{}") as Record<string, string>);
// findModels keys the folders by canonical family (qwen → qwen2)
const ARMS = Object.entries(FOUND.names).filter(([f]) => f === "llama" || f === "qwen2").map(([, m]) => m);
const MDMS = Object.entries(FOUND.names).filter(([f]) => f === "llada" || f === "dream").map(([, m]) => m);
const ALL = [...ARMS, ...MDMS];


const missing = setupMissing();
if (missing) console.warn(`[notebook 09 tests skipped] ${missing}`);

describe.skipIf(missing !== null || ALL.length === 0)("npm run reproduce: notebook 09 on the models present", () => {
  let dir = "";
  let log = "";
  let rc = -1;
  let nb: Notebook;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "floatscope-09-"));
    ({ log, rc } = await reproduce(dir, [`notebooks/${NAME}.ipynb`], { timeoutMs: 900_000 }));
    const p = join(dir, `${NAME}.ipynb`);
    if (existsSync(p)) nb = JSON.parse(readFileSync(p, "utf8")) as Notebook;
  }, 960_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("runs every cell without errors or stderr", () => {
    expect(rc, log.slice(-2000)).toBe(0);
    expect(log).toMatch(/09-interventions\.ipynb +ok in/);
    expect(nb).toBeDefined();
    expect(runProblems(nb)).toEqual({ errors: [], stderr: [], unexecuted: 0 });
  });

  it("shows no Ġ/Ċ in any label, table or image (token text reads as text)", () => {
    expect(bpeMarkersShown(nb)).toEqual([]);
  });

  it("shows the Δ-accuracy heatmap over the models present, drift views per MDM variant, and the scrubber", () => {
    const [h] = figures(nb, V("heatmap")).map((o) => {
      const p = (o.data![V("heatmap")] as Desc).panels[0];
      return { yLabels: p.y.labels, xLabels: p.x.labels, values: p.y.labels.map((_, r) => p.values.slice(r * p.cols, (r + 1) * p.cols)) };
    });
    expect([...h.yLabels].sort()).toEqual([...ALL].sort());
    expect(h.xLabels).toEqual(["anchors", "random", "first", "sink"]);
    h.values.forEach((row, i) => {
      for (const v of row.slice(0, 3)) expect(v !== null && v >= -100 && v <= 100).toBe(true);
      expect(row[3] === null).toBe(ARMS.includes(h.yLabels[i])); // the sink variant runs on MDMs only
    });
    const drift = figures(nb, V("drift")).map((o) => ({ model: (o.data![V("drift")] as Desc).exportName.models![0] }));
    expect(drift.length).toBe(3 * MDMS.length);
    for (const m of MDMS) expect(drift.map((d) => d.model).sort()).toEqual(expect.arrayContaining([m, `${m} @ anchors`, `${m} @ sink`]));
    expect(figures(nb, V("scrubber")).length).toBe(MDMS.length ? 1 : 0);
  });

  it("emits one finding per (model, intervention), each inside its own interval, claims by paradigm", () => {
    const [rec] = readFindings(nb, `${NAME}.ipynb`);
    expect(rec.notebook).toBe(NAME);
    const expected = ARMS.length * 3 + MDMS.length * 4;
    expect(rec.findings.length).toBe(expected);
    for (const f of rec.findings) {
      expect(ALL).toContain(f.model);
      expect(f.claim).toBe(ARMS.includes(f.model) ? "sink-fixed-arm" : "anchors-float-mdm");
      expect(f.ci95).not.toBeNull();
      expect(f.ci95![0] <= f.value && f.value <= f.ci95![1]).toBe(true);
      expect(f.n).toBeGreaterThan(10);
    }
  });

  it("ends its text with numbers for every model present, honest about the missing ones", () => {
    const last = markdownOf(nb).at(-1)!;
    for (const m of ALL) expect(last).toContain(m);
    expect(last).toMatch(/\[[+-]?\d+\.\d, [+-]?\d+\.\d\]/); // intervals quoted
    if (FOUND.missing.length) expect(last).toContain("Not in this run (missing)");
    else expect(last).not.toContain("Not in this run");
  });
});

describe("the committed notebook 09", () => {
  it("uses the floatscope kernel, imports only floatscope (+ node:), ends with findings, and stays small", () => {
    const p = join(ROOT, "notebooks", `${NAME}.ipynb`);
    expect(statSync(p).size).toBeLessThan(2 * 1024 * 1024);
    const book = JSON.parse(readFileSync(p, "utf8")) as Notebook;
    expect(book.metadata.kernelspec?.name).toBe("floatscope");
    const code = book.cells.filter((c) => c.cell_type === "code").map((c) => join1(c.source));
    for (const m of code.join("\n").matchAll(/from\s+"([^"]+)"/g)) expect(m[1] === "floatscope" || m[1].startsWith("node:"), m[1]).toBe(true);
    // The models folder comes from the shared settings helper, like 01–08 (no cell reads process.env).
    expect(code.join("\n")).toMatch(/notebookSettings\(/);
    expect(code.join("\n")).not.toContain("process.env");
    expect(code.at(-1)).toMatch(/show\(findings\("09-interventions", \w+\)\);\s*$/);
    const outs = outputsOf(book);
    expect(outs.filter((o) => o.output_type === "error" || (o.output_type === "stream" && o.name === "stderr"))).toEqual([]);
    if (outs.length > 0) expect(readFindings(book, `${NAME}.ipynb`).length).toBe(1);
  });
});
