/**
 * Sequential colour maps (ColorBrewer 9-class anchors, linearly interpolated) as 256-entry RGB
 * lookup tables for canvas drawing and as plotly colourscales. The paper's figures use Purples
 * (temporal drift), GnBu (QK decomposition), Blues (rollout) and YlOrRd (retrieval heads).
 */

export type ColormapName = "purples" | "gnbu" | "blues" | "ylorrd" | "viridis" | "magma" | "greys" | "rdbu";

const ANCHORS: Record<ColormapName, string[]> = {
  purples: ["#fcfbfd", "#efedf5", "#dadaeb", "#bcbddc", "#9e9ac8", "#807dba", "#6a51a3", "#54278f", "#3f007d"],
  gnbu: ["#f7fcf0", "#e0f3db", "#ccebc5", "#a8ddb5", "#7bccc4", "#4eb3d3", "#2b8cbe", "#0868ac", "#084081"],
  blues: ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"],
  ylorrd: ["#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026", "#800026"],
  // The kernel's generic heatmap colormaps (src/figures/colormap.ts), same stops.
  viridis: ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#fde725"],
  magma: ["#000004", "#1c1044", "#4f127b", "#812581", "#b5367a", "#e55064", "#fb8761", "#fec287", "#fcfdbf"],
  greys: ["#ffffff", "#f0f0f0", "#d9d9d9", "#bdbdbd", "#969696", "#737373", "#525252", "#252525", "#000000"],
  rdbu: ["#053061", "#2166ac", "#4393c3", "#92c5de", "#f7f7f7", "#f4a582", "#d6604d", "#b2182b", "#67001f"],
};

export function isColormap(name: string): name is ColormapName {
  return Object.prototype.hasOwnProperty.call(ANCHORS, name);
}

function hex(c: string): [number, number, number] {
  return [parseInt(c.slice(1, 3), 16), parseInt(c.slice(3, 5), 16), parseInt(c.slice(5, 7), 16)];
}

const luts = new Map<ColormapName, Uint8Array>();

/** [256 · 3] RGB table: entry k is the colour of t = k / 255. */
export function lut(name: ColormapName): Uint8Array {
  const hit = luts.get(name);
  if (hit) return hit;
  const stops = ANCHORS[name].map(hex);
  const out = new Uint8Array(256 * 3);
  for (let k = 0; k < 256; k++) {
    const x = (k / 255) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(x));
    const f = x - i;
    for (let c = 0; c < 3; c++) out[k * 3 + c] = Math.round(stops[i][c] * (1 - f) + stops[i + 1][c] * f);
  }
  luts.set(name, out);
  return out;
}

/** Plotly colourscale with the same anchors. */
export function plotlyScale(name: ColormapName): [number, string][] {
  const stops = ANCHORS[name];
  return stops.map((c, i) => [i / (stops.length - 1), c]);
}

/** CSS colour of value v on [min, max] (NaN → transparent). */
export function cssColor(name: ColormapName, v: number, min: number, max: number): string {
  if (Number.isNaN(v)) return "transparent";
  const t = max > min ? (v - min) / (max - min) : 0;
  const k = Math.max(0, Math.min(255, Math.round(t * 255)));
  const l = lut(name);
  return `rgb(${l[k * 3]},${l[k * 3 + 1]},${l[k * 3 + 2]})`;
}

/**
 * Paint `values` ([rows, cols], row-major) into RGBA `pixels` using `lut`, min–max scaled.
 * NaN pixels get `nanRgba`. This is the hot loop of every redraw, so it works on raw arrays.
 */
export function paint(
  values: Float32Array,
  min: number,
  max: number,
  table: Uint8Array,
  pixels: Uint8ClampedArray,
  nanRgba: [number, number, number, number] = [240, 240, 240, 255],
): void {
  const k = max > min ? 255 / (max - min) : 0;
  for (let i = 0, p = 0; i < values.length; i++, p += 4) {
    const v = values[i];
    if (v !== v) {
      pixels[p] = nanRgba[0];
      pixels[p + 1] = nanRgba[1];
      pixels[p + 2] = nanRgba[2];
      pixels[p + 3] = nanRgba[3];
      continue;
    }
    let c = ((v - min) * k) | 0;
    if (c < 0) c = 0;
    else if (c > 255) c = 255;
    const t = c * 3;
    pixels[p] = table[t];
    pixels[p + 1] = table[t + 1];
    pixels[p + 2] = table[t + 2];
    pixels[p + 3] = 255;
  }
}
