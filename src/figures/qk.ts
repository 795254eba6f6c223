/**
 * QK decomposition (paper Fig. 4): for each chosen layer, three maps over the token window — the
 * score q·k and cos θ on a diverging scale centred on 0, the norm product ‖q‖·‖k‖ on a sequential
 * one — with the floating keys ticked; and, across the chosen layers, the floating keys' score
 * advantage split into its angle and norm parts (the "angle or norm?" answer per layer).
 *
 * @example
 *   const { spec } = qkDecomposition(trace, { layers: [1, 6, 11] });
 *   show(spec);   // all three layers in one figure, the per-layer lines under them
 */
import type { QKSpec } from "../analysis/figure-data.js";
import type { FigureDescription, HeatPanel, LegendEntry, LineSeries, Panel } from "../protocol/figure.js";
import { QK_QUANTITIES, qkColourScale } from "../protocol/scales.js";
import { displayTokens } from "../protocol/token-text.js";
import { formatValue } from "../protocol/markup.js";
import { cells, describe, MARKERS, positionAxis, valueAxis } from "./describe.js";

const FLOATING = "#d62728";

/**
 * How the floating keys' score advantage splits into its angle and norm parts, in words a reader can
 * take literally. A share is only a share when both parts push the same way: with one part negative
 * the other exceeds the whole ("120 %" of an advantage), so then both parts are given as signed
 * numbers instead. Hand-worked cases in test/figures/qk-wording.test.ts.
 */
export function advantageSplit(angle: number, norm: number): string {
  const total = angle + norm;
  if (!(Math.abs(total) > 1e-12)) return "no advantage";
  if (angle >= 0 && norm >= 0) return `${Math.round((100 * angle) / total)} % from the angle`;
  if (angle <= 0 && norm <= 0) return `${Math.round((100 * angle) / total)} % of the deficit from the angle`;
  const signed = (v: number) => `${v > 0 ? "+" : "−"}${formatValue(Math.abs(v))}`;
  return `angle ${signed(angle)}, norm ${signed(norm)} (they pull apart; total ${signed(total)})`;
}

export function qkFigure(p: QKSpec): FigureDescription {
  if (!Array.isArray(p.panels) || p.panels.length === 0) throw new TypeError("a QK spec needs at least one layer panel");
  const panels: Panel[] = [];
  // token text as readers see it (byte-level/SentencePiece markers decoded, protocol/token-text.ts)
  const shown = displayTokens(p.tokens);
  for (const m of p.panels) {
    const [rows, cols] = m.score.shape;
    const words = (n: number) => Array.from({ length: n }, (_, i) => shown[i] ?? String(m.start + i));
    for (const { key, title } of QK_QUANTITIES) {
      const values = m[key].values;
      const heat: HeatPanel = {
        type: "heat",
        title: `layer ${m.layer} · ${title}`,
        rows,
        cols,
        values: cells(values),
        // The scale rule (signed → diverging around 0) is protocol/scales.ts, the same for every QK map.
        scale: qkColourScale(key, values),
        valueLabel: title,
        x: { title: "key", labels: words(cols) },
        y: { title: "query", labels: words(rows) },
        columnMarks: { columns: m.anchors.map((f) => f - m.start), colour: FLOATING },
      };
      panels.push(heat);
    }
  }
  const layers = p.summary.map((s) => s.layer);
  const terms: [string, (s: QKSpec["summary"][number]) => number, string | undefined][] = [
    ["angle part (cos θ)", (s) => s.angleTerm, undefined],
    ["norm part (‖q‖‖k‖)", (s) => s.normTerm, "6 4"],
    ["total advantage", (s) => s.advantage, "2 3"],
  ];
  const TERM_COLOURS = ["#d95f02", "#2ca02c", "#333333"];
  const series: LineSeries[] = terms.map(([name, f, dash], i) => ({
    name,
    colour: TERM_COLOURS[i],
    dash,
    marker: MARKERS[i % MARKERS.length],
    x: layers,
    y: p.summary.map(f),
  }));
  const cosSeries: LineSeries[] = [
    { name: "cos θ, floating keys", colour: FLOATING, marker: "circle", x: layers, y: p.summary.map((s) => s.cosFloating) },
    { name: "cos θ, other keys", colour: "#7f7f7f", dash: "6 4", marker: "square", x: layers, y: p.summary.map((s) => s.cosOther) },
  ];
  panels.push(
    {
      type: "lines",
      title: "score advantage of floating keys, by layer",
      x: positionAxis("layer", layers),
      y: valueAxis(
        "advantage (score units)",
        series.flatMap((s) => s.y),
      ),
      series,
    },
    {
      type: "lines",
      title: "mean cos θ, by layer",
      x: positionAxis("layer", layers),
      y: valueAxis(
        "cos θ",
        cosSeries.flatMap((s) => s.y),
      ),
      series: cosSeries,
    },
  );
  const legend: LegendEntry[] = [
    { label: "floating key", colour: FLOATING, mark: "tick" },
    ...[...series, ...cosSeries].map((s) => ({ label: s.name, colour: s.colour, mark: "line" as const, dash: s.dash })),
  ];
  const split = p.summary.map((s) => `L${s.layer} ${advantageSplit(s.angleTerm, s.normTerm)}`).join(", ");
  return describe("qk", {
    title: `QK decomposition · ${p.model}`,
    subtitle: [
      `${p.heads}, keys ${p.rope === "pre" ? "before" : "after"} RoPE, ${p.scaled ? "scores scaled by 1/√d" : "unscaled scores"}; layers ${layers.join(", ")}`,
      "score and cos θ: diverging scale centred on 0 (± max |value| of each map)",
    ],
    panels,
    columns: 3,
    legend,
    warnings: p.warnings,
    exportName: { models: [p.model], layer: layers, head: p.panels[0].head },
    text: `QK decomposition — ${p.model}: layers ${layers.join(", ")}; floating keys' score advantage ${split}`,
  });
}
