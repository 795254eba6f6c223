/**
 * save(figure, file): the SVG written is the figure's drawing; PNG at 2× by default, at `scale`, or at
 * `dpi` (scale dpi/96, recorded as pixels per metre in pHYs); bad names and options are typed errors
 * and leave no file behind.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { figureSvg, save } from "../../src/figures/save.js";
import { SettingsError } from "../../src/util/errors.js";
import { FIGURE_INPUTS } from "./figure-inputs.js";
import { decodePng } from "../support/png-decode.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-save-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function phys(png: Buffer): number | null {
  for (let o = 8; o < png.length;) {
    const len = png.readUInt32BE(o);
    if (png.toString("ascii", o + 4, o + 8) === "pHYs") return png.readUInt32BE(o + 8);
    o += 12 + len;
  }
  return null;
}

describe("save()", () => {
  it("fig3.svg: the same SVG the notebook shows, with axes, colour bar and labels", () => {
    const file = path.join(dir, "fig3.svg");
    const r = save(FIGURE_INPUTS.absorption, file);
    const svg = fs.readFileSync(file, "utf8");
    expect(svg).toBe(figureSvg(FIGURE_INPUTS.absorption));
    expect(r).toMatchObject({ format: "svg", width: 720, bytes: Buffer.byteLength(svg) });
    expect(svg).toContain("Absorption rate (%)");
    expect(svg).toContain("Layer index");
    const heat = fs.readFileSync(path.join(dir, "fig3.svg"), "utf8");
    expect(heat).not.toContain("<script");
  });

  it("PNG: 2× by default, `scale` when given, 300 dpi as 3.125× with 11811 px/m recorded", () => {
    const two = save(FIGURE_INPUTS.drift, path.join(dir, "drift.png"));
    const one = save(FIGURE_INPUTS.drift, path.join(dir, "drift1.png"), { scale: 1 });
    const dpi = save(FIGURE_INPUTS.drift, path.join(dir, "drift300.png"), { dpi: 300 });
    expect(two.width).toBe(2 * one.width);
    expect(two.height).toBe(2 * one.height);
    expect(dpi.width).toBe(Math.round((one.width * 300) / 96));
    expect(phys(fs.readFileSync(dpi.path))).toBe(Math.round(300 / 0.0254));
    expect(phys(fs.readFileSync(two.path))).toBe(Math.round(192 / 0.0254));
    const px = decodePng(fs.readFileSync(one.path));
    expect([px.width, px.height]).toEqual([one.width, one.height]);
  });

  it("a wider figure when asked (width follows the page too)", () => {
    expect(save(FIGURE_INPUTS.qk, path.join(dir, "qk.svg"), { width: 1100 }).width).toBe(1100);
  });

  it("typed errors for an unknown extension, a bad scale or a non-figure; nothing written", () => {
    expect(() => save(FIGURE_INPUTS.qk, path.join(dir, "qk.pdf"))).toThrow(SettingsError);
    expect(() => save(FIGURE_INPUTS.qk, path.join(dir, "qk2.png"), { scale: 0 })).toThrow(SettingsError);
    expect(() => save({ kind: "nope" }, path.join(dir, "x.svg"))).toThrow(/known kind/);
    expect(fs.readdirSync(dir).filter((f) => /qk\.pdf|qk2|x\.svg|\.tmp$/.test(f))).toEqual([]);
  });
});
