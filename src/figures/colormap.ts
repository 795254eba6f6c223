/**
 * Colormaps for kernel-side fallbacks, as evenly spaced stops interpolated linearly in sRGB.
 * Nine stops per map are visually indistinguishable from the full 256-entry tables at the
 * sizes a notebook fallback is drawn, and keep this file readable.
 *
 * Sequential maps (viridis, magma, blues, greys) are for non-negative quantities such as
 * attention mass; the diverging map (rdbu) is for signed quantities such as differences between
 * steps, centred on 0 when the domain is automatic.
 */

import type { Colormap } from "../protocol/heatmap.js";

// The names are part of the kernel ↔ widget contract (a HeatmapSpec carries one), so they live in protocol/.
export { COLORMAPS, type Colormap } from "../protocol/heatmap.js";

/** Whether a colormap is diverging (its automatic domain is symmetric around 0). */
export function isDiverging(name: Colormap): boolean {
  return name === "rdbu";
}

const STOPS: Record<Colormap, readonly string[]> = {
  // matplotlib viridis sampled at t = 0, 1/8, …, 1
  viridis: ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#fde725"],
  // matplotlib magma sampled at t = 0, 1/8, …, 1
  magma: ["#000004", "#1c1044", "#4f127b", "#812581", "#b5367a", "#e55064", "#fb8761", "#fec287", "#fcfdbf"],
  // ColorBrewer Blues (9 classes), light → dark
  blues: ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"],
  // white → black
  greys: ["#ffffff", "#f0f0f0", "#d9d9d9", "#bdbdbd", "#969696", "#737373", "#525252", "#252525", "#000000"],
  // ColorBrewer RdBu (9 classes) reversed: low = blue, 0 = near-white, high = red (matplotlib RdBu_r)
  rdbu: ["#053061", "#2166ac", "#4393c3", "#92c5de", "#f7f7f7", "#f4a582", "#d6604d", "#b2182b", "#67001f"],
};

const PARSED: Record<string, [number, number, number][]> = {};

function stops(name: Colormap): [number, number, number][] {
  let p = PARSED[name];
  if (!p) {
    p = STOPS[name].map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number]);
    PARSED[name] = p;
  }
  return p;
}

/** Colour for t in [0, 1] (clamped) as "#rrggbb". */
export function colorAt(name: Colormap, t: number): string {
  const s = stops(name);
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (s.length - 1);
  const i = Math.min(s.length - 2, Math.floor(x));
  const f = x - i;
  const a = s[i];
  const b = s[i + 1];
  let out = "#";
  for (let c = 0; c < 3; c++) {
    out += Math.round(a[c] + (b[c] - a[c]) * f)
      .toString(16)
      .padStart(2, "0");
  }
  return out;
}

/**
 * Perceived lightness (0 dark … 1 light) of "#rrggbb", used to pick black or white text on a cell.
 */
export function lightness(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
