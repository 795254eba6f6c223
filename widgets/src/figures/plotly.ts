/**
 * Plotly, bundled (no CDN, no network) and loaded lazily: the cartesian build (heatmap, scatter,
 * bar) becomes its own chunk, fetched from the extension's static folder on the first plotly view,
 * so notebooks that only show the scrubber never pay for it.
 *
 * We type only the few calls we make, instead of the full plotly typings.
 */
import { download, el } from "../dom.js";
import { base64ToBytes } from "../protocol.js";

export interface PlotlyLike {
  react(div: HTMLElement, data: object[], layout: object, config?: object): Promise<unknown>;
  purge(div: HTMLElement): void;
  toImage(div: HTMLElement, opts: { format: "png" | "svg"; width?: number; height?: number; scale?: number }): Promise<string>;
  Plots: { resize(div: HTMLElement): void };
}

let loading: Promise<PlotlyLike> | null = null;
/** Test hook: a fake plotly for jsdom. */
let override: PlotlyLike | null = null;

export function setPlotlyForTests(p: PlotlyLike | null): void {
  override = p;
  loading = null;
}

export function loadPlotly(): Promise<PlotlyLike> {
  if (override) return Promise.resolve(override);
  loading ??= import(/* webpackChunkName: "plotly" */ "plotly.js-cartesian-dist-min").then(
    (m: { default?: unknown }) => (m.default ?? m) as PlotlyLike,
  );
  return loading;
}

/**
 * Plotly renders label strings as pseudo-HTML (`<b>`, `<br>`, `<a href>`), so untrusted token
 * text is entity-escaped before it goes into ticks, hover text or titles.
 */
export function plotlyText(s: string): string {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** NaN → null (plotly draws a gap), [rows][cols] from a row-major array. */
export function rows(values: Float32Array, nRows: number, nCols: number): (number | null)[][] {
  const out: (number | null)[][] = [];
  for (let i = 0; i < nRows; i++) {
    const r: (number | null)[] = new Array(nCols);
    for (let j = 0; j < nCols; j++) {
      const v = values[i * nCols + j];
      r[j] = v === v ? v : null;
    }
    out.push(r);
  }
  return out;
}

export const PLOT_CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["sendDataToCloud"] };

export const BASE_LAYOUT = {
  margin: { l: 60, r: 20, t: 36, b: 50 },
  font: { family: "sans-serif", size: 12 },
  paper_bgcolor: "#fff",
  plot_bgcolor: "#fff",
};

/** PNG and SVG buttons that export plot divs through plotly's own renderer. */
export function exportButtons(getDivs: () => HTMLElement[], stem: () => string, plotly: PlotlyLike): HTMLElement {
  const make = (format: "png" | "svg") => {
    const b = el("button", { className: "fs-export", text: format.toUpperCase(), title: `download as ${format.toUpperCase()}` });
    b.addEventListener("click", async () => {
      const divs = getDivs();
      for (let i = 0; i < divs.length; i++) {
        const url = await plotly.toImage(divs[i], { format, scale: format === "png" ? 2 : 1 });
        const blob = dataUrlToBlob(url);
        download(blob, `${stem()}${divs.length > 1 ? `_${i + 1}` : ""}.${format}`);
      }
    });
    return b;
  };
  return el("span", { className: "fs-export-group" }, [make("png"), make("svg")]);
}

/** Common frame of a plotly view: title, subsampling note, warnings, controls, plot divs. */
export function frame(title: string, note: string, warnings: string[] | undefined): { root: HTMLElement; bar: HTMLElement } {
  const bar = el("div", { className: "fs-controls" });
  const w = warnings ?? [];
  const root = el("div", { className: "fs-figure" }, [
    el("div", { className: "fs-title", text: title }),
    bar,
    note ? el("div", { className: "fs-note", text: note }) : null,
    w.length
      ? el("details", { className: "fs-warnings" }, [
          el("summary", { text: `${w.length} warning${w.length > 1 ? "s" : ""}` }),
          ...w.map((x) => el("div", { text: x })),
        ])
      : null,
  ]);
  return { root, bar };
}

/** Decode a data: URL locally (no fetch, so nothing that looks like network access). */
export function dataUrlToBlob(url: string): Blob {
  const comma = url.indexOf(",");
  const head = url.slice(5, comma);
  const type = head.split(";")[0] || "application/octet-stream";
  const body = url.slice(comma + 1);
  if (head.endsWith(";base64")) return new Blob([base64ToBytes(body)], { type });
  return new Blob([decodeURIComponent(body)], { type });
}
