/**
 * Colour maps for the scrubber's canvas drawing: 256-entry RGB lookup tables built from the stops
 * declared once in src/protocol/colormap.ts (the same stops the kernel's images and the figure
 * widget use), and the hot paint loop.
 */
import { colormapLut, isColormap as isProtocolColormap, type Colormap } from "./protocol.js";

export type ColormapName = Colormap;

export function isColormap(name: string): name is ColormapName {
  return isProtocolColormap(name);
}

/** [256 · 3] RGB table: entry k is the colour of t = k / 255. */
export function lut(name: ColormapName): Uint8Array {
  return colormapLut(name);
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
