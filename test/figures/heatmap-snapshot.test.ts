/**
 * Visual regression guard for the heatmap SVG fallback (Plot-style snapshot). The snapshot was
 * checked by eye when written (rendered with headless Chromium); correctness is asserted in
 * heatmap.test.ts (colours from matplotlib's viridis, escaping through a real parser). A change
 * here is fine when intended: look at the new SVG, then
 * `npx vitest run --project unit test/figures/heatmap-snapshot.test.ts --update=all`. The pixel
 * comparison of every figure kind is pixel-snapshots.test.ts.
 */
import { describe, expect, it } from "vitest";
import { heatmap, renderHeatmapSvg } from "../../src/figures/heatmap.js";

describe("heatmap SVG snapshot", () => {
  it("heatmap-floating-anchor", async () => {
    const tokens = ["<bos>", "The", " capital", " of", " France", " is", "<mask>", "<mask>"];
    // A hand-made "attention received" map: the anchor drifts right in deeper layers.
    const values = [
      [0.62, 0.1, 0.08, 0.05, 0.05, 0.04, 0.03, 0.03],
      [0.3, 0.35, 0.1, 0.07, 0.06, 0.05, 0.04, 0.03],
      [0.1, 0.15, 0.4, 0.12, 0.08, 0.06, 0.05, 0.04],
      [0.05, 0.05, 0.1, 0.2, 0.35, 0.1, 0.1, NaN],
    ];
    const svg = renderHeatmapSvg(
      heatmap({
        title: "attention received",
        subtitle: "toy example",
        xTitle: "key",
        yTitle: "layer",
        valueLabel: "mass",
        xLabels: tokens,
        yLabels: ["L0", "L1", "L2", "L3"],
        values,
        colormap: "magma",
      }),
    );
    await expect(svg).toMatchFileSnapshot("./__snapshots__/heatmap-floating-anchor.svg");
  });
});
