/**
 * Browser test in a real JupyterLab: the project's .venv server, our kernel, Debian's Chromium
 * driven by playwright-core (no downloaded browsers). Opens test/widgets/fixtures/widgets-smoke.ipynb,
 * runs it, and checks that the scrubber renders and redraws when the step slider moves, that the
 * QK view shows three heatmaps, and that token markup stays text. Screenshots go to
 * test-artifacts/widgets/.
 *
 * Skips (with the reason) only when Chromium, the venv, the build or the kernelspec is missing;
 * CI installs all of them (.ci/run: apt-get install chromium; npm test runs scripts/setup.sh).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { writeTrace } from "../../../src/trace/writer.js";
import { syntheticTrace } from "../synthetic-trace.js";
import { CHROMIUM, CHROMIUM_ARGS, missingPrerequisite, ROOT, startLab, type LabServer } from "./lab-server.js";

const missing = missingPrerequisite();
if (missing) console.warn(`[widgets browser test] skipped: ${missing}`);
const ARTIFACTS = path.join(ROOT, "test-artifacts/widgets");

describe.skipIf(missing !== null)("widgets in a real JupyterLab", () => {
  let lab: LabServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  const consoleErrors: string[] = [];
  const external: string[] = [];

  beforeAll(async () => {
    fs.mkdirSync(path.join(ROOT, ".cache"), { recursive: true });
    dir = fs.mkdtempSync(path.join(ROOT, ".cache/widgets-browser-"));
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const tokens = (n: number) => Array.from({ length: n }, (_, i) => (i === 1 ? `<b>x</b>"'&` : i === 3 ? "</svg>" : `w${i}`));
    const shape = { promptLength: 10, genLength: 22, steps: 22, layers: 4, heads: 4, perHead: true, mapLayers: [1, 3] };
    writeTrace(path.join(dir, "synthetic-mdm.fstrace"), syntheticTrace({ ...shape, tokens: tokens(32) }));
    writeTrace(path.join(dir, "synthetic-arm.fstrace"), syntheticTrace({ ...shape, tokens: tokens(32), causal: true }));
    fs.copyFileSync(path.join(ROOT, "test/widgets/fixtures/widgets-smoke.ipynb"), path.join(dir, "widgets-smoke.ipynb"));
    lab = await startLab(dir);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1500, height: 1100 } });
    page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.hostname !== "127.0.0.1" && u.protocol.startsWith("http")) external.push(r.url());
    });
    await page.goto(`${lab.url}/lab/tree/widgets-smoke.ipynb?token=${lab.token}`);
    await page.waitForFunction(() => (window as unknown as { jupyterapp?: unknown }).jupyterapp !== undefined, null, { timeout: 90_000 });
    await page.waitForSelector(".jp-NotebookPanel .jp-Cell", { timeout: 90_000 });
    // Run every cell once the kernel is ready.
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
    await page.waitForSelector(".fs-scrubber canvas.fs-temporal", { timeout: 180_000 });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("renders the scrubber: two runs side by side, sliders, temporal view and maps", async () => {
    const scrubber = page.locator(".fs-scrubber").first();
    await expect(scrubber.locator(".fs-run").count()).resolves.toBe(2);
    await expect(scrubber.locator('input[type="range"]').count()).resolves.toBe(3);
    const titles = await scrubber.locator(".fs-run-name").allTextContents();
    expect(titles).toEqual(["synthetic-mdm · MDM", "synthetic-arm · ARM"]);
    expect(await scrubber.locator(".fs-run-where").first().textContent()).toMatch(
      /^step 21 \(22 of 22 · 100 % of the decode\) · layer 0 of 4 · mean over 4 heads/,
    );
    // The temporal canvas is not blank: it has more than one colour.
    const colours = await scrubber
      .locator("canvas.fs-temporal")
      .first()
      .evaluate((c: HTMLCanvasElement) => {
        const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
        const seen = new Set<number>();
        for (let i = 0; i < d.length; i += 4 * 7) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        return seen.size;
      });
    expect(colours).toBeGreaterThan(5);
    await scrubber.screenshot({ path: path.join(ARTIFACTS, "scrubber.png") });
  });

  it("moving the step slider changes the drawing", async () => {
    const scrubber = page.locator(".fs-scrubber").first();
    const pixels = () =>
      scrubber
        .locator("canvas.fs-temporal")
        .first()
        .evaluate((c: HTMLCanvasElement) => c.toDataURL());
    const strip = () =>
      scrubber
        .locator("canvas.fs-strip")
        .first()
        .evaluate((c: HTMLCanvasElement) => c.toDataURL());
    const before = [await pixels(), await strip()];
    await scrubber.locator('input[data-role="step"]').evaluate((el: HTMLInputElement) => {
      el.value = "3";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
    const after = [await pixels(), await strip()];
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
    expect(await scrubber.locator(".fs-run-where").first().textContent()).toMatch(/^step 3 /);
    // Keyboard: focus the scrubber, → advances one step.
    await scrubber.focus();
    await page.keyboard.press("ArrowRight");
    expect(await scrubber.locator(".fs-run-where").first().textContent()).toMatch(/^step 4 /);
    await scrubber.screenshot({ path: path.join(ARTIFACTS, "scrubber-step4.png") });
  });

  it("hover shows the token as text; markup in tokens is never interpreted", async () => {
    const scrubber = page.locator(".fs-scrubber").first();
    const canvas = scrubber.locator("canvas.fs-strip").first();
    const box = (await canvas.boundingBox())!;
    // position 1 of 32
    await page.mouse.move(box.x + (1.5 / 32) * box.width, box.y + box.height / 2);
    const tip = scrubber.locator(".fs-tooltip");
    await expect(tip.isVisible()).resolves.toBe(true);
    expect(await tip.textContent()).toContain(`pos 1 "<b>x</b>"'&"`);
    const injected = await page.evaluate(
      () => document.querySelectorAll(".jp-OutputArea script, .jp-OutputArea b, .fs-scrubber img").length,
    );
    expect(injected).toBe(0);
  });

  it("the QK view shows three labelled heatmaps per layer, each with its colour bar", async () => {
    // the QK figure is drawn by the kernel's renderer: three maps per chosen layer, each with its colour bar
    await page.waitForFunction(() => document.querySelectorAll(".fs-figure-canvas.fs-qk g.fs-heat").length >= 3, null, {
      timeout: 120_000,
    });
    const titles = await page.locator(".fs-figure-canvas.fs-qk g.fs-heat > text:first-child > title").allTextContents();
    expect(titles.slice(0, 3).map((t) => t.split(" · ")[1])).toEqual(["score q·k", "cos θ", "‖q‖·‖k‖"]);
    expect(await page.locator(".fs-figure-canvas.fs-qk g.fs-colourbar").count()).toBe(titles.length);
    expect(await page.locator(".fs-figure-canvas.fs-qk g.fs-xlabels text").count()).toBeGreaterThan(0); // token labels
    await page
      .locator(".fs-figure:has(.fs-qk)")
      .first()
      .screenshot({ path: path.join(ARTIFACTS, "qk.png") });
  }, 150_000);

  it("the export command downloads the current scrubber view as SVG and PNG", async () => {
    await page
      .locator(".fs-scrubber")
      .first()
      .click({ position: { x: 5, y: 5 } });
    const run = (id: string) =>
      page.evaluate(
        (cmd) =>
          (window as unknown as { jupyterapp: { commands: { execute(id: string): Promise<unknown> } } }).jupyterapp.commands.execute(cmd),
        id,
      );
    const [svgDl] = await Promise.all([page.waitForEvent("download"), run("floatscope:export-svg")]);
    expect(svgDl.suggestedFilename()).toMatch(/^floatscope_scrubber_[A-Za-z0-9.+-]+_layer0_step\d+\.svg$/);
    const svgPath = path.join(ARTIFACTS, "export.svg");
    await svgDl.saveAs(svgPath);
    const svg = fs.readFileSync(svgPath, "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("&lt;b&gt;x&lt;/b&gt;&quot;&#39;&amp;");
    expect(svg).not.toMatch(/<b>|<script/);
    const [pngDl] = await Promise.all([page.waitForEvent("download"), run("floatscope:export-png")]);
    const pngPath = path.join(ARTIFACTS, "export.png");
    await pngDl.saveAs(pngPath);
    expect(fs.readFileSync(pngPath).subarray(1, 4).toString("ascii")).toBe("PNG");
  });

  it("a .fstrace file opens from the file browser straight into the scrubber", async () => {
    const row = page.locator('.jp-DirListing-item[data-file-type="floatscope-trace"]').filter({ hasText: "synthetic-mdm.fstrace" });
    await row.waitFor({ timeout: 30_000 });
    await row.dblclick();
    const doc = page.locator(".fs-trace-document .fs-scrubber");
    await doc.waitFor({ timeout: 120_000 });
    expect(await doc.locator(".fs-run-name").first().textContent()).toBe("synthetic-mdm · MDM");
    expect(await doc.locator(".fs-run-where").first().textContent()).toMatch(/^step 21 /);
    await page.locator(".fs-trace-document").screenshot({ path: path.join(ARTIFACTS, "trace-file.png") });
  }, 180_000);

  it("made no request outside localhost and logged no widget errors", () => {
    expect(external).toEqual([]);
    expect(consoleErrors.filter((e) => /floatscope|fs-|plotly/i.test(e))).toEqual([]);
  });
});
