/**
 * The scrubber as a comparison instrument, in a real JupyterLab (the project's .venv server, our
 * kernel, Debian's Chromium driven by playwright-core):
 *
 * - two runs of SmolLM2-135M's shape (30 layers × 9 heads, T = 170, 32 steps; synthetic attention,
 *   built here and saved as a notebook output, no kernel needed to draw it) sit side by side in one
 *   1400 × 900 viewport with the temporal view, the full map and the head view of both on screen;
 *   the saved copy says in plain words what needs a live kernel;
 * - notebook 01's tiny-tier runs (the same settings as its first cells, decoded by the kernel here,
 *   not by re-executing notebook 01): the head view and the full map are non-empty at every step, at
 *   the first and the last layer (what the output did not embed is fetched from the live kernel),
 *   and every anchor column of the token axis carries its label;
 * - clicking a token label selects it (its row and column: profiles with axes and values);
 * - hovering a query token isolates its lines, and the head toggles change the drawn line count.
 *
 * Screenshots: test/widgets/browser/screenshots/ (committed, small). Skips (with the reason) only when
 * Chromium, the venv, the build or the kernelspec is missing.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { scrubber } from "../../../src/figures/scrubber.js";
import { syntheticTrace } from "../synthetic-trace.js";
import { CHROMIUM, CHROMIUM_ARGS, missingPrerequisite, ROOT, startLab, type LabServer } from "./lab-server.js";
import { walkEveryStep } from "./scrubber-walk.js";

const missing = missingPrerequisite();
if (missing) console.warn(`[compare browser test] skipped: ${missing}`);
const SHOTS = path.join(ROOT, "test/widgets/browser/screenshots");

type App = {
  jupyterapp: {
    shell: { currentWidget: { sessionContext: { ready: Promise<void> } } | null };
    commands: { execute(id: string, args?: unknown): Promise<unknown> };
    serviceManager: { sessions: { shutdownAll(): Promise<void> } };
  };
};

function notebook(cells: { source: string; outputs?: unknown[] }[]): string {
  return JSON.stringify({
    cells: cells.map((c, i) => ({
      cell_type: "code",
      execution_count: c.outputs?.length ? 1 : null,
      id: `cell-${i}`,
      metadata: {},
      outputs: c.outputs ?? [],
      source: c.source,
    })),
    metadata: {
      kernelspec: { display_name: "TypeScript (floatscope)", language: "typescript", name: "floatscope" },
      language_info: { file_extension: ".ts", mimetype: "text/typescript", name: "typescript" },
    },
    nbformat: 4,
    nbformat_minor: 5,
  });
}

/** Two runs with SmolLM2-135M's shape: 30 layers × 9 heads, 138 prompt + 32 answer tokens, 32 steps. */
function savedComparison(): string {
  const shape = {
    promptLength: 138,
    genLength: 32,
    steps: 32,
    layers: 30,
    heads: 9,
    perHead: true,
    mapLayers: [0, 15, 29],
    headMapLayers: [0, 29],
  };
  const words = "Context : The river town of Alder lies north of the hills and its mill grinds grain for three villages".split(" ");
  const tokens = Array.from({ length: 170 }, (_, j) => (j < 138 ? ` ${words[j % words.length]}` : ` a${j - 138}`));
  const mdm = syntheticTrace({ ...shape, tokens });
  const arm = syntheticTrace({ ...shape, tokens, causal: true });
  mdm.model = { ...mdm.model, name: "smollm2-135m-dream-world", numLayers: 30, numHeads: 9 };
  arm.model = { ...arm.model, name: "smollm2-135m-causal-world", numLayers: 30, numHeads: 9 };
  const fig = scrubber([mdm, arm], { title: "SmolLM2-135M shape: MDM vs its causal twin", tiers: ["real-base", "real-base"] });
  const bundle = fig.toMimeBundle();
  return notebook([
    {
      source: "// saved output: two runs of SmolLM2-135M's shape (synthetic attention)",
      outputs: [{ output_type: "display_data", data: bundle, metadata: {} }],
    },
  ]);
}

/** Notebook 01's tiny tier: its settings, question, probes and decoding, then its scrubber call. */
const TINY_01 = [
  `import { notebookSettings, loadQaSet, decodeQa, scrubber, show, type DecodedModel } from "floatscope";
const S = notebookSettings({ families: ["llada", "dream"], samples: 1 });
const qa = await loadQaSet(S);
const runs: DecodedModel[] = Object.values(await decodeQa(S, qa, { probes: { received: true }, context: "oracle", tokens: 16 }));
const traces = runs.map((r) => r.traces[0]);
show(scrubber(traces, { title: "notebook 01, tiny tier", maxBytes: 1024 * 1024 }));`,
];

describe.skipIf(missing !== null)("the scrubber compares runs in a real JupyterLab", () => {
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

  beforeAll(async () => {
    fs.mkdirSync(path.join(ROOT, ".cache"), { recursive: true });
    dir = fs.mkdtempSync(path.join(ROOT, ".cache/compare-browser-"));
    fs.mkdirSync(SHOTS, { recursive: true });
    fs.writeFileSync(path.join(dir, "saved-135m.ipynb"), savedComparison());
    fs.writeFileSync(path.join(dir, "tiny-01.ipynb"), notebook(TINY_01.map((source) => ({ source }))));
    const settings = path.join(dir, ".jupyter/settings/@jupyterlab/notebook-extension");
    fs.mkdirSync(settings, { recursive: true });
    fs.writeFileSync(path.join(settings, "tracker.jupyterlab-settings"), JSON.stringify({ windowingMode: "none" }));
    process.env.FLOATSCOPE_MODELS = path.join(ROOT, "models");
    process.env.FLOATSCOPE_DATA = path.join(ROOT, "models/world/eval-heldout.jsonl.gz");
    lab = await startLab(dir);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(30_000);
    page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
    await page.goto(`${lab.url}/lab?token=${lab.token}`);
    await page.waitForFunction(() => (window as unknown as { jupyterapp?: unknown }).jupyterapp !== undefined, null, { timeout: 90_000 });
    await page.waitForSelector(".jp-DirListing-item", { timeout: 90_000 });
    // The file browser closed: the notebook gets the window's width (what a reader does to compare).
    await page.evaluate(() => (window as unknown as App).jupyterapp.commands.execute("application:toggle-left-area"));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("two 135M-shaped runs side by side in one 1400 × 900 viewport: temporal view, full map and head view of both visible", async () => {
    const panel = await open("saved-135m.ipynb");
    const sc = panel.locator(".fs-scrubber").first();
    await sc.locator("canvas.fs-temporal").first().waitFor({ timeout: 60_000 });
    await sc.evaluate((e) => e.scrollIntoView({ block: "start" }));
    await page.waitForTimeout(300);
    const runs = sc.locator(".fs-run");
    expect(await runs.count()).toBe(2);
    const [a, b] = [(await runs.nth(0).boundingBox())!, (await runs.nth(1).boundingBox())!];
    expect(Math.abs(a.y - b.y)).toBeLessThan(2); // one row: columns, not stacked
    expect(b.x).toBeGreaterThanOrEqual(a.x + a.width);
    const inView = async (l: Locator, what: string) => {
      const r = (await l.boundingBox())!;
      expect(r, what).not.toBeNull();
      expect(r.x, `${what} left`).toBeGreaterThanOrEqual(0);
      expect(r.y, `${what} top`).toBeGreaterThanOrEqual(0);
      expect(r.x + r.width, `${what} right`).toBeLessThanOrEqual(1400);
      expect(r.y + r.height, `${what} bottom`).toBeLessThanOrEqual(900);
    };
    for (let i = 0; i < 2; i++) {
      const run = runs.nth(i);
      await inView(run.locator("canvas.fs-temporal"), `run ${i} temporal view`);
      await inView(run.locator("canvas.fs-map"), `run ${i} full map`);
      await inView(run.locator("canvas.fs-headview-lines"), `run ${i} head view`);
      // something is drawn in the head view at the opening step (the last: saved in the output)
      expect(Number(await run.locator("canvas.fs-headview-lines").getAttribute("data-lines"))).toBeGreaterThan(0);
    }
    // titled by model name, tier and paradigm; where the shared controls put each run
    expect(await runs.nth(0).locator(".fs-run-name").textContent()).toBe("smollm2-135m-dream-world · real-base · MDM");
    expect(await runs.nth(1).locator(".fs-run-name").textContent()).toBe("smollm2-135m-causal-world · real-base · ARM");
    expect(await runs.nth(0).locator(".fs-run-where").textContent()).toMatch(
      /^step 31 \(32 of 32 · 100 % of the decode\) · layer 0 of 30 · mean over 9 heads/,
    );
    // the saved copy says plainly what it holds and what needs a live session; no jargon
    const note = (await sc.locator(".fs-note").first().textContent()) ?? "";
    expect(note).toMatch(/^To stay small, this output holds .*per-head maps \(the head view\) at \d+ of 32 steps/);
    expect(note).toContain("kernel");
    expect(note).not.toMatch(/subsampled/);
    await page.screenshot({ path: path.join(SHOTS, "compare-135m-1400x900.png") });
    // A step the output did not embed: the head view says why it is empty, in words.
    await sc.locator('input[data-role="step"]').evaluate((el: HTMLInputElement) => {
      el.value = "7";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await page.waitForFunction(
      () => {
        const n = document.querySelector(".fs-run .fs-headview .fs-map-note")?.textContent ?? "";
        return /not saved in this output|kernel|no longer holds|no data/.test(n) || n.startsWith("step");
      },
      null,
      { timeout: 30_000 },
    );
    await page.evaluate(async () => {
      const app = (window as unknown as App).jupyterapp;
      await app.serviceManager.sessions.shutdownAll();
      void app.commands.execute("application:close-all");
    });
    for (let i = 0; i < 4 && (await page.locator(".jp-Dialog").count()) > 0; i++) {
      await page
        .locator(".jp-Dialog button", { hasText: /Discard|Don't Save|No/ })
        .first()
        .click()
        .catch(() => page.keyboard.press("Escape"));
      await page.waitForTimeout(200);
    }
  }, 240_000);

  describe("notebook 01's tiny-tier runs, decoded by a live kernel", () => {
    let sc: Locator;

    beforeAll(async () => {
      const panel = await open("tiny-01.ipynb");
      await page.evaluate(async () => {
        const app = (window as unknown as App).jupyterapp;
        await app.shell.currentWidget!.sessionContext.ready;
        await app.commands.execute("notebook:run-all-cells");
      });
      sc = panel.locator(".fs-scrubber").first();
      await sc.locator("canvas.fs-map").first().waitFor({ timeout: 300_000 });
      await sc.evaluate((e) => e.scrollIntoView({ block: "start" }));
    }, 360_000);

    it("the head view and the full map are non-empty at every step (first and last layer); every anchor column is labelled", async () => {
      expect(await sc.locator(".fs-run").count()).toBe(2);
      const steps = Number(await sc.locator('input[data-role="step"]').getAttribute("max")) + 1;
      const layers = Number(await sc.locator('input[data-role="layer"]').getAttribute("max")) + 1;
      expect(steps).toBeGreaterThanOrEqual(8);
      // scrubber-walk's walk: both panels at every step of the first and last layer, each anchor column labelled
      const { empty, unlabelled, anchorsSeen } = await walkEveryStep(page, sc, [0, layers - 1]);
      expect(empty).toEqual([]);
      expect(unlabelled).toEqual([]);
      expect(anchorsSeen).toBeGreaterThan(0);
      await sc
        .locator(".fs-run")
        .nth(1)
        .screenshot({ path: path.join(SHOTS, "tiny-01-every-step.png") });
    }, 600_000);

    it("clicking a token label selects it: its row and column, profiles with axes and values", async () => {
      const run = sc.locator(".fs-run").first();
      const tick = run.locator(".fs-xaxis:not(.fs-map-xaxis) .fs-token-tick").nth(3);
      const pos = await tick.getAttribute("data-pos");
      await tick.click();
      await expect(run.locator(".fs-xaxis:not(.fs-map-xaxis) .fs-tick-selected").getAttribute("data-pos")).resolves.toBe(pos);
      await expect(run.locator(".fs-headview-queries .fs-tick-selected").getAttribute("data-pos")).resolves.toBe(pos);
      expect(await run.locator(".fs-detail").textContent()).toContain(`@${pos}`);
      const profiles = run.locator("svg.fs-profiles g.fs-profile");
      expect(await profiles.count()).toBe(2);
      for (let i = 0; i < 2; i++) {
        expect(await profiles.nth(i).locator(".fs-profile-xtick").count()).toBeGreaterThan(1);
        expect(await profiles.nth(i).locator(".fs-profile-ytick").count()).toBeGreaterThan(1);
        expect(await profiles.nth(i).locator(".fs-profile-max").textContent()).toMatch(/^max \d/);
      }
      // the other run's panel shows the same position
      await expect(sc.locator(".fs-run").nth(1).locator(".fs-headview-queries .fs-tick-selected").getAttribute("data-pos")).resolves.toBe(
        pos,
      );
      await sc.screenshot({ path: path.join(SHOTS, "tiny-01-label-click.png") });
    });

    it("head toggles change the drawn line count; hovering a query token isolates its lines", async () => {
      const run = sc.locator(".fs-run").first();
      const lines = () => run.locator("canvas.fs-headview-lines").getAttribute("data-lines").then(Number);
      await page.keyboard.press("Escape"); // no selection: every query's strongest key per head
      await sc.focus();
      await page.keyboard.press("Escape");
      const all = await lines();
      expect(all).toBeGreaterThan(0);
      const toggles = run.locator(".fs-head-toggle");
      expect(await toggles.count()).toBeGreaterThan(1);
      await toggles.first().click();
      const fewer = await lines();
      expect(fewer).toBeLessThan(all);
      expect(await toggles.first().getAttribute("aria-pressed")).toBe("false");
      await toggles.nth(1).click();
      expect(await lines()).toBeLessThan(fewer);
      await toggles.first().click();
      await toggles.nth(1).click();
      expect(await lines()).toBe(all);
      // hover a query token: only its lines
      const q = run.locator(".fs-headview-queries .fs-tick").nth(2);
      await q.hover();
      expect(await run.locator("canvas.fs-headview-lines").getAttribute("data-query")).toBe(await q.getAttribute("data-pos"));
      expect(await lines()).toBeGreaterThan(0);
      await run.locator(".fs-headview").screenshot({ path: path.join(SHOTS, "tiny-01-head-hover.png") });
      await page.mouse.move(1, 1);
      expect(await run.locator("canvas.fs-headview-lines").getAttribute("data-query")).toBe("");
      expect(await lines()).toBe(all);
    });

    it("logged no widget errors", () => {
      expect(consoleErrors.filter((e) => /floatscope|fs-/i.test(e))).toEqual([]);
    });
  });
});
