/**
 * Notebook 11 (the paper's temporal setting: 32 tokens in 32 steps under LLaDA's low-confidence and Dream's entropy
 * order), executed headless through `scripts/reproduce.sh` (what `npm run reproduce` runs) on the tiers the
 * environment allows (the tiny tier unless FLOATSCOPE_TIERS says otherwise, as figures.test.ts), together with the
 * claims notebook given FIRST on the command line: reproduce must still run the claims notebook last, so that the
 * CLAIMS.md it writes reads notebook 11's findings.
 *
 * Checked: every cell ran, no error, no stderr; per MDM present, order and depth (first / last layer) a static drift
 * picture of 32 steps labelled with its model, tier, setting and layer; one scrubber per (tier, order) holding every
 * one of the 32 steps of each run at the kept layers (the first and the last among them) within its 64 KiB cap; the
 * frontier figure; the findings (read back with `readFindings`, accepted by the checks CLAIMS.md applies, and read by
 * scripts/render-claims.ts); the committed copy's size and imports.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectFindings } from "../../src/display/claims.js";
import { readFindings } from "../../src/display/findings.js";
import { findModels } from "../../src/notebook/models.js";
import { ROOT, setupMissing } from "../kernel/env.js";
import { reproduce, runProblems } from "./reproduce-run.js";
import { figures, join1, markdownOf, outputsOf, type Notebook, type Output } from "./nb-outputs.js";
import { bpeMarkersShown } from "./token-labels.js";

const run = promisify(execFile);
const NAME = "11-paper-setting-drift";
const V = (kind: string) => `application/vnd.floatscope.${kind}.v1+json`;
const ORDERS = ["LLaDA low-confidence order", "Dream entropy order"];
const SETTING = (order: string) => `32 tokens in 32 steps, ${order}`;
const TIERS = (process.env.FLOATSCOPE_TIERS ?? "tiny").split(",").map((t) => t.trim());
const MODELS = resolve(ROOT, "notebooks", process.env.FLOATSCOPE_MODELS ?? "../models");
const TINY = TIERS.includes("tiny") ? Object.values(findModels(MODELS, ["llada", "dream"]).names) : [];
const REAL_BASE_DIR = resolve(ROOT, "notebooks", process.env.FLOATSCOPE_REAL_MODELS ?? "../.cache/real-models", "smollm2-135m-dream-world");
const REAL_BASE = TIERS.includes("real-base") && existsSync(join(REAL_BASE_DIR, "config.json")) ? ["smollm2-135m-dream-world"] : [];
const layersOf = (dir: string) => {
  const c = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as { num_hidden_layers?: number; n_layers?: number };
  return (c.num_hidden_layers ?? c.n_layers)!;
};
/** model → [tier, layers] for every MDM this run decodes. */
const MDMS: Record<string, [string, number]> = Object.fromEntries([
  ...TINY.map((m) => [m, ["tiny", layersOf(join(MODELS, m))]] as const),
  ...REAL_BASE.map((m) => [m, ["real-base", layersOf(REAL_BASE_DIR)]] as const),
]);

interface ScrubberRun {
  model: string;
  tier?: string;
  steps: number[];
  layers: number[];
  tokens: string[];
}
interface ScrubberPayload {
  title?: string;
  runs: ScrubberRun[];
  subsampled: { axis: string; kept: number; of: number }[];
}

const missing = setupMissing();
if (missing) console.warn(`[notebook 11 tests skipped] ${missing}`);

describe.skipIf(missing !== null || TINY.length + REAL_BASE.length === 0)("npm run reproduce: notebook 11 on the tiers present", () => {
  let dir = "";
  let log = "";
  let rc = -1;
  let nb: Notebook;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "floatscope-11-"));
    const t0 = Date.now();
    // The claims notebook first on the command line: reproduce runs it last all the same.
    ({ log, rc } = await reproduce(dir, ["notebooks/10-claims.ipynb", `notebooks/${NAME}.ipynb`], {
      env: { FLOATSCOPE_TIERS: TIERS.join(",") },
      timeoutMs: 1_500_000,
    }));
    console.log(`[notebook 11] executed with the claims notebook in ${((Date.now() - t0) / 1000).toFixed(0)} s (tiers ${TIERS.join(",")})`);
    const p = join(dir, `${NAME}.ipynb`);
    if (existsSync(p)) nb = JSON.parse(readFileSync(p, "utf8")) as Notebook;
  }, 1_600_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("runs every cell without errors or stderr, and the claims notebook after it", () => {
    expect(rc, log.slice(-2000)).toBe(0);
    expect(log).toMatch(/11-paper-setting-drift\.ipynb +ok in/);
    expect(log.indexOf("11-paper-setting-drift.ipynb")).toBeLessThan(log.indexOf("10-claims.ipynb"));
    expect(nb).toBeDefined();
    expect(runProblems(nb)).toEqual({ errors: [], stderr: [], unexecuted: 0 });
  });

  it("shows no Ġ/Ċ in any label, table or image (token text reads as text)", () => {
    expect(bpeMarkersShown(nb)).toEqual([]);
  });

  it("draws, per MDM, order and depth, a static drift picture of 32 steps under a line naming model, tier, setting and layer", () => {
    // Each picture follows its label line (a Markdown output), in cell order.
    const outs = outputsOf(nb);
    const pictures: { label: string; svg: string; text: string }[] = [];
    outs.forEach((o: Output, i) => {
      const svg = join1(o.data?.["image/svg+xml"]);
      if (svg && !o.data?.[V("figure")] && !o.data?.[V("scrubber")] && i > 0)
        pictures.push({ label: join1(outs[i - 1].data?.["text/markdown"]), svg, text: join1(o.data?.["text/plain"]) });
    });
    const expected = Object.entries(MDMS).flatMap(([m, [tier, L]]) =>
      ORDERS.flatMap((o) => [`**${m}** (${tier} tier) · ${SETTING(o)} · shallow layer 0`, `**${m}** (${tier} tier) · ${SETTING(o)} · deep layer ${L - 1}`]),
    );
    expect(pictures.map((p) => p.label).sort()).toEqual(expected.sort());
    for (const p of pictures) {
      const layer = /layer (\d+)$/.exec(p.label)![1];
      const model = /^\*\*(.+?)\*\*/.exec(p.label)![1];
      expect(p.svg.startsWith("<svg")).toBe(true);
      expect(p.svg).toContain(`<title>Temporal drift · ${model} · layer ${layer}`);
      // the 32 steps on the y axis (labels thinned to every other step), the prompt's words on the x axis
      const yLabels = [...p.svg.matchAll(/class="fs-ylabels">(.*?)<\/g>/g)].flatMap((m) => [...m[1].matchAll(/<title>(\d+)<\/title>/g)].map((t) => Number(t[1])));
      expect(yLabels[0]).toBe(0);
      expect(Math.max(...yLabels)).toBeGreaterThanOrEqual(30);
      const xLabels = [...p.svg.matchAll(/class="fs-xlabels">(.*?)<\/g>/g)].flatMap((m) => [...m[1].matchAll(/<title>([^<]*)<\/title>/g)].map((t) => t[1]));
      expect(xLabels.filter((t) => /(favourite|colour|Question|What|Passage)/.test(t)).length, xLabels.join(" ")).toBeGreaterThan(0);
      expect(p.text).toMatch(/: 32 steps × \d+ positions, \d+ anchor cells$/);
    }
  });

  it("has one scrubber per (tier, order), each holding all 32 steps of its runs at the kept layers, first and last among them", () => {
    const payloads = figures(nb, V("scrubber")).map((o) => o.data![V("scrubber")] as ScrubberPayload);
    const tiers = [...new Set(Object.values(MDMS).map(([t]) => t))];
    expect(payloads.length).toBe(tiers.length * ORDERS.length);
    for (const tier of tiers)
      for (const order of ORDERS) {
        const p = payloads.find((x) => x.title?.includes(`· ${tier} tier · ${SETTING(order)} ·`));
        expect(p, `${tier} · ${order}`).toBeDefined();
        const models = Object.entries(MDMS).filter(([, [t]]) => t === tier).map(([m]) => m);
        expect(p!.runs.map((r) => r.model).sort()).toEqual(models.sort());
        // nothing of the temporal view subsampled: every step, every kept layer
        expect(p!.subsampled.filter((n) => n.axis === "step" || n.axis === "layer")).toEqual([]);
        for (const r of p!.runs) {
          const L = MDMS[r.model][1];
          expect(r.tier).toBe(tier);
          expect(r.steps).toHaveLength(32);
          expect(r.layers[0]).toBe(0);
          expect(r.layers.at(-1)).toBe(L - 1);
          expect(r.layers.length).toBe(Math.min(8, L));
        }
        expect(JSON.stringify(p).length).toBeLessThanOrEqual(64 * 1024);
      }
  });

  it("shows the frontier figure and a frontier table row per (model, setting)", () => {
    expect(figures(nb, V("frontier")).length).toBe(1);
    const table = markdownOf(nb).find((m) => m.startsWith("| model · setting | statistic |"))!;
    for (const [m] of Object.entries(MDMS)) for (const o of ORDERS) expect(table).toContain(`| ${m} · ${SETTING(o)} | distinct anchors per layer |`);
  });

  it("emits its findings (claim anchors-float-mdm, per model, order and depth) in a form CLAIMS.md and render-claims read", async () => {
    const [rec] = readFindings(nb, `${NAME}.ipynb`);
    expect(rec.notebook).toBe(NAME);
    expect(rec.findings.length).toBe(Object.keys(MDMS).length * ORDERS.length * 2 * 3);
    for (const f of rec.findings) {
      expect(f.claim).toBe("anchors-float-mdm");
      expect(MDMS[f.model][0]).toBe(f.tier);
      expect(f.quantity).toMatch(/, 32 tokens in 32 steps, (LLaDA low-confidence|Dream entropy) order\)$/);
      expect(Number.isInteger(f.value) && f.value >= 0 && f.value <= 32).toBe(true);
    }
    expect(collectFindings([{ file: `${NAME}.ipynb`, json: nb }]).length).toBe(rec.findings.length);
    // The claims notebook ran after notebook 11 and read it…
    const claims = readFileSync(join(dir, "CLAIMS.md"), "utf8");
    expect(claims).toContain(`\`${NAME}.ipynb\``);
    // …and so does the script that renders the root CLAIMS.md.
    const r = await run("npx", ["tsx", "scripts/render-claims.ts", dir], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    expect(r.stdout).toContain(`\`${NAME}.ipynb\``);
  }, 120_000);

  it("ends its text with numbers for every model present", () => {
    const last = markdownOf(nb).at(-1)!;
    for (const m of Object.keys(MDMS)) expect(last).toContain(m);
    expect(last).toMatch(/\d/);
  });
});

describe("the committed notebook 11", () => {
  it("uses the floatscope kernel, imports only floatscope (+ node:), ends with its findings, and stays under 600 kB", () => {
    const p = join(ROOT, "notebooks", `${NAME}.ipynb`);
    expect(statSync(p).size).toBeLessThanOrEqual(600 * 1024);
    const book = JSON.parse(readFileSync(p, "utf8")) as Notebook;
    expect(book.metadata.kernelspec?.name).toBe("floatscope");
    const code = book.cells.filter((c) => c.cell_type === "code").map((c) => join1(c.source));
    for (const m of code.join("\n").matchAll(/from\s+"([^"]+)"/g))
      expect(m[1] === "floatscope" || m[1].startsWith("floatscope/") || m[1].startsWith("node:"), m[1]).toBe(true);
    expect(code.join("\n")).toMatch(/notebookSettings\(\{ families: \["llada", "dream"\]/);
    expect(code.join("\n")).toMatch(/notebookSettings\(\{ families: \["dream"\], tier: "real-base"/);
    expect(code.at(-1)).toMatch(/show\(findings\("11-paper-setting-drift", \w+\)\);\s*$/);
    const outs = outputsOf(book);
    expect(outs.filter((o) => o.output_type === "error" || (o.output_type === "stream" && o.name === "stderr"))).toEqual([]);
    if (outs.length > 0) expect(readFindings(book, `${NAME}.ipynb`).length).toBe(1);
    // committed from a run with the real-base tier (SmolLM2's byte-level vocabulary): token text still reads as text
    expect(bpeMarkersShown(book)).toEqual([]);
  });
});
