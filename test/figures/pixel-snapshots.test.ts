/**
 * A pixel snapshot per figure kind: the static SVG (the same drawing the widget shows) rasterised by
 * resvg at 1× and compared with the committed PNG in __snapshots__/pixels/<kind>.png. A change
 * fails when more than 0.5 % of the pixels differ by more than 40 (of 255) in some channel — loose
 * enough for font anti-aliasing on another machine, tight enough that a moved label, a changed
 * colour map or a missing colour bar fails (the control below shows a colormap swap does).
 *
 * To accept an intended change: `UPDATE_PIXEL_SNAPSHOTS=1 npx vitest run test/figures/pixel-snapshots.test.ts`,
 * look at the PNGs it rewrote, and commit them (docs/figures.md).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { FIGURE_INPUTS } from "./figure-inputs.js";
import { figureSvg, svgToPng } from "../../src/figures/save.js";
import { decodePng, type DecodedPng } from "../support/png-decode.js";
import { describeFigure } from "../../src/figures/registry.js";
import { drawFigure } from "../../src/protocol/draw.js";
import { pngRaster } from "../../src/figures/raster.js";
import type { HeatPanel } from "../../src/protocol/figure.js";

const DIR = path.join(__dirname, "__snapshots__", "pixels");
const UPDATE = process.env.UPDATE_PIXEL_SNAPSHOTS === "1";
const LEVEL = 40;
const MAX_SHARE = 0.005;

/** Share of pixels that differ by more than LEVEL in some channel (size mismatch → 1). */
function differing(a: DecodedPng, b: DecodedPng): number {
  if (a.width !== b.width || a.height !== b.height) return 1;
  let n = 0;
  for (let i = 0; i < a.rgba.length; i += 4) {
    for (let c = 0; c < 3; c++) {
      if (Math.abs(a.rgba[i + c] - b.rgba[i + c]) > LEVEL) {
        n++;
        break;
      }
    }
  }
  return n / (a.width * a.height);
}

const render = (svg: string) => svgToPng(svg, 1);

describe("pixel snapshots of every figure kind", () => {
  for (const [kind, input] of Object.entries(FIGURE_INPUTS)) {
    it(`${kind} matches __snapshots__/pixels/${kind}.png`, () => {
      const png = render(figureSvg(input));
      const file = path.join(DIR, `${kind}.png`);
      if (UPDATE || !fs.existsSync(file)) {
        fs.mkdirSync(DIR, { recursive: true });
        fs.writeFileSync(file, png);
        if (!UPDATE) throw new Error(`no snapshot for ${kind}: wrote ${file}; look at it, commit it and re-run`);
      }
      const share = differing(decodePng(png), decodePng(fs.readFileSync(file)));
      expect(share, `${(100 * share).toFixed(2)} % of the pixels changed`).toBeLessThanOrEqual(MAX_SHARE);
    });
  }

  it("control: the tolerance catches an unintended change (the retrieval map drawn in Blues instead of YlOrRd)", () => {
    const d = describeFigure(FIGURE_INPUTS.retrieval);
    for (const p of d.panels) (p as HeatPanel).scale.colormap = "blues";
    const changed = decodePng(render(drawFigure(d, { raster: pngRaster })));
    const committed = decodePng(fs.readFileSync(path.join(DIR, "retrieval.png")));
    expect(differing(changed, committed)).toBeGreaterThan(MAX_SHARE);
  });

  it("control: a one-word label change is caught too", () => {
    const d = describeFigure(FIGURE_INPUTS.absorption);
    const p = d.panels[0];
    if (p.type === "lines") p.y.title = "Absorption share (frac)";
    const changed = decodePng(render(drawFigure(d, { raster: pngRaster })));
    const committed = decodePng(fs.readFileSync(path.join(DIR, "absorption.png")));
    expect(differing(changed, committed)).toBeGreaterThan(0);
  });
});
