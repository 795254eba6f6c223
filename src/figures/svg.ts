/**
 * SVG/HTML string helpers for the kernel. They are shared with the widget's renderer, so they live
 * in `protocol/markup.ts`; this module re-exports them under their old path.
 */
export * from "../protocol/markup.js";
