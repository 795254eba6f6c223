/**
 * The kernel's `Raster` for draw.ts: dense heatmap cells become one deflated PNG (data: URL)
 * inside the SVG. The widget passes a canvas-based one; both paint the same RGB bytes.
 */
import type { Raster } from "../protocol/draw.js";
import { encodePng } from "./png.js";

export const pngRaster: Raster = (rgb, width, height) => `data:image/png;base64,${encodePng(width, height, rgb).toString("base64")}`;
