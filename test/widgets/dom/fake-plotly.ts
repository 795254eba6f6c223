/** A stand-in for plotly that records every `react` call, for the widget view tests. */
import { afterEach, beforeEach } from "vitest";
import { setPlotlyForTests, type PlotlyLike } from "../../../widgets/src/figures/plotly.js";

export interface PlotlyCall {
  div: HTMLElement;
  data: Record<string, any>[];
  layout: Record<string, any>;
}

/** `calls` fills as views draw; clear it with `calls.length = 0`. */
export function fakePlotly(): { calls: PlotlyCall[]; plotly: PlotlyLike } {
  const calls: PlotlyCall[] = [];
  const plotly: PlotlyLike = {
    async react(div, data, layout) {
      calls.push({ div, data: data as Record<string, any>[], layout: layout as Record<string, any> });
    },
    purge() {},
    async toImage() {
      return "data:image/svg+xml,%3Csvg%2F%3E";
    },
    Plots: { resize() {} },
  };
  return { calls, plotly };
}

/** Use the stand-in for every test of the calling file (cleared before each; the DOM emptied after). */
export function useFakePlotly(): PlotlyCall[] {
  const { calls, plotly } = fakePlotly();
  beforeEach(() => {
    calls.length = 0;
    setPlotlyForTests(plotly);
  });
  afterEach(() => {
    setPlotlyForTests(null);
    document.body.textContent = "";
  });
  return calls;
}
