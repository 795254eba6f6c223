/**
 * Axes, colour bar and legend of the scrubber's panels, as DOM (text stays text: selectable,
 * searchable, read by the browser tests): token labels on position axes (thinned to fit by the
 * shared rule in protocol/axis-labels.ts, the full token on hover), step ticks on the temporal
 * view, a colour bar naming its quantity and scale, and the legend of the token strip's colours and
 * anchor marks. Untrusted token text enters only through textContent / title.
 */
import { el, tokenLabel } from "../dom.js";
import { lut } from "../colormap.js";
import { indexTicks, niceTicks, thinLabels } from "../protocol.js";
import { COLORS } from "./draw.js";
import type { ColorScale } from "./state.js";

/** Minimum distance between two printed token labels (px; labels are rotated, so about a line height). */
export const TOKEN_LABEL_SPACING = 11;

/**
 * Token labels along a horizontal axis of `width` px over `tokens` cells, rotated so long tokens fit;
 * `always` cells (the selected token) are labelled whatever the thinning. Returns the axis element.
 */
export function tokenAxis(
  axis: HTMLElement,
  tokens: string[],
  width: number,
  always: number[] = [],
  first = 0,
  anchors: number[] = [],
): void {
  axis.replaceChildren();
  const n = tokens.length;
  const cell = width / Math.max(1, n);
  // anchors (floating columns at this step and layer) are labelled whatever the thinning
  for (const j of thinLabels(n, width, TOKEN_LABEL_SPACING, [...always, ...anchors])) {
    const t = tokens[j] ?? "";
    const s = el("span", { className: "fs-tick fs-token-tick", text: tokenLabel(t, 12), title: `${first + j}: ${t}` });
    s.style.left = `${(j + 0.5) * cell}px`;
    s.dataset.pos = String(first + j);
    if (always.includes(j)) s.classList.add("fs-tick-selected");
    else if (anchors.includes(j)) s.classList.add("fs-tick-anchor");
    axis.appendChild(s);
  }
}

/** Token labels down a vertical axis of `height` px (one per row, thinned), right- or left-aligned. */
export function tokenColumn(axis: HTMLElement, tokens: string[], height: number, always: number[] = [], highlight: number[] = []): void {
  axis.replaceChildren();
  const n = tokens.length;
  const cell = height / Math.max(1, n);
  for (const j of thinLabels(n, height, TOKEN_LABEL_SPACING, [...always, ...highlight])) {
    const t = tokens[j] ?? "";
    const s = el("span", { className: "fs-tick fs-token-row", text: tokenLabel(t, 14), title: `${j}: ${t}` });
    s.style.top = `${(j + 0.5) * cell}px`;
    s.dataset.pos = String(j);
    if (always.includes(j)) s.classList.add("fs-tick-selected");
    else if (highlight.includes(j)) s.classList.add("fs-tick-highlight");
    axis.appendChild(s);
  }
}

/** Step numbers down the temporal view's left side: round values, the first and last always. */
export function stepAxis(axis: HTMLElement, steps: number[], height: number): void {
  axis.replaceChildren();
  const cell = height / Math.max(1, steps.length);
  for (const i of indexTicks(steps, Math.max(2, Math.floor(height / 22)))) {
    const s = el("span", { className: "fs-tick fs-step-tick", text: String(steps[i]) });
    s.style.top = `${(i + 0.5) * cell}px`;
    axis.appendChild(s);
  }
}

/** The words a colour bar names its quantity with, for a scale. */
export function scaleQuantity(quantity: string, scale: ColorScale): string {
  return scale === "linear" ? quantity : scale === "sqrt" ? `√(${quantity})` : `log₁₀(${quantity})`;
}

/**
 * A vertical colour bar in the Purples map over [min, max] (the values drawn, after the scale), with
 * round ticks and its quantity as a title; returns the root to place beside a heat image.
 */
export class ColourBar {
  readonly root: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly ticks: HTMLElement;
  private readonly label: HTMLElement;
  private key = "";

  constructor(private readonly height: number) {
    this.canvas = el("canvas", { className: "fs-colorbar-ramp" });
    this.canvas.width = 10;
    this.canvas.height = Math.max(1, height);
    this.canvas.style.width = "10px";
    this.canvas.style.height = `${height}px`;
    const ctx = this.canvas.getContext("2d");
    if (ctx) {
      const table = lut("purples");
      const img = ctx.createImageData(10, this.canvas.height);
      for (let y = 0; y < this.canvas.height; y++) {
        const k = Math.round(255 * (1 - y / Math.max(1, this.canvas.height - 1)));
        for (let x = 0; x < 10; x++) {
          const p = (y * 10 + x) * 4;
          img.data[p] = table[k * 3];
          img.data[p + 1] = table[k * 3 + 1];
          img.data[p + 2] = table[k * 3 + 2];
          img.data[p + 3] = 255;
        }
      }
      ctx.putImageData(img, 0, 0);
    }
    this.ticks = el("div", { className: "fs-colorbar-ticks" });
    this.ticks.style.height = `${height}px`;
    this.label = el("div", { className: "fs-colorbar-label" });
    // never taller than its bar (a long quantity would push the panel's next row down)
    this.label.style.maxHeight = `${height}px`;
    this.root = el("div", { className: "fs-colorbar" }, [this.canvas, this.ticks, this.label]);
  }

  /** Show the domain [min, max] of `quantity` (already scaled). */
  update(min: number, max: number, quantity: string): void {
    const key = `${min}:${max}:${quantity}`;
    if (key === this.key) return;
    this.key = key;
    this.label.textContent = quantity;
    this.label.title = quantity;
    this.ticks.replaceChildren();
    const span = max > min ? max - min : 1;
    const y = (v: number) => (1 - (v - min) / span) * this.height;
    // The ends of the domain always (a reader needs the range), round values between them when
    // they are at least 12 px from an end.
    const round = max > min ? niceTicks(min, max, Math.max(2, Math.floor(this.height / 28)), true) : [];
    const vals = [max, ...round.filter((v) => y(v) > 12 && this.height - y(v) > 12).reverse(), ...(max > min ? [min] : [])];
    for (const v of vals) {
      const s = el("span", { className: "fs-tick fs-colorbar-tick", text: formatTick(v) });
      s.style.top = `${y(v)}px`;
      this.ticks.appendChild(s);
    }
  }
}

function formatTick(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  return a >= 1000 || a < 0.001 ? v.toExponential(0) : String(Number(v.toPrecision(3)));
}

/** Legend of the token strip and the anchor marks (what each colour means at the current step). */
export function stripLegend(causal: boolean): HTMLElement {
  const item = (color: string, text: string, mark = false) =>
    el("span", { className: "fs-legend-item" }, [
      (() => {
        const sw = el("span", { className: mark ? "fs-swatch fs-swatch-mark" : "fs-swatch" });
        sw.style.background = color;
        return sw;
      })(),
      el("span", { text }),
    ]);
  return el("div", { className: "fs-strip-legend", title: "token strip: each cell is one position at the current step" }, [
    el("span", { className: "fs-legend-title", text: "token strip:" }),
    item(COLORS.prompt, "prompt"),
    item(COLORS.masked, causal ? "not generated yet" : "masked"),
    item(COLORS.justUnmasked, causal ? "generated at this step" : "unmasked at this step"),
    item(COLORS.unmasked, causal ? "generated earlier" : "unmasked earlier"),
    item(COLORS.anchor, "floating anchor (bar above the cell; orange cells in the heat map)", true),
  ]);
}
