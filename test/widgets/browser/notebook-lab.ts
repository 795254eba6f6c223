/**
 * The browser notebook tests' JupyterLab: a server on a folder of notebook copies and a Chromium page logged
 * into it, every cell rendered (no virtual scrolling, so each output is in the DOM to be checked), with the
 * page's console errors collected.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, ROOT, startLab, type LabServer } from "./lab-server.js";

export async function openNotebookLab(dir: string, consoleErrors: string[]): Promise<{ lab: LabServer; browser: Browser; page: Page }> {
  const settings = path.join(dir, ".jupyter/settings/@jupyterlab/notebook-extension");
  fs.mkdirSync(settings, { recursive: true });
  fs.writeFileSync(path.join(settings, "tracker.jupyterlab-settings"), JSON.stringify({ windowingMode: "none" }));
  // The copies live outside notebooks/: point them at the embedded models and data, and at the set-up's real
  // tiers (the notebooks' default, ../.cache/real-models, is relative to notebooks/).
  process.env.FLOATSCOPE_MODELS = path.join(ROOT, "models");
  process.env.FLOATSCOPE_DATA = path.join(ROOT, "models/world/eval-heldout.jsonl.gz");
  process.env.FLOATSCOPE_REAL_MODELS = path.join(ROOT, ".cache/real-models");
  const lab = await startLab(dir);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // Fail a check quickly instead of waiting out the test's timeout on a missing element.
  page.setDefaultTimeout(20_000);
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  await page.goto(`${lab.url}/lab?token=${lab.token}`);
  await page.waitForFunction(() => (window as unknown as { jupyterapp?: unknown }).jupyterapp !== undefined, null, { timeout: 90_000 });
  await page.waitForSelector(".jp-DirListing-item", { timeout: 90_000 });
  return { lab, browser, page };
}
