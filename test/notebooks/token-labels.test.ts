/** The Ġ/Ċ check itself, on hand-made notebook outputs (the executed notebooks are checked in figures.test.ts). */
import { describe, expect, it } from "vitest";
import { bpeMarkersShown } from "./token-labels.js";
import type { Notebook } from "./nb-outputs.js";

const nb = (data: Record<string, unknown>, stream = ""): Notebook => ({
  metadata: {},
  cells: [{ cell_type: "code", source: "", outputs: [{ output_type: "display_data", data }, { output_type: "stream", name: "stdout", text: stream }] }],
});

describe("bpeMarkersShown", () => {
  it("finds a marker in a figure axis label, a table's HTML or an SVG", () => {
    const fig = { panels: [{ x: { labels: ["·the", "Ġcat"] }, y: { labels: ["0"] } }], legend: [] };
    expect(bpeMarkersShown(nb({ "application/vnd.floatscope.figure.v1+json": fig }))).toEqual([
      "output 0 figure panel 0 axis: …Ġcat…",
    ]);
    expect(bpeMarkersShown(nb({ "text/html": "<td>Ċ</td>" }))).toHaveLength(1);
    expect(bpeMarkersShown(nb({ "image/svg+xml": "<svg><text>Ġx</text></svg>" }))).toHaveLength(1);
  });
  it("clean outputs, and logs (streams) are not labels", () => {
    expect(bpeMarkersShown(nb({ "text/html": "<td>·cat</td><td>↵</td>" }, "raw Ġ in a log line"))).toEqual([]);
  });
});
