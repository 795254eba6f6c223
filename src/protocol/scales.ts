/**
 * Scale rules that the kernel's static renderer (src/figures) and the JupyterLab widget
 * (widgets/src) must apply identically: which colormap and domain a quantity gets, round tick
 * values, and how a line shows its model's paradigm. Both sides compile this file as it is, so a
 * rule written here cannot differ between the widget and the static image.
 */
import type { Colormap } from "./colormap.js";

/** A colour scale: the colormap and the value domain [low, high] it spans (outside: clamped). */
export interface ColourScale {
  colormap: Colormap;
  domain: [number, number];
  /** True for a diverging scale centred on 0 (symmetric domain). */
  diverging: boolean;
}

/**
 * The colour scale of `values`. A signed quantity (a score, cos θ, a difference) gets the
 * diverging map centred on 0 over ±max|v|, so zero is the map's neutral middle and equal
 * magnitudes of either sign get equally strong colours; a non-negative quantity gets `sequential`
 * over [min, max]. Non-finite values are ignored; an empty or constant input still gets a
 * non-empty domain.
 */
export function colourScaleFor(values: ArrayLike<number>, signed: boolean, sequential: Colormap = "blues"): ColourScale {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo > hi) [lo, hi] = [0, 1];
  if (signed) {
    const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    return { colormap: "rdbu", domain: [-m, m], diverging: true };
  }
  if (hi === lo) hi = lo + 1;
  return { colormap: sequential, domain: [lo, hi], diverging: false };
}

/** The three maps of the QK decomposition view; score and cos θ are signed, the norm product is not. */
export const QK_QUANTITIES = [
  { key: "score", title: "score q·k", signed: true },
  { key: "cos", title: "cos θ", signed: true },
  { key: "normProduct", title: "‖q‖·‖k‖", signed: false },
] as const;
export type QkQuantity = (typeof QK_QUANTITIES)[number]["key"];

/** Colour scale of one QK map (the same call in the widget and in the static image). */
export function qkColourScale(key: QkQuantity, values: ArrayLike<number>): ColourScale {
  const q = QK_QUANTITIES.find((x) => x.key === key)!;
  // the paper's QK figure draws the (non-negative) norm product in GnBu
  return colourScaleFor(values, q.signed, "gnbu");
}

/**
 * About `count` round tick values (1, 2 or 5 × 10^k apart) covering [lo, hi]: the first at or
 * below lo, the last at or above hi, or only those inside [lo, hi] when `inside`.
 */
export function niceTicks(lo: number, hi: number, count = 5, inside = false): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((f) => f * mag >= raw) ?? 10) * mag;
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  const out: number[] = [];
  for (let k = first; k <= last; k++) {
    // k·step, rounded to the step's decimals so 0.1 × 3 prints as 0.3
    const v = Number((k * step).toFixed(Math.max(0, -Math.floor(Math.log10(step)))));
    if (!inside || (v >= lo - step * 1e-9 && v <= hi + step * 1e-9)) out.push(v === 0 ? 0 : v);
  }
  return out;
}

/**
 * How a line shows its model's paradigm, besides each model's colour: ARMs solid with filled round
 * or square markers, MDMs dashed with triangle or diamond markers. Two cues, so the paradigms stay
 * apart in greyscale print and for readers who cannot tell the colours apart; `svg` is the
 * stroke-dasharray, `markers` are used in turn by the models of that paradigm.
 */
export const PARADIGM_DASH: Record<
  "arm" | "mdm",
  { svg: string | undefined; markers: readonly ("circle" | "square" | "triangle" | "diamond")[] }
> = {
  arm: { svg: undefined, markers: ["circle", "square"] },
  mdm: { svg: "6 4", markers: ["triangle", "diamond"] },
};

/**
 * The paradigm of a series by its label: "ARM"/"MDM" when the label says so (any case), else by
 * model family in the name (LLaDA, Dream, "diffusion" → MDM; anything else, e.g. Llama, Qwen,
 * SmolLM2's "causal" twin → ARM).
 */
export function paradigmOf(label: string | undefined): "arm" | "mdm" {
  const s = label ?? "";
  if (/\bmdm\b/i.test(s)) return "mdm";
  if (/\barm\b/i.test(s)) return "arm";
  return /mdm|diffusion|llada|dream/i.test(s) ? "mdm" : "arm";
}

/** Line style of the `k`-th series of one figure that belongs to `paradigm` (dash and marker). */
export function paradigmStyle(
  paradigm: "arm" | "mdm",
  k: number,
): { dash: string | undefined; marker: "circle" | "square" | "triangle" | "diamond" } {
  const st = PARADIGM_DASH[paradigm];
  return { dash: st.svg, marker: st.markers[k % st.markers.length] };
}

/**
 * Model colours (by family name), then a fallback palette; "#rrggbb". The paper's hues, darkened
 * where a thin line on white was hard to see: every colour has a contrast of at least 3:1 against
 * white (WCAG's minimum for graphics; `contrastOnWhite`, checked in test/protocol/line-styles.test.ts).
 */
const MODEL_COLOURS: [RegExp, string][] = [
  [/llama/i, "#4e659b"],
  [/qwen/i, "#7a67a6"],
  [/llada/i, "#c8671a"],
  [/dream/i, "#b6766c"],
];
const PALETTE = ["#1f77b4", "#d95f02", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#c2379a", "#7f7f7f"];
/** Every colour `modelColour` can return (for the contrast test). */
export const LINE_COLOURS: readonly string[] = [...MODEL_COLOURS.map(([, c]) => c), ...PALETTE];

/** The colour of model `name`, the i-th series of its figure. */
export function modelColour(name: string, i: number): string {
  for (const [re, c] of MODEL_COLOURS) if (re.test(name)) return c;
  return PALETTE[i % PALETTE.length];
}

/** WCAG contrast ratio of "#rrggbb" against white (1 = invisible, 21 = black). */
export function contrastOnWhite(hex: string): number {
  const lin = [1, 3, 5]
    .map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  const l = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
  return 1.05 / (l + 0.05);
}

/**
 * Title and subtitle of the absorption figure: a short title (the payload's own, if it has one) and
 * the rule as subtitle lines, one per rule ("upstream: first-token; mean+3σ" → two lines, as the
 * analysis joins the rules of ARMs and MDMs when they differ) so a
 * long rule wraps instead of running off the figure.
 */
export function absorptionTitles(p: { title?: string; rule: string }): { title: string; subtitle: string[] } {
  const rules = p.rule.split(/;\s*/).filter((r) => r.length > 0);
  return { title: p.title ?? "Absorption rate per layer", subtitle: rules.map((r) => `rule: ${r}`) };
}
