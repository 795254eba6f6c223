/**
 * A metric against the gold document's position (lost-in-the-middle sweep) or the number of
 * distractors: one line per model with its interval band.
 *
 * @example
 *   show(distractorPayload(rows, { y: "correct", scale: 100, metric: "Accuracy (%)" }));
 */
import type { DistractorSpec } from "../analysis/figure-data.js";
import type { FigureDescription, LineSeries } from "../protocol/figure.js";
import { modelColour, paradigmOf } from "../protocol/scales.js";
import { describe, paradigmStyles, positionAxis, valueAxis } from "./describe.js";

const nullable = (a: number[] | undefined) => a?.map((v) => (Number.isFinite(v) ? v : null));

export function distractorFigure(p: DistractorSpec): FigureDescription {
  const xTitle = p.xTitle ?? "Gold document position";
  const styles = paradigmStyles(p.series.map((s) => paradigmOf(s.model)));
  const series: LineSeries[] = p.series.map((s, i) => ({
    name: s.model,
    colour: modelColour(s.model, i),
    ...styles[i],
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
    legend: series.map((s) => ({ label: s.name, colour: s.colour, mark: "line" as const, dash: s.dash, marker: s.marker })),
    notes: [...(banded ? ["shaded band: the interval of each point"] : []), "ARMs solid with ● ■ markers, MDMs dashed with ▲ ◆"],
    warnings: p.warnings ?? [],
    exportName: { models: p.series.map((s) => s.model) },
    text: `${p.metric} vs ${xTitle} ${p.positions.join("/")} — ${p.series.map((s) => s.model).join(", ")}`,
  });
}
