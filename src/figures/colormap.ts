/**
 * Colormaps for kernel-side figures. The stops are part of the kernel ↔ widget contract (both
 * sides must paint the same colours), so they are declared once in `protocol/colormap.ts`; this
 * module re-exports them for the library.
 */
export { COLORMAPS, colorAt, colormapLut, isDiverging, lightness, rgbAt, type Colormap } from "../protocol/colormap.js";
