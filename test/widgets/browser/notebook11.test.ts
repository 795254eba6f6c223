/**
 * Notebook 11 (the paper's temporal setting: 32 tokens in 32 steps under LLaDA's low-confidence order and under
 * Dream's entropy order) as a reader uses it, in a real JupyterLab (the project's .venv server, our kernel,
 * Debian's Chromium driven by playwright-core). A copy of the notebook is executed unchanged, with every tier the
 * set-up provides (the tiny LLaDA and Dream, and the real-base SmolLM2-135M MDM when it is merged):
 *
 * - one scrubber per (tier, order), its title naming both; its runs side by side in a 1400 × 900 window;
 * - at every one of the 32 steps of every run, at the first and the last layer: the panel says which step and layer
 *   it shows ("step s (k of 32 …) · layer l of L"), draws the full map OF THAT STEP (its note names the same step;
 *   what the saved payload left out comes from the live kernel), draws head-view lines, and labels every anchor
 *   column on both token axes;
 * - on each scrubber's last panel a head toggle changes the head view's drawing and toggling it back restores it;
 * - every drift picture (the static image per model, order and depth) is drawn: an image of non-zero size;
 * - the frontier figure draws without an error box.
 *
 * Skips (with the reason) only when Chromium, the venv, the build or the kernelspec is missing.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Locator, Page } from "playwright-core";
import { missingPrerequisite, ROOT, type LabServer } from "./lab-server.js";
import { openNotebookLab } from "./notebook-lab.js";
import { expectInView, panelStates, setSlider } from "./scrubber-walk.js";

const missing = missingPrerequisite();
if (missing) console.warn(`[notebook 11 browser test] skipped: ${missing}`);
const ARTIFACTS = path.join(ROOT, "test-artifacts/notebook-11");
const NAME = "11-paper-setting-drift.ipynb";
const ORDERS = ["LLaDA low-confidence order", "Dream entropy order"];
const REAL_BASE = fs.existsSync(path.join(ROOT, ".cache/real-models/smollm2-135m-dream-world/config.json"));

type App = {
  jupyterapp: {
    shell: { currentWidget: { sessionContext: { ready: Promise<void> }; close(): void } | null };
    commands: { execute(id: string, args?: unknown): Promise<unknown> };
    serviceManager: { sessions: { shutdownAll(): Promise<void> } };
  };
};

describe.skipIf(missing !== null)("notebook 11 in a real JupyterLab", () => {
  let lab: LabServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    fs.mkdirSync(path.join(ROOT, ".cache"), { recursive: true });
    dir = fs.mkdtempSync(path.join(ROOT, ".cache/notebook11-browser-"));
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.copyFileSync(path.join(ROOT, "notebooks", NAME), path.join(dir, `run-${NAME}`));
    ({ lab, browser, page } = await openNotebookLab(dir, consoleErrors));
    console.log(`[notebook 11 browser test] screenshots: ${ARTIFACTS}`);
  }, 180_000);

  afterAll(async () => {
    await page
      ?.evaluate(async () => {
        const app = (window as unknown as App).jupyterapp;
        await app.serviceManager.sessions.shutdownAll();
      })
      .catch(() => undefined);
    await browser?.close();
    await lab?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("executed unchanged: each (tier, order) scrubber shows that step's map, head view and labelled anchors at all 32 steps", async () => {
    const t0 = Date.now();
    await page.evaluate(async (p) => {
      const app = (window as unknown as App).jupyterapp;
      await app.commands.execute("docmanager:open", { path: p, factory: "Notebook" });
    }, `run-${NAME}`);
    const panel = page.locator(`.jp-NotebookPanel:not(.lm-mod-hidden)`).last();
    await panel.locator(".jp-Cell").first().waitFor({ timeout: 90_000 });
    // Drop the committed outputs first, so everything checked below comes from this run.
    await page.evaluate(async () => {
      const app = (window as unknown as App).jupyterapp;
      await app.shell.currentWidget!.sessionContext.ready;
      await app.commands.execute("notebook:clear-all-cell-outputs");
      await app.commands.execute("notebook:run-all-cells");
    });
    // The last cell's output: the run is over (the kernel is free to serve the maps the payloads left out).
    await panel
      .locator(".jp-OutputArea-output", { hasText: "Distinct anchor positions across the 32 steps" })
      .first()
      .waitFor({ timeout: 1_000_000 });
    const executed = (Date.now() - t0) / 1000;
    expect(await panel.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count()).toBe(0);

    // One scrubber per (tier, order): the tiny pair under each order, then the real-base MDM under each order.
    const tiers = REAL_BASE ? ["tiny", "real-base"] : ["tiny"];
    const scrubbers = panel.locator(".fs-scrubber");
    expect(await scrubbers.count()).toBe(tiers.length * ORDERS.length);
    const titles = await scrubbers.locator(".fs-title").allTextContents();
    const expectedTitles = tiers.flatMap((t) => ORDERS.map((o) => `${t} tier · 32 tokens in 32 steps, ${o}`));
    titles.forEach((t, i) => expect(t).toContain(expectedTitles[i]));

    // The drift pictures: per MDM, order and depth, a drawn image.
    const pictures = panel.locator(".jp-RenderedSVG img, .jp-RenderedImage img");
    const nPictures = 2 * ORDERS.length * (2 + (REAL_BASE ? 1 : 0));
    expect(await pictures.count()).toBe(nPictures);
    for (let i = 0; i < nPictures; i++) {
      await pictures.nth(i).scrollIntoViewIfNeeded();
      const size = await pictures
        .nth(i)
        .evaluate((img: HTMLImageElement) => (img.complete ? [img.naturalWidth, img.naturalHeight] : [0, 0]));
      expect(size[0] * size[1], `picture ${i + 1}`).toBeGreaterThan(100 * 100);
    }
    // The frontier figure draws, with no error box anywhere.
    expect(
      await panel
        .locator(".fs-renderer .fs-figure")
        .filter({ has: page.locator(".fs-figure-canvas.fs-frontier") })
        .count(),
    ).toBe(1);
    expect(await panel.locator(".fs-renderer .fs-error").count()).toBe(0);

    const walks: string[] = [];
    for (let i = 0; i < tiers.length * ORDERS.length; i++) {
      const tier = tiers[Math.floor(i / ORDERS.length)];
      walks.push(await checkScrubber(scrubbers.nth(i), tier, i));
    }
    console.log(`[notebook 11 browser test] executed in ${executed.toFixed(0)} s; ${walks.join("; ")}`);
  }, 1_500_000);

  /** One live scrubber: layout, then every step at the first and the last layer, then a head toggle on its last panel. */
  async function checkScrubber(scrubber: Locator, tier: string, index: number): Promise<string> {
    const toggleLeft = () => page.evaluate(() => (window as unknown as App).jupyterapp.commands.execute("application:toggle-left-area"));
    await page.setViewportSize({ width: 1400, height: 900 });
    await toggleLeft();
    try {
      await page.waitForTimeout(800); // the output's new width lays the panels out again
      await scrubber.evaluate((e) => e.scrollIntoView({ block: "start" }));
      await page.waitForTimeout(300);
      const runs = scrubber.locator(".fs-run");
      const n = await runs.count();
      const names = await runs.locator(".fs-run-name").allTextContents();
      expect(names).toEqual(
        tier === "tiny" ? ["tiny-llada · tiny · MDM", "tiny-dream · tiny · MDM"] : ["smollm2-135m-dream-world · real-base · MDM"],
      );
      // side by side in the first row, left to right, each in view
      const boxes = await runs.evaluateAll((rs) => rs.map((r) => r.getBoundingClientRect().toJSON() as DOMRect));
      for (let i = 1; i < n; i++) {
        expect(Math.abs(boxes[i].y - boxes[0].y)).toBeLessThan(2);
        expect(boxes[i].x).toBeGreaterThanOrEqual(boxes[i - 1].x + boxes[i - 1].width);
      }
      for (let i = 0; i < n; i++) {
        await expectInView(runs.nth(i).locator("canvas.fs-temporal"), `run ${i} temporal view`, 1400, 900);
        await expectInView(runs.nth(i).locator("canvas.fs-map"), `run ${i} full map`, 1400, 900);
      }
      await page.screenshot({ path: path.join(ARTIFACTS, `scrubber-${index + 1}-1400x900.png`) });

      // Every step, first and last layer, mean over heads, nothing selected.
      const t0 = Date.now();
      await scrubber.focus();
      await page.keyboard.press("Escape");
      const meanBox = scrubber.locator(".fs-controls input[type=checkbox]").first();
      if (!(await meanBox.isChecked())) await meanBox.check();
      const steps = Number(await scrubber.locator('input[data-role="step"]').getAttribute("max")) + 1;
      expect(steps).toBe(32);
      const lastLayer = Number(await scrubber.locator('input[data-role="layer"]').getAttribute("max"));
      const root = (await scrubber.elementHandle())!;
      const problems: string[] = [];
      let anchors = 0;
      for (const layer of [0, lastLayer]) {
        await setSlider(scrubber, "layer", layer);
        for (let s = 0; s < steps; s++) {
          await setSlider(scrubber, "step", s);
          // wait until every panel shows this step's full map and head-view lines (the kernel serves what was not saved)
          const ok = await page
            .waitForFunction(
              ([el, k]) =>
                [...(el as Element).querySelectorAll(".fs-run")].every((r) => {
                  const where = r.querySelector(".fs-run-where")?.textContent ?? "";
                  const step = /^step (\d+) \((\d+) of/.exec(where);
                  const note = r.querySelector(".fs-map-box .fs-map-note")?.textContent ?? "";
                  return (
                    step !== null &&
                    Number(step[2]) === (k as number) + 1 &&
                    note.startsWith(`full map, step ${step[1]} `) &&
                    Number(r.querySelector("canvas.fs-headview-lines")?.getAttribute("data-lines") ?? 0) > 0
                  );
                }),
              [root, s] as const,
              { timeout: 30_000 },
            )
            .then(() => true)
            .catch(() => false);
          for (const [i, p] of (await panelStates(scrubber)).entries()) {
            const m = /^step (\d+) \((\d+) of (\d+)[^)]*\) · layer (\d+) of (\d+)/.exec(p.where);
            const here = `layer slider ${layer}, step ${s}, run ${i} (${p.where})`;
            if (!ok || !m) problems.push(`${here}: not shown (${p.note}, ${p.lines} lines)`);
            else {
              if (Number(m[2]) !== s + 1 || Number(m[3]) !== 32) problems.push(`${here}: shows step ${m[2]} of ${m[3]}`);
              // the first layer of the model, or its last
              if (Number(m[4]) !== (layer === 0 ? 0 : Number(m[5]) - 1)) problems.push(`${here}: shows layer ${m[4]}`);
              if (!p.note.startsWith(`full map, step ${m[1]} `)) problems.push(`${here}: map note "${p.note}"`);
            }
            if (p.lines === 0 || p.colours < 4) problems.push(`${here}: ${p.lines} head-view lines, ${p.colours} map colours`);
            if (p.missingLabels.length) problems.push(`${here}: anchors ${p.missingLabels.join(", ")} unlabelled`);
            anchors += p.anchors.length;
          }
        }
      }
      expect(problems).toEqual([]);
      expect(anchors).toBeGreaterThan(0);
      const seconds = (Date.now() - t0) / 1000;

      // The last panel: a head toggle changes what the head view draws; toggling it back restores it.
      const last = runs.nth(n - 1);
      const image = () => last.locator("canvas.fs-headview-lines").evaluate((c: HTMLCanvasElement) => c.toDataURL());
      const lines = () => last.locator("canvas.fs-headview-lines").getAttribute("data-lines").then(Number);
      const all = await lines();
      const before = await image();
      expect(all).toBeGreaterThan(0);
      await last.locator(".fs-head-toggle").first().click();
      expect(await image()).not.toBe(before);
      await last.locator(".fs-head-toggle").first().click();
      expect(await lines()).toBe(all);
      expect(await image()).toBe(before);
      return `scrubber ${index + 1} (${tier}): ${n} run(s), 32 steps × 2 layers walked in ${seconds.toFixed(0)} s, ${anchors} anchor columns, all labelled`;
    } finally {
      await toggleLeft();
      await page.setViewportSize({ width: 1400, height: 1000 });
    }
  }

  it("logged no widget errors", () => {
    expect(consoleErrors.filter((e) => /floatscope|fs-|plotly/i.test(e))).toEqual([]);
  });
});
