/**
 * The figure notebooks as a reader opens them, in a real JupyterLab (the project's .venv server, our
 * kernel, Debian's Chromium driven by playwright-core):
 *
 * - notebook 01 is executed, unchanged, from a copy (so the check covers today's defaults, not the
 *   outputs committed last time), with every tier the set-up provides (tiny LLaDA and Dream, and the
 *   real-base SmolLM2-135M MDM): its scrubber must show a non-empty full map, an enabled head
 *   slider, token text on the position axes, colour bars and the head view, with no extra code; its
 *   runs sit side by side in a 1400 × 900 window without spilling into each other's column; at
 *   every step of every run, first and last layer, each panel has a full map and head-view lines
 *   (what the output did not embed comes from the live kernel) and every anchor column is labelled
 *   on both token axes; a label click selects it and the head toggles change the drawn lines on the
 *   real model's panel;
 * - every figure notebook in notebooks/ is opened with its committed, executed outputs (nothing
 *   re-run): each floatscope figure renders without an error box, every heat map has a colour bar,
 *   views with a token-position axis print token text on it, and every marked column (anchors,
 *   floating keys) carries a label.
 *
 * Screenshots of every figure go to test-artifacts/notebooks/ (git-ignored; the path is printed);
 * the side-by-side view of notebook 01 to test/widgets/browser/screenshots/ (committed).
 * Skips (with the reason) only when Chromium, the venv, the build or the kernelspec is missing.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Locator, Page } from "playwright-core";
import { MIME_FIGURE, MIME_SCRUBBER } from "../../../src/protocol/payloads.js";
import { missingPrerequisite, ROOT, type LabServer } from "./lab-server.js";
import { openNotebookLab } from "./notebook-lab.js";
import { expectInView, walkEveryStep } from "./scrubber-walk.js";

const missing = missingPrerequisite();
if (missing) console.warn(`[notebook browser test] skipped: ${missing}`);
const ARTIFACTS = path.join(ROOT, "test-artifacts/notebooks");
const NOTEBOOKS = path.join(ROOT, "notebooks");
/** Committed screenshots (small PNGs, test artifacts a reviewer looks at). */
const SHOTS = path.join(ROOT, "test/widgets/browser/screenshots");

/** Figure notebooks (those with a floatscope figure output), in order. */
const FIGURE_NOTEBOOKS = fs
  .readdirSync(NOTEBOOKS)
  .filter((f) => /^\d\d-.*\.ipynb$/.test(f))
  .filter((f) => /application\/vnd\.floatscope\.(?!findings)/.test(fs.readFileSync(path.join(NOTEBOOKS, f), "utf8")))
  .sort();

/** Figure kinds drawn as a heat map (each needs a colour bar) and those with a token-position axis. */
const HEAT_KINDS = new Set(["scrubber", "drift", "qk", "heatmap", "rollout", "retrieval"]);
const POSITION_KINDS = new Set(["scrubber", "drift", "qk"]);

interface FigureOutput {
  kind: string;
  /** Token strings the payload carries (any `tokens` array of strings in it). */
  tokens: string[];
  /** Marked columns (anchor columns, floating keys) over its heat panels: each must carry a label. */
  marked: number;
}

/** A heat panel's marked columns: its column marks and the columns of its marked cells (anchors). */
function markedColumnCount(panel: {
  type?: string;
  cols?: number;
  columnMarks?: { columns: number[] };
  cellMarks?: { cells: number[] };
}): number {
  if (panel.type !== "heat" || !panel.cols) return 0;
  const cols = new Set((panel.columnMarks?.columns ?? []).filter((c) => c >= 0 && c < panel.cols!));
  for (const i of panel.cellMarks?.cells ?? []) cols.add(i % panel.cols);
  return cols.size;
}

/**
 * The outputs of a notebook file our labextension draws (figure descriptions and the scrubber), in
 * output order. Outputs of MIME types it no longer registers (a notebook executed before the figure
 * registry) show their static image instead and are not counted.
 */
function figureOutputs(file: string): FigureOutput[] {
  const nb = JSON.parse(fs.readFileSync(file, "utf8")) as { cells: { outputs?: { data?: Record<string, unknown> }[] }[] };
  const out: FigureOutput[] = [];
  for (const c of nb.cells)
    for (const o of c.outputs ?? [])
      for (const [mime, data] of Object.entries(o.data ?? {})) {
        if (mime !== MIME_FIGURE && mime !== MIME_SCRUBBER) continue;
        const kind = mime === MIME_SCRUBBER ? "scrubber" : String((data as { figure?: unknown }).figure ?? "figure");
        // Token strings the payload carries: any `tokens` (scrubber) or `labels` (figure axes) list of strings.
        const tokens: string[] = [];
        const walk = (x: unknown, key = ""): void => {
          if (Array.isArray(x)) {
            if ((key === "tokens" || key === "labels") && x.every((t) => typeof t === "string")) tokens.push(...(x as string[]));
            else x.forEach((y) => walk(y));
          } else if (x && typeof x === "object") for (const [k, v] of Object.entries(x)) walk(v, k);
        };
        walk(data);
        const panels = mime === MIME_FIGURE ? ((data as { panels?: Parameters<typeof markedColumnCount>[0][] }).panels ?? []) : [];
        out.push({ kind, tokens, marked: panels.reduce((n, p) => n + markedColumnCount(p), 0) });
      }
  return out;
}

/** The printed text of SVG <text> labels (their own text nodes, without the hover <title>). */
function printedText(labels: Locator): Promise<string[]> {
  return labels.evaluateAll((els) =>
    els.map((e) =>
      Array.from(e.childNodes)
        .filter((n) => n.nodeType === 3)
        .map((n) => n.textContent ?? "")
        .join(""),
    ),
  );
}

type App = {
  jupyterapp: {
    shell: { currentWidget: { sessionContext: { ready: Promise<void> }; close(): void } | null };
    commands: { execute(id: string, args?: unknown): Promise<unknown> };
    serviceManager: { sessions: { shutdownAll(): Promise<void> } };
  };
};

describe.skipIf(missing !== null)("figure notebooks in a real JupyterLab", () => {
  let lab: LabServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  const consoleErrors: string[] = [];

  async function open(name: string): Promise<Locator> {
    await page.evaluate(async (p) => {
      const app = (window as unknown as App).jupyterapp;
      await app.commands.execute("docmanager:open", { path: p, factory: "Notebook" });
    }, name);
    const panel = page.locator(`.jp-NotebookPanel:not(.lm-mod-hidden)`).last();
    await panel.locator(".jp-Cell").first().waitFor({ timeout: 90_000 });
    return panel;
  }

  /** Close every tab without saving and shut their kernels down (also after a failed check). */
  async function closeAll(): Promise<void> {
    await page.evaluate(async () => {
      const app = (window as unknown as App).jupyterapp;
      await app.serviceManager.sessions.shutdownAll();
      void app.commands.execute("application:close-all");
    });
    // "close without saving?" dialogs of executed copies
    for (let i = 0; i < 4 && (await page.locator(".jp-Dialog").count()) > 0; i++) {
      const discard = page.locator(".jp-Dialog button", { hasText: /Discard|Don't Save|No/ });
      if ((await discard.count()) > 0) await discard.first().click();
      else await page.keyboard.press("Escape");
      await page.waitForTimeout(200);
    }
    await page.waitForFunction(() => document.querySelectorAll(".jp-NotebookPanel").length === 0, null, { timeout: 20_000 });
  }

  beforeAll(async () => {
    fs.mkdirSync(path.join(ROOT, ".cache"), { recursive: true });
    dir = fs.mkdtempSync(path.join(ROOT, ".cache/notebooks-browser-"));
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    for (const f of FIGURE_NOTEBOOKS) fs.copyFileSync(path.join(NOTEBOOKS, f), path.join(dir, f));
    fs.copyFileSync(path.join(NOTEBOOKS, "01-temporal-drift.ipynb"), path.join(dir, "run-01-temporal-drift.ipynb"));
    ({ lab, browser, page } = await openNotebookLab(dir, consoleErrors));
    console.log(`[notebook browser test] screenshots: ${ARTIFACTS}`);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("notebook 01, executed unchanged: the scrubber shows the full map, heads, token axes and colour bars", async () => {
    const panel = await open("run-01-temporal-drift.ipynb");
    try {
      await runNotebook01(panel);
    } finally {
      await closeAll();
    }
  }, 420_000);

  async function runNotebook01(panel: Locator): Promise<void> {
    // Drop the committed outputs first, so everything checked below comes from this run.
    await page.evaluate(async () => {
      const app = (window as unknown as App).jupyterapp;
      await app.shell.currentWidget!.sessionContext.ready;
      await app.commands.execute("notebook:clear-all-cell-outputs");
      await app.commands.execute("notebook:run-all-cells");
    });
    const scrubber = panel.locator(".fs-scrubber").first();
    await scrubber.locator("canvas.fs-map").first().waitFor({ timeout: 240_000 });
    // its runs: the tiny LLaDA and Dream, and the real-base MDM (under Dream's order) when its merged model is set up
    const realBase = fs.existsSync(path.join(ROOT, ".cache/real-models/smollm2-135m-dream-world"));
    await expect(scrubber.locator(".fs-run").count()).resolves.toBe(realBase ? 3 : 2);
    // The full map holds data: many colours, not the grey "no map" fill.
    const colours = await scrubber
      .locator("canvas.fs-map")
      .first()
      .evaluate((c: HTMLCanvasElement) => {
        const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
        const seen = new Set<number>();
        for (let i = 0; i < d.length; i += 4 * 5) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        return seen.size;
      });
    expect(colours).toBeGreaterThan(20);
    expect(await scrubber.locator(".fs-map-note").first().textContent()).toMatch(/^full map, step/);
    // The head slider is enabled once "mean over heads" is unticked; the mean box itself is enabled.
    const mean = scrubber.locator(".fs-controls input[type=checkbox]").first();
    expect(await mean.isDisabled()).toBe(false);
    await mean.uncheck();
    expect(await scrubber.locator('input[data-role="head"]').isDisabled()).toBe(false);
    // Token text on the position axis (the prompt's words), a colour bar naming its quantity.
    const ticks = await scrubber.locator(".fs-run").first().locator(".fs-xaxis .fs-token-tick").allTextContents();
    expect(ticks).toContain("What");
    expect(await scrubber.locator(".fs-colorbar-label").first().textContent()).toMatch(/^attention received, head \d+/);
    expect(await scrubber.locator(".fs-strip-legend").first().textContent()).toContain("floating anchor");
    // No "not recorded" note: the defaults recorded what the views need.
    expect(await scrubber.locator(".fs-missing").count()).toBe(0);
    // Head view: select a token and lines are drawn for it.
    await scrubber.locator(".fs-headview").first().waitFor();
    const strip = scrubber.locator("canvas.fs-strip").first();
    const box = (await strip.boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.3, box.y + box.height / 2);
    expect(await scrubber.locator(".fs-run").first().locator(".fs-headview-queries .fs-tick-selected").count()).toBe(1);
    expect(await scrubber.locator(".fs-headgrid canvas.fs-thumb").count()).toBeGreaterThan(0);
    await scrubber.screenshot({ path: path.join(ARTIFACTS, "01-executed-scrubber.png") });
    // The drift figures of the same run (shared figure renderer): a colour bar and the prompt's words on the x axis.
    const drift = panel.locator(".fs-renderer .fs-figure");
    // a shallow and a deep layer per run: the tiny LLaDA and Dream, the real-base MDM under each of the two orders
    const nDrift = 2 * (realBase ? 4 : 2);
    expect(await drift.count()).toBe(nDrift);
    for (let i = 0; i < nDrift; i++) {
      expect(await drift.nth(i).locator(".fs-colourbar").count()).toBeGreaterThan(0);
      const labels = await printedText(drift.nth(i).locator(".fs-xlabels text"));
      expect(
        labels.some((t) => /(^|[^A-Za-z])What([^A-Za-z]|$)/.test(t)),
        labels.slice(20, 30).join(" | "),
      ).toBe(true);
      await drift.nth(i).screenshot({ path: path.join(ARTIFACTS, `01-executed-drift-${i + 1}.png`) });
    }
    await checkScrubber01(scrubber);
  }

  /**
   * Notebook 01's own runs in its live scrubber: side by side in a 1400 × 900 window (the file browser
   * closed, as a reader comparing does; no panel spilling into another's column), then every step of every run at the first and the last
   * layer: a full map and head-view lines in each panel, each anchor column labelled; a label click
   * and the head toggles on the real model's panel (the last).
   */
  async function checkScrubber01(scrubber: Locator): Promise<void> {
    const toggleLeft = () => page.evaluate(() => (window as unknown as App).jupyterapp.commands.execute("application:toggle-left-area"));
    await page.setViewportSize({ width: 1400, height: 900 });
    await toggleLeft();
    try {
      await page.waitForTimeout(800); // the output's new width lays the panels out again
      await scrubber.evaluate((e) => e.scrollIntoView({ block: "start" }));
      await page.waitForTimeout(300);
      const runs = scrubber.locator(".fs-run");
      const n = await runs.count();
      const boxes = await runs.evaluateAll((rs) => rs.map((r) => r.getBoundingClientRect().toJSON() as DOMRect));
      // columns: at least two runs in the first row, left to right; a third one that does not fit wraps below
      const cols = boxes.filter((b) => Math.abs(b.y - boxes[0].y) < 2).length;
      expect(cols, "runs side by side in the first row").toBeGreaterThanOrEqual(2);
      for (let i = 1; i < cols; i++) expect(boxes[i].x).toBeGreaterThanOrEqual(boxes[i - 1].x + boxes[i - 1].width);
      for (let i = cols; i < n; i++) expect(boxes[i].y).toBeGreaterThan(boxes[0].y + boxes[0].height - 2);
      // nothing a panel draws spills into its neighbour's column (the map, head view and profiles row)
      const spill = await runs.evaluateAll((rs) =>
        rs.flatMap((r, i) => {
          const right = r.getBoundingClientRect().right;
          return [...r.querySelectorAll(".fs-lower > *, .fs-detail-box > *, .fs-plot")]
            .filter((c) => c.getBoundingClientRect().right > right + 1)
            .map((c) => `run ${i} ${c.className}: right edge ${Math.round(c.getBoundingClientRect().right)} > panel ${Math.round(right)}`);
        }),
      );
      expect(spill).toEqual([]);
      for (let i = 0; i < cols; i++) {
        const run = runs.nth(i);
        await expectInView(run.locator("canvas.fs-temporal"), `run ${i} temporal view`, 1400, 900);
        await expectInView(run.locator("canvas.fs-map"), `run ${i} full map`, 1400, 900);
        await expectInView(run.locator("canvas.fs-headview-lines"), `run ${i} head view`, 1400, 900);
      }
      const names = await runs.locator(".fs-run-name").allTextContents();
      expect(names.slice(0, 2)).toEqual(["tiny-llada · tiny · MDM", "tiny-dream · tiny · MDM"]);
      // (the tier shows when the notebook passes scrubber's `tiers`; only tiny-* models get one by default)
      if (n === 3) expect(names[2]).toMatch(/^smollm2-135m-dream-world · (real-base · )?MDM$/);
      await page.screenshot({ path: path.join(SHOTS, "notebook-01-1400x900.png") });

      // Every step, first and last layer (each run's own, by relative depth), mean over heads, nothing selected.
      await scrubber.focus();
      await page.keyboard.press("Escape");
      await scrubber.locator(".fs-controls input[type=checkbox]").first().check();
      const lastLayer = Number(await scrubber.locator('input[data-role="layer"]').getAttribute("max"));
      const walk = await walkEveryStep(page, scrubber, [0, lastLayer]);
      expect(walk.empty).toEqual([]);
      expect(walk.unlabelled).toEqual([]);
      expect(walk.anchorsSeen).toBeGreaterThan(0);
      // …and the walk visited every step of every run (the slider maps each run's own steps)
      expect(walk.visited.map((v) => v.seen)).toEqual(walk.visited.map((v) => v.of));
      console.log(
        `[notebook browser test] notebook 01 scrubber: ${n} runs, ${walk.steps} slider steps × 2 layers; steps shown per run ${walk.visited
          .map((v) => `${v.seen}/${v.of}`)
          .join(", ")}; ${walk.anchorsSeen} anchor columns, all labelled`,
      );

      // The real model's panel (the last): a label click selects it everywhere; head toggles change the lines.
      const last = runs.nth(n - 1);
      const tick = last.locator(".fs-xaxis:not(.fs-map-xaxis) .fs-token-tick").nth(3);
      const pos = await tick.getAttribute("data-pos");
      await tick.click();
      await expect(last.locator(".fs-xaxis:not(.fs-map-xaxis) .fs-tick-selected").getAttribute("data-pos")).resolves.toBe(pos);
      await expect(runs.nth(0).locator(".fs-headview-queries .fs-tick-selected").getAttribute("data-pos")).resolves.toBe(pos);
      expect(await last.locator(".fs-detail").textContent()).toContain(`@${pos}`);
      expect(await last.locator("svg.fs-profiles g.fs-profile").count()).toBe(2);
      await scrubber.focus();
      await page.keyboard.press("Escape");
      const lines = () => last.locator("canvas.fs-headview-lines").getAttribute("data-lines").then(Number);
      // What is drawn, pixel for pixel: with no token selected the overview draws at most a fixed number of the
      // strongest lines over the heads shown, so switching a head off can leave the count at that cap (or just
      // above it, on ties) while other heads' lines take its place; the drawing itself must change.
      const image = () => last.locator("canvas.fs-headview-lines").evaluate((c: HTMLCanvasElement) => c.toDataURL());
      const all = await lines();
      const before = await image();
      expect(all).toBeGreaterThan(0);
      await last.locator(".fs-head-toggle").first().click();
      expect(await image()).not.toBe(before);
      await last.locator(".fs-head-toggle").first().click();
      expect(await lines()).toBe(all);
      expect(await image()).toBe(before);
    } finally {
      await toggleLeft();
      await page.setViewportSize({ width: 1400, height: 1000 });
    }
  }

  for (const name of FIGURE_NOTEBOOKS) {
    it(`${name} (committed outputs): every figure renders, heat maps have a colour bar, position axes show tokens`, async () => {
      const expected = figureOutputs(path.join(NOTEBOOKS, name));
      const panel = await open(name);
      try {
        await checkCommitted(name, panel, expected);
      } catch (e) {
        await page.screenshot({ path: path.join(ARTIFACTS, `failed-${name.replace(/\.ipynb$/, "")}.png`) });
        throw e;
      } finally {
        await closeAll();
      }
    }, 240_000);
  }

  async function checkCommitted(name: string, panel: Locator, expected: FigureOutput[]): Promise<void> {
    {
      const figures = panel.locator(".fs-renderer");
      await page.waitForFunction(
        (n) => document.querySelectorAll(".jp-NotebookPanel:not(.lm-mod-hidden) .fs-renderer").length >= n,
        expected.length,
        { timeout: 120_000 },
      );
      // the widgets lay out on the next frames (resize observers, fonts): give them a moment
      await page.waitForTimeout(500);
      expect(await figures.count()).toBe(expected.length);
      const problems: string[] = [];
      for (let i = 0; i < expected.length; i++) {
        const f = figures.nth(i);
        const { kind, tokens, marked } = expected[i];
        const where = `${name} figure ${i + 1} (${kind})`;
        if ((await f.locator(".fs-error").count()) > 0) problems.push(`${where}: ${await f.locator(".fs-error").first().textContent()}`);
        if (HEAT_KINDS.has(kind) && (await f.locator(".fs-colorbar, .fs-colourbar").count()) === 0)
          problems.push(`${where}: no colour bar`);
        if (POSITION_KINDS.has(kind) && tokens.length) {
          // Words of the prompt (4+ letters) printed as tick labels: widget DOM ticks or SVG tick text.
          const words = [...new Set(tokens.map((t) => t.trim()).filter((t) => /^[A-Za-z]{4,}$/.test(t)))];
          const axisText = [
            ...(await f.locator(".fs-token-tick").allTextContents()),
            ...(await printedText(f.locator(".fs-xlabels text, .fs-ylabels text"))),
          ];
          if (!axisText.some((t) => words.some((w) => new RegExp(`(^|[^A-Za-z])${w}([^A-Za-z]|$)`).test(t))))
            problems.push(`${where}: no token text on its axes`);
        }
        if (marked > 0) {
          // every anchor column / floating key labelled (bold), whatever the thinning
          const must = await printedText(f.locator(".fs-xlabels text.fs-must"));
          if (must.length !== marked || must.some((t) => t.trim() === ""))
            problems.push(`${where}: ${marked} marked columns, ${must.filter((t) => t.trim()).length} labelled`);
        }
        await f.screenshot({ path: path.join(ARTIFACTS, `${name.replace(/\.ipynb$/, "")}-${String(i + 1).padStart(2, "0")}-${kind}.png`) });
      }
      expect(problems).toEqual([]);
    }
  }

  it("logged no widget errors", () => {
    expect(consoleErrors.filter((e) => /floatscope|fs-|plotly/i.test(e))).toEqual([]);
  });
});
