/**
 * The browser half of the hostile-input checks: a live notebook whose model and trace names are hostile, run in a real
 * JupyterLab with our kernel, and the HTML gallery built from it (scripts/gallery.py), opened in Chromium.
 * Every payload of the markup family (test/fuzz/hostile-strings.ts) sets `window.__FS_PWNED__` if it runs;
 * the marker must stay unset in both places.
 *
 * The notebook shows the payloads through findingsText (model names, quantities, headline, paper,
 * missing), a trace whose model name is hostile (findingsText of it, and its scrubber), the missing-model
 * note, CLAIMS.md (buildClaims), a heatmap and a progress bar. A control cell shows one unescaped
 * payload as raw Markdown with its own marker (`__FS_CONTROL__`): it must run, which shows that JupyterLab
 * and the gallery would have run ours had they not been escaped (the original finding).
 *
 * Also here (it needs the project's Python): the Python escaping rule (training/escape.py, used by the
 * model cards and the gallery) gives the same text as src/display/escape.ts for every hostile string.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { writeTrace } from "../../../src/trace/writer.js";
import { escapeHtml, escapeMarkdown, markdownCode } from "../../../src/display/escape.js";
import { syntheticTrace } from "../synthetic-trace.js";
import { BROWSER_MARK, HOSTILE, HOSTILE_STRINGS } from "../../fuzz/hostile-strings.js";
import { CHROMIUM, CHROMIUM_ARGS, missingPrerequisite, ROOT, startLab, type LabServer } from "./lab-server.js";

const missing = missingPrerequisite();
if (missing) console.warn(`[hostile-names browser test] skipped: ${missing}`);
const PYTHON = path.join(ROOT, ".venv/bin/python");

/** The payloads the notebook shows (each sets window.__FS_PWNED__ if it runs). */
const PAYLOADS = [...HOSTILE.markup];
/** The gallery also gets a notebook whose file name is a payload (no "/" in it: it is one file name). */
const FILE_PAYLOAD = `<img src=x onerror=window.${BROWSER_MARK}=40>`;
const CONTROL = "__FS_CONTROL__";

const code = (source: string) => ({ cell_type: "code", execution_count: null, metadata: {}, outputs: [], source });
const NOTEBOOK = {
  cells: [
    code(
      [
        'import { buildClaims, findings, findingsText, findModels, heatmap, markdown, progress, readTrace, scrubber, show, valueFinding } from "floatscope";',
        'import * as fs from "node:fs";',
        'const P = JSON.parse(fs.readFileSync("payloads.json", "utf8")) as string[];',
        'const base = (model: string, quantity: string) => ({ claim: "absorption-arm-vs-mdm" as const, model, family: "llada", tier: "tiny", quantity });',
        "P.length",
      ].join("\n"),
    ),
    code("show(findingsText(P.flatMap((p) => valueFinding(base(p, p), 0.5, 4)), { headline: P[0], paper: P[1], missing: P }));"),
    code(
      [
        'const t = readTrace("hostile.fstrace");',
        'show(findingsText(valueFinding(base(t.model.name, "absorption, %"), 1, 1), { headline: t.model.name }));',
        "show(scrubber(t, { title: t.model.name }));",
      ].join("\n"),
    ),
    code('show(findModels("models-" + P[2], ["llada", "dream"], { llada: P[3], dream: P[4] }));'),
    code(
      [
        'const rows = P.map((p) => ({ ...base(p, "rule upstream " + p), family: p, tier: p, value: 0.5, ci95: null, n: 4 }));',
        'const out = findings("02", rows).toMimeBundle();',
        'const claims = buildClaims([{ file: "02-" + P[5] + ".ipynb", json: { cells: [{ cell_type: "code", outputs: [{ data: out }] }] } }]);',
        'fs.writeFileSync("CLAIMS.md", claims.markdown + "\\n");',
        "show(markdown(claims.markdown));",
      ].join("\n"),
    ),
    code("show(heatmap({ title: P[6], xLabels: P.slice(0, 4), yLabels: [P[7]], values: [[0.1, 0.2, 0.3, 0.4]] }));"),
    code("const pr = progress(3, { label: P[8] }); pr.tick(); pr.done();"),
    // The control: one payload as raw Markdown, not through floatscope's text functions.
    code(`show(markdown('<img src=x onerror="window.${CONTROL}=1">'));`),
  ],
  metadata: {
    kernelspec: { display_name: "TypeScript (floatscope)", language: "typescript", name: "floatscope" },
    language_info: { file_extension: ".ts", mimetype: "text/typescript", name: "typescript" },
  },
  nbformat: 4,
  nbformat_minor: 5,
};

type Marks = { pwned: unknown; control: unknown };
const marks = (page: Page) =>
  page.evaluate(
    ([m, c]) => ({ pwned: (window as unknown as Record<string, unknown>)[m], control: (window as unknown as Record<string, unknown>)[c] }),
    [BROWSER_MARK, CONTROL] as const,
  ) as Promise<Marks>;

/**
 * Elements and attributes under `selector` that execute (the list of test/fuzz/hostile-display.test.ts),
 * leaving out the control's. With `carrying`, only those that carry a payload's marker: the gallery's
 * pages have nbconvert's own <script> elements.
 */
const executingIn = (page: Page, selector: string, carrying = false) =>
  page.evaluate(
    ([sel, mark, control, onlyCarrying]) => {
      const found: string[] = [];
      const keep = (what: string, text: string) => {
        if (text.includes(control) || (onlyCarrying && !text.includes(mark))) return;
        found.push(what);
      };
      for (const root of Array.from(document.querySelectorAll(sel))) {
        for (const el of Array.from(root.querySelectorAll("*"))) {
          const tag = el.tagName.toLowerCase();
          if (["script", "iframe", "frame", "object", "embed", "base"].includes(tag)) keep(tag, el.outerHTML);
          for (const a of Array.from(el.attributes)) {
            const v = a.value.replace(/[\u0000-\u0020]/g, "").toLowerCase();
            const url = ["href", "src", "xlink:href", "action", "data"].includes(a.name) && v.startsWith("javascript:");
            if (a.name.startsWith("on") || a.name === "srcdoc" || url) keep(`${tag}[${a.name}]`, a.value);
          }
        }
      }
      return found;
    },
    [selector, BROWSER_MARK, CONTROL, carrying] as const,
  );

describe.skipIf(missing !== null)("hostile model and trace names in a real JupyterLab and in the HTML gallery", () => {
  let lab: LabServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  let lines: string[] = [];
  const counts = { lab: 0, gallery: 0, ran: 0 };

  beforeAll(async () => {
    fs.mkdirSync(path.join(ROOT, ".cache"), { recursive: true });
    dir = fs.mkdtempSync(path.join(ROOT, ".cache/hostile-browser-"));
    fs.writeFileSync(path.join(dir, "payloads.json"), JSON.stringify(PAYLOADS));
    const trace = syntheticTrace({
      promptLength: 3,
      genLength: 3,
      steps: 3,
      layers: 2,
      heads: 2,
      tokens: ["a", PAYLOADS[1], "c", PAYLOADS[2], "e", "f"],
    });
    trace.model.name = `<svg onload="window.${BROWSER_MARK}=3"></svg>`;
    writeTrace(path.join(dir, "hostile.fstrace"), trace);
    fs.writeFileSync(path.join(dir, "hostile.ipynb"), JSON.stringify(NOTEBOOK, null, 1));
    lab = await startLab(dir);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${lab.url}/lab/tree/hostile.ipynb?token=${lab.token}`);
    await page.waitForFunction(() => (window as unknown as { jupyterapp?: unknown }).jupyterapp !== undefined, null, { timeout: 90_000 });
    await page.waitForSelector(".jp-NotebookPanel .jp-Cell", { timeout: 90_000 });
    await page.evaluate(async () => {
      const app = (
        window as unknown as {
          jupyterapp: {
            shell: { currentWidget: { sessionContext: { ready: Promise<void> } } };
            commands: { execute(id: string): Promise<unknown> };
          };
        }
      ).jupyterapp;
      await app.shell.currentWidget.sessionContext.ready;
      await app.commands.execute("notebook:run-all-cells");
    });
    // The control cell is last: once its payload has run, every cell before it has been executed and shown.
    await page.waitForFunction((c) => (window as unknown as Record<string, unknown>)[c] !== undefined, CONTROL, { timeout: 240_000 });
    await page.waitForTimeout(3000); // let every <img src=x> fail and every onload/onerror fire
  }, 420_000);

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    for (const l of lines) console.log(l);
  }, 60_000);

  it("JupyterLab: no payload runs; the control does (raw Markdown in a live output is trusted)", async () => {
    const errors = await page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").allTextContents();
    expect(errors).toEqual([]);
    const m = await marks(page);
    if (m.pwned !== undefined) counts.ran++;
    expect(m.control).toBe(1);
    expect(m.pwned).toBeUndefined();
    // Structurally: nothing that executes in any output but the control's.
    const cells = await page.locator(".jp-Notebook .jp-CodeCell").count();
    expect(cells).toBe(NOTEBOOK.cells.length);
    const found = await executingIn(page, ".jp-Notebook .jp-OutputArea");
    expect(found).toEqual([]);
    counts.lab = PAYLOADS.length;
  });

  it("JupyterLab: the reader sees each name as written (marked, JupyterLab's renderer)", async () => {
    const text = (await page.locator(".jp-Notebook .jp-CodeCell").nth(1).locator(".jp-RenderedMarkdown").textContent()) ?? "";
    // Line breaks are shown as ␊ (a name stays on its line); everything else exactly.
    const shown = (p: string) => p.replace(/\n/g, "␊");
    const unseen = PAYLOADS.filter((p) => !text.includes(shown(p)));
    const near = (p: string) => {
      const i = text.indexOf(p.replace(/^[^=]*=/, "").slice(0, 6));
      return i < 0 ? "(not found)" : text.slice(Math.max(0, i - 60), i + 40);
    };
    expect(unseen.map((p) => `${p} — shown as: ${near(p)}`)).toEqual([]);
    const claims = (await page.locator(".jp-Notebook .jp-CodeCell").nth(4).locator(".jp-RenderedMarkdown").textContent()) ?? "";
    expect(PAYLOADS.filter((p) => !claims.includes(shown(p)))).toEqual([]);
  });

  it("the HTML gallery built from the notebook: no payload runs; the control does", async () => {
    // Save the executed notebook, then build the gallery the way `npm run reproduce` does.
    await page.evaluate(() =>
      (window as unknown as { jupyterapp: { commands: { execute(id: string): Promise<unknown> } } }).jupyterapp.commands.execute(
        "docmanager:save",
      ),
    );
    await page.waitForTimeout(1500);
    const gal = path.join(dir, "gallery");
    fs.mkdirSync(gal);
    const saved = JSON.parse(fs.readFileSync(path.join(dir, "hostile.ipynb"), "utf8")) as { cells: { outputs?: unknown[] }[] };
    expect(saved.cells.every((c) => (c.outputs ?? []).length > 0)).toBe(true);
    const notebookFile = `01-${FILE_PAYLOAD}.ipynb`;
    fs.copyFileSync(path.join(dir, "hostile.ipynb"), path.join(gal, notebookFile));
    fs.copyFileSync(path.join(dir, "CLAIMS.md"), path.join(gal, "CLAIMS.md"));
    const r = spawnSync(PYTHON, [path.join(ROOT, "scripts/gallery.py"), gal], { encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);

    const pages = [path.join(gal, "html/index.html"), path.join(gal, "html", `01-${FILE_PAYLOAD}.html`)];
    const results: Marks[] = [];
    for (const file of pages) {
      const p = await browser.newPage();
      await p.goto(`file://${file.split("/").map(encodeURIComponent).join("/")}`, { waitUntil: "domcontentloaded" });
      await p.waitForTimeout(3000);
      results.push(await marks(p));
      expect(await executingIn(p, "html", true)).toEqual([]);
      if (file.endsWith("index.html")) expect(await p.locator("li a").textContent()).toBe(`01-${FILE_PAYLOAD}`);
      await p.close();
    }
    counts.ran += results.filter((m) => m.pwned !== undefined).length;
    expect(results.map((m) => m.pwned)).toEqual([undefined, undefined]);
    expect(results[1].control).toBe(1); // nbconvert passes raw Markdown HTML through: the control runs
    counts.gallery = PAYLOADS.length + 1;
    lines = [`hostile-browser: ${counts.lab} payloads in JupyterLab, ${counts.gallery} in the gallery, ${counts.ran} scripts run`];
  }, 240_000);

  it("the Python rule (training/escape.py) writes the same text as src/display/escape.ts", () => {
    const r = spawnSync(
      PYTHON,
      [
        "-c",
        "import json, sys; sys.path.insert(0, 'training'); from escape import *; xs = json.load(sys.stdin); " +
          "print(json.dumps([[escape_markdown(x), code_span(x), escape_html(x)] for x in xs]))",
      ],
      { cwd: ROOT, input: JSON.stringify(HOSTILE_STRINGS), encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const py = JSON.parse(r.stdout) as [string, string, string][];
    const differ = HOSTILE_STRINGS.filter(
      (s, i) => py[i][0] !== escapeMarkdown(s) || py[i][1] !== markdownCode(s) || py[i][2] !== escapeHtml(s),
    );
    expect(differ).toEqual([]);
  });
});
