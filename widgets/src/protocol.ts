/**
 * The payload contract, shared with the kernel library: `src/protocol/payloads.ts` is compiled into
 * this bundle as it is (it has no imports), so the two sides cannot drift apart.
 */
export * from "../../src/protocol/payloads.js";
export * from "../../src/protocol/specs.js";

/** The kernel's generic heatmap figure (src/display/mime.ts FLOATSCOPE_MIME.heatmap). */
export const MIME_HEATMAP = "application/vnd.floatscope.heatmap.v1+json";

/** The fields of src/figures/heatmap.ts HeatmapSpec the view reads (that module is kernel-only). */
export interface HeatmapSpec {
  kind: "heatmap";
  title: string;
  subtitle?: string;
  xTitle?: string;
  yTitle?: string;
  valueLabel?: string;
  xLabels: string[];
  yLabels: string[];
  values: (number | null)[][];
  colormap: string;
  domain: [number, number];
}
