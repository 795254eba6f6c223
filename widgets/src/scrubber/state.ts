/**
 * View state of the attention-step scrubber, as a pure reducer: every slider, key and timer
 * tick becomes an `Action`, and `reduce` clamps it against the data's extent. The widget only
 * renders state; tests drive this module without a DOM.
 */

/** Extent of the data the state indexes into (the largest run when several are shown). */
export interface Extent {
  /** Kept steps. */
  steps: number;
  /** Kept layers. */
  layers: number;
  /** Kept heads with per-head data (0: only the mean over heads exists). */
  heads: number;
  /** Sequence length (positions). */
  positions: number;
}

export interface ScrubberState {
  /** Index into the kept steps. */
  step: number;
  /** Index into the kept layers. */
  layer: number;
  /** Index into the kept heads, or "mean" for the mean over heads. */
  head: number | "mean";
  /** The head last chosen, restored when "mean over heads" is switched off. */
  lastHead: number;
  playing: boolean;
  /** Clicked position (its row and column are shown), or null. */
  selected: number | null;
  /** Mark floating anchors in the temporal view. */
  showAnchors: boolean;
  /**
   * Colour scale of the heat images. "linear" is the paper's min–max; one floating column often
   * takes most of the range, and "sqrt" / "log" bring out the rest of the structure.
   */
  scale: ColorScale;
}

export type ColorScale = "linear" | "sqrt" | "log";
export const COLOR_SCALES: readonly ColorScale[] = ["linear", "sqrt", "log"];

export type Action =
  | { type: "step"; value: number }
  | { type: "stepBy"; delta: number }
  | { type: "layer"; value: number }
  | { type: "layerBy"; delta: number }
  | { type: "head"; value: number }
  | { type: "headBy"; delta: number }
  | { type: "mean"; on: boolean }
  | { type: "toggleMean" }
  | { type: "play"; on: boolean }
  | { type: "togglePlay" }
  /** Timer tick while playing: next step, wrapping to the first after the last. */
  | { type: "tick" }
  | { type: "select"; position: number | null }
  | { type: "toggleAnchors" }
  | { type: "scale"; value: ColorScale }
  /** Next colour scale (linear → sqrt → log → linear). */
  | { type: "cycleScale" }
  | { type: "first" }
  | { type: "last" };

function clamp(v: number, lo: number, hi: number): number {
  if (!Number.isFinite(v)) return lo;
  return Math.max(lo, Math.min(hi, Math.round(v)));
}

export function initialState(extent: Extent): ScrubberState {
  return {
    // Open on the last step: the finished sequence is what people look at first.
    step: Math.max(0, extent.steps - 1),
    layer: 0,
    head: "mean",
    lastHead: 0,
    playing: false,
    selected: null,
    showAnchors: true,
    scale: "linear",
  };
}

export function reduce(s: ScrubberState, a: Action, e: Extent): ScrubberState {
  const lastStep = Math.max(0, e.steps - 1);
  switch (a.type) {
    case "step":
      return { ...s, step: clamp(a.value, 0, lastStep) };
    case "stepBy":
      return { ...s, step: clamp(s.step + a.delta, 0, lastStep) };
    case "first":
      return { ...s, step: 0 };
    case "last":
      return { ...s, step: lastStep };
    case "layer":
      return { ...s, layer: clamp(a.value, 0, Math.max(0, e.layers - 1)) };
    case "layerBy":
      return { ...s, layer: clamp(s.layer + a.delta, 0, Math.max(0, e.layers - 1)) };
    case "head": {
      if (e.heads === 0) return { ...s, head: "mean" };
      const h = clamp(a.value, 0, e.heads - 1);
      return { ...s, head: h, lastHead: h };
    }
    case "headBy": {
      if (e.heads === 0) return s;
      const from = s.head === "mean" ? s.lastHead : s.head;
      const h = clamp(from + (s.head === "mean" ? 0 : a.delta), 0, e.heads - 1);
      return { ...s, head: h, lastHead: h };
    }
    case "mean":
      if (a.on || e.heads === 0) return { ...s, head: "mean" };
      return { ...s, head: clamp(s.lastHead, 0, e.heads - 1) };
    case "toggleMean":
      return reduce(s, { type: "mean", on: s.head !== "mean" }, e);
    case "play":
      return { ...s, playing: a.on && e.steps > 1 };
    case "togglePlay":
      return reduce(s, { type: "play", on: !s.playing }, e);
    case "tick":
      if (!s.playing) return s;
      return { ...s, step: s.step >= lastStep ? 0 : s.step + 1 };
    case "select":
      return { ...s, selected: a.position === null ? null : clamp(a.position, 0, Math.max(0, e.positions - 1)) };
    case "toggleAnchors":
      return { ...s, showAnchors: !s.showAnchors };
    case "scale":
      return COLOR_SCALES.includes(a.value) ? { ...s, scale: a.value } : s;
    case "cycleScale":
      return { ...s, scale: COLOR_SCALES[(COLOR_SCALES.indexOf(s.scale) + 1) % COLOR_SCALES.length] };
  }
}

/**
 * Keyboard map (focus the scrubber first):
 * ←/→ step, Shift+←/→ ten steps, Home/End first/last step, ↑/↓ layer, [ / ] head,
 * m mean over heads, a anchors, c colour scale, space play/pause, Esc clear the selection.
 */
export function keyAction(key: string, shift = false): Action | null {
  switch (key) {
    case "ArrowRight":
      return { type: "stepBy", delta: shift ? 10 : 1 };
    case "ArrowLeft":
      return { type: "stepBy", delta: shift ? -10 : -1 };
    case "Home":
      return { type: "first" };
    case "End":
      return { type: "last" };
    case "ArrowUp":
      return { type: "layerBy", delta: 1 };
    case "ArrowDown":
      return { type: "layerBy", delta: -1 };
    case "]":
      return { type: "headBy", delta: 1 };
    case "[":
      return { type: "headBy", delta: -1 };
    case "m":
    case "M":
      return { type: "toggleMean" };
    case "a":
    case "A":
      return { type: "toggleAnchors" };
    case "c":
    case "C":
      return { type: "cycleScale" };
    case " ":
    case "Spacebar":
      return { type: "togglePlay" };
    case "Escape":
      return { type: "select", position: null };
    default:
      return null;
  }
}

/** Extent covering several runs (the shared sliders span the largest; each run clamps to its own). */
export function unionExtent(extents: Extent[]): Extent {
  return extents.reduce(
    (u, e) => ({
      steps: Math.max(u.steps, e.steps),
      layers: Math.max(u.layers, e.layers),
      heads: Math.max(u.heads, e.heads),
      positions: Math.max(u.positions, e.positions),
    }),
    { steps: 0, layers: 0, heads: 0, positions: 0 },
  );
}
