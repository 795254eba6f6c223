/**
 * The frontier (analysis/frontier.ts): per layer, the share of anchors within `radius` positions of
 * the masked/unmasked boundary and of the tokens unmasked at that step, each beside its exact chance
 * share (dashed); and one trace's step × position strip at one layer: the canvas state of every
 * cell (prompt, decoded, masked, unmasked at this step) with the anchors filled orange, so a reader
 * sees whether the orange cells walk with the decoding front.
 *
 * @example
 *   const { spec } = anchorFrontier(traces, { radius: 2 });
 *   show(spec);
 */
import type { FrontierSpec } from "../analysis/figure-data.js";
import { colorAt } from "../protocol/colormap.js";
import type { FigureDescription, LineSeries } from "../protocol/figure.js";
import { displayTokens } from "../protocol/token-text.js";
import { cells, describe, positionAxis, valueAxis } from "./describe.js";

const ANCHOR = "#ff7f0e";
const FRONTIER = "#1f77b4";
const UNMASKED = "#2ca02c";
const CHANCE_DASH = "6 4";
/** Canvas states in the strip's value order. */
const STATES = ["prompt", "decoded", "masked", "unmasked at this step"];

const nullable = (a: number[]) => a.map((v) => (Number.isFinite(v) ? v : null));

export function frontierFigure(p: FrontierSpec): FigureDescription {
  const r = p.radius;
  const series: LineSeries[] = [
    {
      name: `anchors within ${r} of the frontier`,
      colour: FRONTIER,
      marker: "circle",
      x: p.layers,
      y: nullable(p.within),
      lo: nullable(p.withinLo),
      hi: nullable(p.withinHi),
    },
    { name: "chance (frontier)", colour: FRONTIER, dash: CHANCE_DASH, marker: "circle", x: p.layers, y: nullable(p.chance) },
    { name: `anchors within ${r} of the unmasked tokens`, colour: UNMASKED, marker: "square", x: p.layers, y: nullable(p.unmasked) },
    { name: "chance (unmasked tokens)", colour: UNMASKED, dash: CHANCE_DASH, marker: "square", x: p.layers, y: nullable(p.unmaskedChance) },
  ];
  const s = p.strip;
  const [S, N] = s.state.shape;
  const words = displayTokens(s.tokens);
  const anchorCells: number[] = [];
  for (let i = 0; i < S * N; i++) if (Number(s.anchors.values[i]) > 0.5) anchorCells.push(i);
  const top = STATES.length - 1;
  return describe("frontier", {
    title: `Anchors vs the frontier · ${p.model}`,
    subtitle: [`anchor rule: ${p.rule}; radius ${r} positions; n = ${p.traces} trace${p.traces === 1 ? "" : "s"}`],
    panels: [
      {
        type: "lines",
        title: "share of anchors near the frontier, by layer",
        x: positionAxis("Layer index", p.layers),
        y: valueAxis(
          "Share of anchors",
          series.flatMap((x) => [...x.y, ...(x.hi ?? [])]),
        ),
        series,
      },
      {
        type: "heat",
        title: `sample ${s.sample} · layer ${s.layer}: canvas state per step, anchors orange`,
        rows: S,
        cols: N,
        values: cells(s.state.values),
        scale: { colormap: "blues", domain: [0, top], diverging: false },
        valueLabel: "canvas state (legend)",
        x: { title: "key position (token)", labels: Array.from({ length: N }, (_, j) => words[j] ?? String(j)) },
        y: { title: "denoising step", labels: s.steps.map(String) },
        cellMarks: { cells: anchorCells, colour: ANCHOR },
      },
    ],
    columns: 1,
    legend: [
      ...series.map((x) => ({ label: x.name, colour: x.colour, mark: "line" as const, dash: x.dash })),
      { label: "anchor", colour: ANCHOR, mark: "swatch" },
      ...STATES.map((name, k) => ({ label: name, colour: colorAt("blues", k / top), mark: "swatch" as const })),
    ],
    notes: [
      "chance: the share for an anchor drawn uniformly from the candidate keys of each step (exact); band: 95 % interval over traces",
    ],
    warnings: p.warnings,
    exportName: { models: [p.model], layer: s.layer },
    text: `Anchors vs the frontier — ${p.model}, ${p.layers.length} layers, radius ${r}: within ${fmt(mean(p.within))} vs chance ${fmt(mean(p.chance))} (mean over layers); strip ${S} steps × ${N} positions at layer ${s.layer}, ${anchorCells.length} anchor cells`,
  });
}

function mean(xs: number[]): number {
  const f = xs.filter(Number.isFinite);
  return f.length ? f.reduce((a, b) => a + b, 0) / f.length : NaN;
}

function fmt(x: number): string {
  return Number.isFinite(x) ? x.toFixed(2) : "–";
}
