/**
 * A metric against the gold document's position (lost-in-the-middle sweep) or the number of
 * distractors: one line per model with its interval band.
 *
 * @example
 *   show(distractorPayload(rows, { y: "correct", scale: 100, metric: "Accuracy (%)" }));
 */
import type { DistractorSpec } from "../analysis/figure-data.js";
import type { FigureDescription, LineSeries } from "../protocol/figure.js";
import { modelColour, PARADIGM_DASH, paradigmOf } from "../protocol/scales.js";
import { describe, MARKERS, positionAxis, valueAxis } from "./describe.js";

const nullable = (a: number[] | undefined) => a?.map((v) => (Number.isFinite(v) ? v : null));

export function distractorFigure(p: DistractorSpec): FigureDescription {
  const xTitle = p.xTitle ?? "Gold document position";
  const series: LineSeries[] = p.series.map((s, i) => ({
    name: s.model,
    colour: modelColour(s.model, i),
    dash: PARADIGM_DASH[paradigmOf(s.model)].svg,
    marker: MARKERS[i % MARKERS.length],
    x: p.positions,
    y: nullable(s.values)!,
    ...(s.lo && s.hi ? { lo: nullable(s.lo), hi: nullable(s.hi) } : {}),
  }));
  const banded = p.series.some((s) => s.lo && s.hi);
  return describe("distractor", {
    title: p.title ?? `${p.metric} vs ${xTitle.toLowerCase()}`,
    panels: [
      {
        type: "lines",
        x: positionAxis(xTitle, p.positions),
        y: valueAxis(
          p.metric,
          series.flatMap((s) => [...s.y, ...(s.hi ?? [])]),
        ),
        series,
      },
    ],
    columns: 1,
    legend: series.map((s) => ({ label: s.name, colour: s.colour, mark: "line" as const, dash: s.dash })),
    notes: banded ? ["shaded band: the interval of each point"] : [],
    warnings: p.warnings ?? [],
    exportName: { models: p.series.map((s) => s.model) },
    text: `${p.metric} vs ${xTitle} ${p.positions.join("/")} — ${p.series.map((s) => s.model).join(", ")}`,
  });
}
