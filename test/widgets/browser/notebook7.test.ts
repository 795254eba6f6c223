/**
 * The same renderers in Notebook 7 (/notebooks/…), which loads prebuilt extensions from the same
 * labextensions folders. Runs when a Notebook 7 server is available (`.venv/bin/jupyter-notebook`,
 * or FLOATSCOPE_NOTEBOOK7=/path/to/jupyter-notebook); the project's pinned requirements do not
 * include `notebook`, so elsewhere it skips and says so.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { writeTrace } from "../../../src/trace/writer.js";
import { syntheticTrace } from "../synthetic-trace.js";
import { CHROMIUM, CHROMIUM_ARGS, missingPrerequisite, notebook7Binary, ROOT, startLab, type LabServer } from "./lab-server.js";

const missing =
  missingPrerequisite() ?? (notebook7Binary() ? null : "no Notebook 7 server (.venv/bin/jupyter-notebook or FLOATSCOPE_NOTEBOOK7)");
if (missing) console.warn(`[widgets Notebook 7 test] skipped: ${missing}`);

describe.skipIf(missing !== null)("widgets in Notebook 7", () => {
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(ROOT, ".cache/widgets-nb7-"));
    const shape = { promptLength: 8, genLength: 16, steps: 16, layers: 2, heads: 2 };
    writeTrace(path.join(dir, "synthetic-mdm.fstrace"), syntheticTrace(shape));
    writeTrace(path.join(dir, "synthetic-arm.fstrace"), syntheticTrace({ ...shape, causal: true }));
    fs.copyFileSync(path.join(ROOT, "test/widgets/fixtures/widgets-smoke.ipynb"), path.join(dir, "widgets-smoke.ipynb"));
    server = await startLab(dir, 90_000, "notebook");
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${server.url}/notebooks/widgets-smoke.ipynb?token=${server.token}`);
    await page.waitForFunction(() => (globalThis as unknown as { jupyterapp?: unknown }).jupyterapp !== undefined, null, {
      timeout: 90_000,
    });
    await page.waitForSelector(".jp-Notebook .jp-Cell", { timeout: 90_000 });
    await page.evaluate(async () => {
      const app = (
        globalThis as unknown as {
          jupyterapp: {
            shell: { currentWidget: { sessionContext: { ready: Promise<void> } } };
            commands: { execute(id: string): Promise<unknown> };
          };
        }
      ).jupyterapp;
      await app.shell.currentWidget.sessionContext.ready;
      await app.commands.execute("notebook:run-all-cells");
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("renders the scrubber and the QK view", async () => {
    await page.waitForSelector(".fs-scrubber canvas.fs-temporal", { timeout: 180_000 });
    expect(await page.locator(".fs-scrubber .fs-run").count()).toBe(2);
    await page.waitForFunction(() => document.querySelectorAll(".fs-figure-canvas.fs-qk g.fs-heat").length >= 3, null, {
      timeout: 120_000,
    });
    fs.mkdirSync(path.join(ROOT, "test-artifacts/widgets"), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, "test-artifacts/widgets/notebook7.png"), fullPage: true });
  }, 240_000);
});
