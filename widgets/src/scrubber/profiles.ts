/**
 * Row and column profiles of the selected token: two small line plots over key / query positions,
 * drawn as SVG (DOM, so their numbers are text a reader and a test can find), each with its axes,
 * ticks, the largest value and where it is. Token text enters only through textContent.
 */
import { tokenLabel } from "../dom.js";
import { niceTicks } from "../protocol.js";

const NS = "http://www.w3.org/2000/svg";

function svgEl<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  text?: string,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmt(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  return a >= 100 || a < 0.001 ? v.toExponential(1) : String(Number(v.toPrecision(2)));
}

export interface ProfileSeries {
  /** Values over positions (NaN = no value). */
  values: Float32Array | null;
  colour: string;
  /** "row: what pos 12 attends to". */
  title: string;
  /** "key position" / "query position". */
  xLabel: string;
}

/** Draw the profiles into `svg` (replacing what it held): one plot per series, stacked. */
export function drawProfilePlots(svg: SVGSVGElement, width: number, height: number, series: ProfileSeries[], tokens: string[]): void {
  svg.replaceChildren();
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const left = 38;
  const right = 8;
  const each = height / Math.max(1, series.length);
  series.forEach((s, k) => {
    const top = k * each + 13;
    const ph = each - 13 - 16;
    const pw = width - left - right;
    const g = svgEl("g", { class: "fs-profile" });
    g.dataset.profile = k === 0 ? "row" : "column";
    g.appendChild(
      svgEl("text", { x: left, y: top - 3, "font-size": 10, fill: s.colour, class: "fs-profile-title" }, `${s.title} (x: ${s.xLabel})`),
    );
    // axes
    g.appendChild(svgEl("line", { x1: left, y1: top, x2: left, y2: top + ph, stroke: "#888" }));
    g.appendChild(svgEl("line", { x1: left, y1: top + ph, x2: left + pw, y2: top + ph, stroke: "#888" }));
    const vals = s.values;
    if (!vals || vals.length === 0) {
      g.appendChild(svgEl("text", { x: left + 6, y: top + ph / 2, "font-size": 10, fill: "#888" }, "no full map at this step"));
      svg.appendChild(g);
      return;
    }
    const n = vals.length;
    let max = 0;
    let arg = 0;
    for (let j = 0; j < n; j++) if (vals[j] > max) [max, arg] = [vals[j], j];
    const ymax = max > 0 ? max : 1;
    const x = (j: number) => left + ((j + 0.5) / n) * pw;
    const y = (v: number) => top + ph - (Math.max(0, v) / ymax) * ph;
    // y ticks: 0 and the maximum, a round value between when there is room
    const yt = [0, ...niceTicks(0, ymax, 2, true).filter((v) => v > 0 && v < ymax * 0.8), ymax];
    for (const v of yt) {
      g.appendChild(svgEl("line", { x1: left - 3, y1: y(v), x2: left, y2: y(v), stroke: "#888" }));
      g.appendChild(svgEl("text", { x: left - 5, y: y(v) + 3, "font-size": 9, "text-anchor": "end", class: "fs-profile-ytick" }, fmt(v)));
    }
    // x ticks: first, last and a few round positions
    const xt = [...new Set([0, ...niceTicks(0, n - 1, 4, true).filter((v) => Number.isInteger(v) && v > 0 && v < n - 1), n - 1])];
    for (const j of xt) {
      g.appendChild(svgEl("line", { x1: x(j), y1: top + ph, x2: x(j), y2: top + ph + 3, stroke: "#888" }));
      g.appendChild(
        svgEl("text", { x: x(j), y: top + ph + 12, "font-size": 9, "text-anchor": "middle", class: "fs-profile-xtick" }, String(j)),
      );
    }
    let d = "";
    for (let j = 0; j < n; j++) {
      const v = vals[j];
      if (v !== v) continue;
      d += `${d ? "L" : "M"}${x(j).toFixed(1)},${y(v).toFixed(1)}`;
    }
    g.appendChild(svgEl("path", { d, fill: "none", stroke: s.colour, "stroke-width": 1.2 }));
    // the largest value, where it is
    g.appendChild(svgEl("circle", { cx: x(arg), cy: y(max), r: 2.5, fill: s.colour }));
    const label = svgEl(
      "text",
      {
        x: Math.min(left + pw - 2, Math.max(left + 2, x(arg))),
        y: Math.max(top + 8, y(max) - 4),
        "font-size": 9,
        "text-anchor": x(arg) > left + pw / 2 ? "end" : "start",
        class: "fs-profile-max",
      },
      `max ${fmt(max)} at ${arg} "${tokenLabel(tokens[arg] ?? "", 12)}"`,
    );
    g.appendChild(label);
    svg.appendChild(g);
  });
}

export function profileSvg(width: number, height: number): SVGSVGElement {
  const s = svgEl("svg", { class: "fs-profiles", width, height });
  return s;
}
