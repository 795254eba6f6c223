/**
 * Browser-side checks of a scrubber output shared by the browser tests: move its shared sliders the
 * way a reader does, and read, per run panel, what is drawn: the full map's colours, the head view's
 * line count, the anchor columns and whether each one carries a token label.
 */
import { expect } from "vitest";
import type { Locator, Page } from "playwright-core";

/** Set one of the scrubber's shared sliders (step, layer, head) and let the view react. */
export async function setSlider(sc: Locator, role: "step" | "layer" | "head", value: number): Promise<void> {
  await sc.locator(`input[data-role="${role}"]`).evaluate((el: HTMLInputElement, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }, value);
}

/** What one run panel shows now. */
export interface PanelState {
  /** The panel's own step, layer and head ("step 3 (4 of 16 · 20 % of the decode) · layer 0 of 6 · …"). */
  where: string;
  /** The note under the full map ("full map, step …" when one is drawn). */
  note: string;
  /** Lines drawn in the head view (its canvas's data-lines). */
  lines: number;
  /** Distinct colours in the full map's canvas (the grey "no map" fill is one). */
  colours: number;
  /** Anchor columns at this step and layer, and those without a label on the token axis. */
  anchors: string[];
  missingLabels: string[];
}

export function panelStates(sc: Locator): Promise<PanelState[]> {
  return sc.locator(".fs-run").evaluateAll((rs) =>
    rs.map((r) => {
      const map = r.querySelector("canvas.fs-map") as HTMLCanvasElement;
      const d = map.getContext("2d")!.getImageData(0, 0, map.width, map.height).data;
      const colours = new Set<number>();
      for (let i = 0; i < d.length; i += 4 * 3) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      const anchors = ((r.querySelector("canvas.fs-strip") as HTMLElement).dataset.anchors ?? "").split(",").filter(Boolean);
      // labelled on both token axes: under the temporal view and under the full map
      const labelledOn = (sel: string) =>
        new Set(
          [...r.querySelectorAll(`${sel} .fs-token-tick`)]
            .filter((t) => (t.textContent ?? "").trim().length > 0)
            .map((t) => (t as HTMLElement).dataset.pos),
        );
      const temporalAxis = labelledOn(".fs-xaxis:not(.fs-map-xaxis)");
      const mapAxis = labelledOn(".fs-map-xaxis");
      return {
        where: r.querySelector(".fs-run-where")?.textContent ?? "",
        note: r.querySelector(".fs-map-box .fs-map-note")?.textContent ?? "",
        lines: Number(r.querySelector("canvas.fs-headview-lines")?.getAttribute("data-lines") ?? 0),
        colours: colours.size,
        anchors,
        missingLabels: anchors.filter((a) => !temporalAxis.has(a) || !mapAxis.has(a)),
      };
    }),
  );
}

/**
 * Walk every step of the shared step slider at each of `layers` (slider values), waiting at each for
 * every panel to show a full map and head-view lines (what the output did not embed arrives from the
 * live kernel). Returns the places where a panel stayed empty or an anchor column had no label.
 */
export async function walkEveryStep(
  page: Page,
  sc: Locator,
  layers: number[],
  timeoutMs = 30_000,
): Promise<{
  empty: string[];
  unlabelled: string[];
  anchorsSeen: number;
  steps: number;
  /** Per run: how many of its own steps the walk showed, of how many it has. */
  visited: { seen: number; of: number }[];
}> {
  const steps = Number(await sc.locator('input[data-role="step"]').getAttribute("max")) + 1;
  const root = await sc.elementHandle();
  if (!root) throw new Error("the scrubber is not in the page");
  const empty: string[] = [];
  const unlabelled: string[] = [];
  let anchorsSeen = 0;
  const seen: Map<string, number>[] = [];
  for (const layer of layers) {
    await setSlider(sc, "layer", layer);
    for (let s = 0; s < steps; s++) {
      await setSlider(sc, "step", s);
      const ok = await page
        .waitForFunction(
          (el) =>
            [...el.querySelectorAll(".fs-run")].every(
              (r) =>
                /^full map, step/.test(r.querySelector(".fs-map-box .fs-map-note")?.textContent ?? "") &&
                Number(r.querySelector("canvas.fs-headview-lines")?.getAttribute("data-lines") ?? 0) > 0,
            ),
          root,
          { timeout: timeoutMs },
        )
        .then(() => true)
        .catch(() => false);
      for (const [i, p] of (await panelStates(sc)).entries()) {
        // "step 3 (4 of 16 · …": the run's own step index and count
        const m = /\((\d+) of (\d+)/.exec(p.where);
        if (m) (seen[i] ??= new Map()).set(m[1], Number(m[2]));
        if (!ok || p.lines === 0 || p.colours < 4) empty.push(`run ${i} ${p.where}: ${p.lines} lines, ${p.colours} colours, ${p.note}`);
        if (p.missingLabels.length) unlabelled.push(`run ${i} ${p.where}: anchors ${p.missingLabels.join(", ")} unlabelled`);
        anchorsSeen += p.anchors.length;
      }
    }
  }
  const visited = seen.map((m) => ({ seen: m.size, of: Math.max(0, ...m.values()) }));
  return { empty, unlabelled, anchorsSeen, steps, visited };
}

/** Assert that `l` lies wholly inside a viewport of width × height. */
export async function expectInView(l: Locator, what: string, width: number, height: number): Promise<void> {
  const r = await l.boundingBox();
  expect(r, what).not.toBeNull();
  expect(r!.x, `${what} left`).toBeGreaterThanOrEqual(0);
  expect(r!.y, `${what} top`).toBeGreaterThanOrEqual(0);
  expect(r!.x + r!.width, `${what} right`).toBeLessThanOrEqual(width);
  expect(r!.y + r!.height, `${what} bottom`).toBeLessThanOrEqual(height);
}
