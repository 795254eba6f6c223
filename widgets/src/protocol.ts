/**
 * The payload contract, shared with the kernel library: `src/protocol/` (payloads, analysis specs,
 * the generic heatmap spec and its MIME type) is compiled into this bundle as it is (no imports
 * outside that folder), so the two sides cannot drift apart.
 */
export * from "../../src/protocol/payloads.js";
export * from "../../src/protocol/specs.js";
export * from "../../src/protocol/heatmap.js";

export * from "../../src/protocol/scales.js";
export * from "../../src/protocol/export-names.js";
export * from "../../src/protocol/axis-labels.js";
