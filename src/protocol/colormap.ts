/**
 * The colormaps of every floatscope figure, defined once: the kernel's static renderer, its PNG
 * exports and the JupyterLab widget (which compiles this folder as it is) all read these stops,
 * so a map cannot differ between the widget and the saved image.
 *
 * Each map is nine evenly spaced stops interpolated linearly in sRGB. The paper's figures use
 * Purples (temporal drift), GnBu (QK norm product), Blues (rollout) and YlOrRd (retrieval heads);
 * signed quantities (scores, cos θ, differences) use the diverging RdBu, centred on 0.
 */

/** Names accepted wherever a figure takes a colormap. */
export const COLORMAPS = ["viridis", "magma", "blues", "greys", "rdbu", "purples", "gnbu", "ylorrd"] as const;
export type Colormap = (typeof COLORMAPS)[number];

const STOPS: Record<Colormap, readonly string[]> = {
  // matplotlib viridis / magma sampled at t = 0, 1/8, …, 1
  viridis: ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#fde725"],
  magma: ["#000004", "#1c1044", "#4f127b", "#812581", "#b5367a", "#e55064", "#fb8761", "#fec287", "#fcfdbf"],
  // ColorBrewer 9-class sequential maps, light → dark
  blues: ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"],
  purples: ["#fcfbfd", "#efedf5", "#dadaeb", "#bcbddc", "#9e9ac8", "#807dba", "#6a51a3", "#54278f", "#3f007d"],
  gnbu: ["#f7fcf0", "#e0f3db", "#ccebc5", "#a8ddb5", "#7bccc4", "#4eb3d3", "#2b8cbe", "#0868ac", "#084081"],
  ylorrd: ["#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026", "#800026"],
  greys: ["#ffffff", "#f0f0f0", "#d9d9d9", "#bdbdbd", "#969696", "#737373", "#525252", "#252525", "#000000"],
  // ColorBrewer RdBu (9 classes) reversed: low = blue, 0 = near-white, high = red (matplotlib RdBu_r)
  rdbu: ["#053061", "#2166ac", "#4393c3", "#92c5de", "#f7f7f7", "#f4a582", "#d6604d", "#b2182b", "#67001f"],
};

export function isColormap(name: unknown): name is Colormap {
  return typeof name === "string" && (COLORMAPS as readonly string[]).includes(name);
}

/** Whether a colormap is diverging (its automatic domain is symmetric around 0). */
export function isDiverging(name: Colormap): boolean {
  return name === "rdbu";
}

/** The nine stops of a map, "#rrggbb", low → high. */
export function colormapStops(name: Colormap): readonly string[] {
  return STOPS[name];
}

function rgbOf(hex: string): [number, number, number] {
  return [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)];
}

/** Colour of t ∈ [0, 1] (clamped; NaN → 0) as [r, g, b] bytes. */
export function rgbAt(name: Colormap, t: number): [number, number, number] {
  const s = STOPS[name];
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (s.length - 1);
  const i = Math.min(s.length - 2, Math.floor(x));
  const f = x - i;
  const a = rgbOf(s[i]);
  const b = rgbOf(s[i + 1]);
  return [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * f)) as [number, number, number];
}

/** Colour of t ∈ [0, 1] (clamped) as "#rrggbb". */
export function colorAt(name: Colormap, t: number): string {
  return (
    "#" +
    rgbAt(name, t)
      .map((v) => v.toString(16).padStart(2, "0"))
      .join("")
  );
}

const LUTS = new Map<Colormap, Uint8Array>();

/** [256 · 3] RGB table: entry k is the colour of t = k / 255 (for raster drawing). */
export function colormapLut(name: Colormap): Uint8Array {
  let t = LUTS.get(name);
  if (!t) {
    t = new Uint8Array(256 * 3);
    for (let k = 0; k < 256; k++) t.set(rgbAt(name, k / 255), k * 3);
    LUTS.set(name, t);
  }
  return t;
}

/** Perceived lightness (0 dark … 1 light) of "#rrggbb", to pick black or white text on a cell. */
export function lightness(hex: string): number {
  const [r, g, b] = rgbOf(hex).map((v) => v / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
