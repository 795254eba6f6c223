/**
 * `npm run reproduce` end to end on the smoke notebook: execute it headless with our kernel
 * (scripts/reproduce.sh → nbclient), then read the saved .ipynb and check its outputs.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, VENV_PYTHON, setupMissing } from "../kernel/env.js";
import { parseHtml, parseSvg, texts } from "../display/markup.js";

const run = promisify(execFile);
const missing = setupMissing();
if (missing) console.warn(`[notebook tests skipped] ${missing}`);

const HEATMAP_MIME = "application/vnd.floatscope.figure.v1+json"; // a heatmap is shown as a figure description

interface Output {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
}
interface Cell {
  cell_type: string;
  source: string | string[];
  outputs?: Output[];
}

const join1 = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join("") : (v ?? ""));

describe.skipIf(missing !== null)("npm run reproduce: notebooks/00-smoke.ipynb", () => {
  let dir = "";
  let nbPath = "";
  let cells: Cell[] = [];
  let outputs: Output[] = [];
  let log = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "floatscope-nb-"));
    const t0 = Date.now();
    // FLOATSCOPE_SKIP_SETUP: npm test ran setup already; a rebuild here would race the kernel test.
    const r = await run("bash", ["scripts/reproduce.sh", "--output-dir", dir, "notebooks/00-smoke.ipynb"], {
      cwd: ROOT,
      env: { ...process.env, FLOATSCOPE_SKIP_SETUP: "1" },
      timeout: 240_000,
    });
    log = r.stdout + r.stderr;
    console.log(`[notebooks] 00-smoke executed in ${Date.now() - t0} ms`);
    nbPath = join(dir, "00-smoke.ipynb");
    cells = JSON.parse(readFileSync(nbPath, "utf8")).cells;
    outputs = cells.flatMap((c) => c.outputs ?? []);
  }, 300_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ran every code cell without errors", () => {
    expect(log).toContain("00-smoke.ipynb");
    expect(log).toMatch(/ok in [\d.]+ s/);
    const code = cells.filter((c) => c.cell_type === "code");
    expect(code.length).toBeGreaterThanOrEqual(5);
    expect(outputs.filter((o) => o.output_type === "stream" && o.name === "stderr")).toEqual([]);
    expect(outputs.filter((o) => o.output_type === "error")).toEqual([]);
    const stdout = outputs.filter((o) => o.output_type === "stream" && o.name === "stdout").map((o) => join1(o.text)).join("");
    expect(stdout).toContain("smoke ok");
  });

  it("has exactly one output bundling our MIME type, an SVG fallback and text/plain", () => {
    const ours = outputs.filter((o) => o.data && HEATMAP_MIME in o.data);
    expect(ours).toHaveLength(1);
    const data = ours[0].data!;
    expect(ours[0].output_type).toBe("display_data");
    expect(Object.keys(data).sort()).toEqual([HEATMAP_MIME, "image/svg+xml", "text/plain"].sort());

    // The spec: 6 layers × 8 tokens of a softmax, so each row sums to 1 (the notebook's definition).
    const d = data[HEATMAP_MIME] as { figure: string; panels: { cols: number; values: number[]; x: { labels: string[] }; y: { labels: string[] } }[] };
    expect(d.figure).toBe("heatmap");
    const p = d.panels[0];
    expect(p.y.labels).toEqual(["L0", "L1", "L2", "L3", "L4", "L5"]);
    expect(p.x.labels).toEqual(["<bos>", "Q:", " what", " is", ' "</svg>"', " &", " <script>", "?"]);
    // 4 significant digits per cell in the description
    for (let r = 0; r < 6; r++) expect(p.values.slice(r * p.cols, (r + 1) * p.cols).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 2);

    // The fallback is well-formed SVG and the markup-laden tokens are text, not elements.
    const svg = join1(data["image/svg+xml"] as string | string[]);
    const doc = parseSvg(svg);
    expect(doc.querySelectorAll("parsererror").length).toBe(0);
    expect(doc.querySelectorAll("script").length).toBe(0);
    const labels = [...texts(doc, "text"), ...texts(doc, "text > title")].map((t) => t.trim());
    for (const token of ["<bos>", '"</svg>"', "&", "<script>"]) expect(labels).toContain(token);

    expect(join1(data["text/plain"] as string)).toMatch(/^Heatmap "attention received \(synthetic\)": 6 rows \(layer\) × 8 columns \(key\)/);
  });

  it("keeps the progress display as one output in its final state", () => {
    const bars = outputs.filter((o) => o.data && /^denoising \(pretend\)/.test(join1(o.data["text/plain"] as string)));
    expect(bars).toHaveLength(1);
    expect(join1(bars[0].data!["text/plain"] as string)).toMatch(/25\/25 .* done in /);
    expect(join1(bars[0].data!["text/html"] as string)).toContain("floatscope-progress");
  });

  it("shows the arquero table as HTML", () => {
    const tables = outputs.filter((o) => o.data && "text/html" in o.data && join1(o.data["text/html"] as string).includes("floatscope-table"));
    expect(tables).toHaveLength(1);
    const doc = parseHtml(join1(tables[0].data!["text/html"] as string));
    expect(texts(doc, "th")).toEqual(["layer", "anchor", "mass"]);
    expect(doc.querySelectorAll("tbody tr").length).toBe(6);
    expect(texts(doc, "tbody tr td:nth-child(2)")[0]).toBe("<bos>");
  });

  it("is a valid nbformat v4 notebook (our JSON payload under an application/…+json key)", async () => {
    const r = await run(VENV_PYTHON, ["-c", "import sys, nbformat; nbformat.validate(nbformat.read(sys.argv[1], as_version=4)); print('valid')", nbPath]);
    expect(r.stdout.trim()).toBe("valid");
  });
});
