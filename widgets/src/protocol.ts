/**
 * The kernel ↔ widget contract, shared with the kernel library: `src/protocol/` (the scrubber
 * payload, the figure description, the one figure renderer, colormaps, scale and tick rules, export
 * names) is compiled into this bundle as it is (no imports outside that folder), so the two sides
 * cannot drift apart.
 */
export * from "../../src/protocol/payloads.js";
export * from "../../src/protocol/heatmap.js";
export * from "../../src/protocol/colormap.js";
export * from "../../src/protocol/figure.js";
export * from "../../src/protocol/draw.js";
export * from "../../src/protocol/markup.js";
export * from "../../src/protocol/scales.js";
export * from "../../src/protocol/export-names.js";
export * from "../../src/protocol/axis-labels.js";
export * from "../../src/protocol/token-text.js";
