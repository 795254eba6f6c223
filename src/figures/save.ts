/**
 * `save(figure, "fig3.svg")` / `save(figure, "fig3.png", { dpi: 300 })`: a figure for a paper,
 * written from kernel code. The picture is the one `show()` displays (the same description drawn
 * by protocol/draw.ts); PNG is that SVG rasterised by resvg at 2× (or `scale`, or `dpi` / 96),
 * with the resolution recorded in the file so a word processor places it at the intended size.
 * The file is written to a temporary name and renamed, so a failure leaves no half-written file.
 * Folders follow the CLI's rule (`--mkdir`): a missing folder is an error unless `{ mkdir: true }`
 * asks for it, so a typo in a path is not silently a new folder tree. `scrubber(traces)` saves as
 * its static image (the temporal view of the last layer, the picture `show()` sends beside the widget).
 *
 * @example
 *   const { spec } = absorptionRate(traces);
 *   save(spec, "fig3.svg");
 *   save(spec, "fig3.png", { dpi: 300 });
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { drawFigure } from "../protocol/draw.js";
import { SettingsError } from "../util/errors.js";
import { checkOutputFile } from "../util/paths.js";
import { crc32 } from "./png.js";
import { pngRaster } from "./raster.js";
import { describeFigure, figureKindOf, FIGURE_KINDS } from "./registry.js";
import { scrubberSvg } from "./scrubber-svg.js";
import type { ScrubberPayload } from "../protocol/payloads.js";
import { ScrubberFigure } from "./scrubber.js";

export interface SaveOptions {
  /** PNG pixels per CSS pixel (default 2). */
  scale?: number;
  /** PNG resolution in dots per inch (sets the scale to dpi / 96 and records it in the file). */
  dpi?: number;
  /** Figure width in CSS pixels (default 720; the scrubber's image has its own size). */
  width?: number;
  /** Create the file's missing folders (default false: a missing folder is a SettingsError, as the CLI without --mkdir). */
  mkdir?: boolean;
}

export interface SavedFigure {
  path: string;
  format: "svg" | "png";
  bytes: number;
  /** Size in pixels (PNG) or CSS pixels (SVG). */
  width: number;
  height: number;
}

/** The figure's SVG (what `save` writes for .svg and rasterises for .png). */
export function figureSvg(x: unknown, opts: { width?: number } = {}): string {
  // scrubber() returns a displayable wrapper (ScrubberFigure), not a payload with a kind: draw its payload.
  if (x instanceof ScrubberFigure) return scrubberSvg(x.payload);
  const kind = figureKindOf(x);
  if (kind === null) {
    throw new SettingsError("save() needs a figure", {
      field: "figure",
      expected: `an analysis spec or figure of a known kind (${Object.keys(FIGURE_KINDS).join(", ")})`,
      found: typeof x === "object" && x !== null ? `kind ${JSON.stringify((x as { kind?: unknown }).kind)}` : typeof x,
    });
  }
  if (kind === "scrubber") return scrubberSvg(x as ScrubberPayload);
  return drawFigure(describeFigure(x as { kind: string }), { width: opts.width, raster: pngRaster });
}

/** SVG → PNG bytes at `scale`, with a pHYs chunk saying `dpi`. */
export function svgToPng(svg: string, scale = 2, dpi = 96 * scale): Buffer {
  const r = new Resvg(svg, {
    fitTo: { mode: "zoom", value: scale },
    background: "white",
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans", sansSerifFamily: "DejaVu Sans" },
  });
  return withDpi(Buffer.from(r.render().asPng()), dpi);
}

/** Insert (or replace) the PNG pHYs chunk: pixels per metre on both axes. */
function withDpi(png: Buffer, dpi: number): Buffer {
  const ppm = Math.round(dpi / 0.0254);
  const data = Buffer.alloc(9);
  data.writeUInt32BE(ppm, 0);
  data.writeUInt32BE(ppm, 4);
  data[8] = 1; // unit: metre
  const chunk = Buffer.alloc(21);
  chunk.writeUInt32BE(9, 0);
  chunk.write("pHYs", 4, "ascii");
  data.copy(chunk, 8);
  chunk.writeUInt32BE((crc32(chunk.subarray(4, 17)) ^ 0xffffffff) >>> 0, 17);
  // Drop an existing pHYs, put ours right after IHDR (8-byte signature + 25-byte IHDR chunk).
  const parts: Buffer[] = [png.subarray(0, 33), chunk];
  for (let o = 33; o < png.length;) {
    const len = png.readUInt32BE(o);
    const end = o + 12 + len;
    if (png.toString("ascii", o + 4, o + 8) !== "pHYs") parts.push(png.subarray(o, end));
    o = end;
  }
  return Buffer.concat(parts);
}

/** Write `figure` to `file` (.svg or .png). */
export function save(figure: unknown, file: string, opts: SaveOptions = {}): SavedFigure {
  const ext = path.extname(file).toLowerCase();
  if (ext !== ".svg" && ext !== ".png") {
    throw new SettingsError("save() writes .svg or .png", {
      field: "file",
      expected: 'a name ending in ".svg" or ".png"',
      found: JSON.stringify(file),
    });
  }
  for (const [k, v] of [
    ["scale", opts.scale],
    ["dpi", opts.dpi],
    ["width", opts.width],
  ] as const) {
    if (v !== undefined && !(typeof v === "number" && Number.isFinite(v) && v > 0)) {
      throw new SettingsError(`save() ${k} must be a positive number`, { field: k, expected: "a number > 0", found: String(v) });
    }
  }
  // The target before any drawing: a missing folder (without mkdir), a folder or a FIFO at the
  // name, or an unwritable folder is a typed error, and nothing is created.
  const target = checkOutputFile(file, {
    what: "save() file",
    field: "file",
    error: SettingsError,
    mkdir: opts.mkdir === true,
    mkdirHint: "create it first, or pass { mkdir: true }",
  });
  const svg = figureSvg(figure, { width: opts.width });
  const size = /<svg[^>]*\swidth="([\d.]+)"[^>]*\sheight="([\d.]+)"/.exec(svg);
  let width = Number(size?.[1] ?? 0);
  let height = Number(size?.[2] ?? 0);
  let bytes: Buffer;
  if (ext === ".svg") bytes = Buffer.from(svg, "utf8");
  else {
    const scale = opts.dpi !== undefined ? opts.dpi / 96 : (opts.scale ?? 2);
    bytes = svgToPng(svg, scale, opts.dpi ?? 96 * scale);
    width = bytes.readUInt32BE(16);
    height = bytes.readUInt32BE(20);
  }
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, bytes);
    fs.renameSync(tmp, target);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  return { path: target, format: ext === ".svg" ? "svg" : "png", bytes: bytes.length, width, height };
}
