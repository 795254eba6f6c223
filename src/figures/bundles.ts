/**
 * Payload / analysis spec → MIME bundle: our vendor type (the JSON the widget renders), one static
 * image (PNG or SVG drawn here) and a one-line text/plain, for every view kind the widgets know.
 * `display/figures.ts` routes `show(spec)` here by `kind`.
 *
 * @example
 *   const { spec } = qkDecomposition(trace, { layers: [1, 11] });
 *   show(spec);   // QK widget in JupyterLab; PNG of the three heatmaps on GitHub
 */
import { DisplayError, FloatscopeError } from "../util/errors.js";
import { heatmap, renderHeatmapSvg } from "./heatmap.js";
import { heatPanelRaster, linesSvg } from "./fallbacks.js";
import { framedRasterSvg } from "./framed.js";
import { colorAt } from "./colormap.js";
import {
  MIME_ABSORPTION,
  MIME_DISTRACTOR,
  MIME_QK,
  MIME_RETRIEVAL,
  MIME_ROLLOUT,
  MIME_SCRUBBER,
  decodeArray,
  decodeInt32,
  describeSubsampling,
  PayloadError,
  type AbsorptionPayload,
  type DistractorPayload,
  type FloatscopePayload,
  type QkPayload,
  type RetrievalPayload,
  type RolloutPayload,
  type ScrubberPayload,
} from "../protocol/payloads.js";
import { MIME_DRIFT, MIME_TOKEN_TYPES, type DriftSpec, type TokenTypesSpec } from "../protocol/specs.js";
import { absorptionTitles, modelColour, PARADIGM_DASH, paradigmOf, QK_QUANTITIES, qkColourScale } from "../protocol/scales.js";
import { describeScrubber } from "./scrubber.js";
import { scrubberSvg } from "./scrubber-svg.js";

export interface FigureBundle {
  "text/plain": string;
  [mime: string]: unknown;
}

export type ViewPayload = FloatscopePayload | DriftSpec | TokenTypesSpec;

/** Kinds `payloadBundle` handles, with their MIME types. */
export const VIEW_MIME: Record<ViewPayload["kind"], string> = {
  scrubber: MIME_SCRUBBER,
  qk: MIME_QK,
  absorption: MIME_ABSORPTION,
  retrieval: MIME_RETRIEVAL,
  rollout: MIME_ROLLOUT,
  distractor: MIME_DISTRACTOR,
  drift: MIME_DRIFT,
  "token-types": MIME_TOKEN_TYPES,
};

function suffix(p: { subsampled?: { axis: string; kept: number; of: number; how: string }[] }): string {
  const s = describeSubsampling(p.subsampled ?? []);
  return s ? ` (${s})` : "";
}

function qkBundle(p: QkPayload): FigureBundle {
  const first = p.panels[0];
  const words = (from: number, n: number) => Array.from({ length: n }, (_, i) => p.tokens[from + i] ?? String(from + i));
  const panels = QK_QUANTITIES.map(({ key, title }) => {
    const [rows, cols] = first[key].shape;
    const values = decodeArray(first[key], key);
    // The same scale rule as the widget (protocol/scales.ts): signed maps diverge around 0.
    const scale = qkColourScale(key, values);
    const r = heatPanelRaster({ values, rows, cols, colormap: scale.colormap, domain: scale.domain }, 240);
    return {
      ...r,
      rows,
      cols,
      title,
      xLabels: words(first.start, cols),
      yLabels: key === "score" ? words(first.start, rows) : undefined,
      marks: first.anchors.map((f) => f - first.start),
      colour: (t: number) => colorAt(scale.colormap, t),
      valueLabel: title,
    };
  });
  const layers = p.panels.map((x) => x.layer).join(", ");
  const head = first.head === undefined ? "mean over heads" : `head ${first.head}`;
  const svg = framedRasterSvg({
    title: p.title ?? `QK decomposition · ${p.model} · layer ${first.layer}, ${head}`,
    panels,
    direction: "row",
    xTitle: "key (token)",
    yTitle: "query (token)",
    colour: (t) => colorAt("blues", t),
    valueLabel: "per panel",
    note: "red = floating keys; score and cos θ on a diverging scale centred on 0 (±max |value|), each panel its own range",
  });
  return {
    [MIME_QK]: p,
    "image/svg+xml": svg,
    "text/plain":
      `QK decomposition — ${p.model}: ${p.panels.length} panel(s), layers ${layers}; static image: score, cos θ, norm product of layer ${first.layer}, ` +
      `floating positions ${first.anchors.join(", ") || "none"} marked in red${suffix(p)}`,
  };
}

function absorptionBundle(p: AbsorptionPayload): FigureBundle {
  const { title, subtitle } = absorptionTitles(p);
  const svg = linesSvg({
    title,
    subtitle,
    xTitle: "Layer Index",
    yTitle: "Absorption Rate (%)",
    series: p.series.map((s, i) => ({
      name: `${s.model} (${s.paradigm})`,
      color: modelColour(s.model, i),
      dash: PARADIGM_DASH[paradigmOf(s.paradigm)].svg,
      x: s.layers,
      y: s.mean,
      lo: s.mean.map((m, k) => m - (s.std[k] ?? 0)),
      hi: s.mean.map((m, k) => m + (s.std[k] ?? 0)),
    })),
  });
  const peaks = p.series.map((s) => `${s.model} max ${Math.max(...s.mean).toFixed(1)}%`).join(", ");
  return { [MIME_ABSORPTION]: p, "image/svg+xml": svg, "text/plain": `Absorption rate per layer (${p.rule}) — ${peaks}${suffix(p)}` };
}

function retrievalBundle(p: RetrievalPayload): FigureBundle {
  const m = p.models[0];
  const [L, H] = m.scores.shape;
  const v = decodeArray(m.scores, "scores");
  const rows = Array.from({ length: L }, (_, l) => Array.from(v.subarray(l * H, (l + 1) * H)));
  const spec = heatmap({
    title: `Retrieval heads · ${m.model}`,
    subtitle: p.models.length > 1 ? `first of ${p.models.length} models; all in the widget` : undefined,
    xTitle: "head",
    yTitle: "layer",
    valueLabel: `retrieval score (${p.normalisation})`,
    xLabels: Array.from({ length: H }, (_, h) => h),
    yLabels: Array.from({ length: L }, (_, l) => l),
    values: rows,
    colormap: "magma",
    domain: [0, 1],
  });
  let best = 0;
  for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
  return {
    [MIME_RETRIEVAL]: p,
    "image/svg+xml": renderHeatmapSvg(spec),
    "text/plain": `Retrieval heads — ${p.models.map((x) => x.model).join(", ")}; top head of ${m.model}: layer ${Math.floor(best / H)} head ${best % H} (${v[best].toFixed(3)})${suffix(p)}`,
  };
}

function rolloutBundle(p: RolloutPayload): FigureBundle {
  const R = p.regions.length;
  const v = decodeArray(p.matrix, "matrix");
  const spec = heatmap({
    title: `Region rollout · ${p.model}${p.condition ? ` · ${p.condition}` : ""}`,
    xTitle: "to region",
    yTitle: "from region",
    xLabels: p.regions,
    yLabels: p.regions,
    values: Array.from({ length: R }, (_, r) => Array.from(v.subarray(r * R, (r + 1) * R))),
    colormap: "blues",
  });
  let top = 0;
  for (let c = 1; c < R; c++) if (v[c] > v[top]) top = c;
  return {
    [MIME_ROLLOUT]: p,
    "image/svg+xml": renderHeatmapSvg(spec),
    "text/plain": `Region rollout — ${p.model}: ${R} regions, largest column ${JSON.stringify(p.regions[top])} (${v[top].toFixed(3)} from ${JSON.stringify(p.regions[0])})${suffix(p)}`,
  };
}

function distractorBundle(p: DistractorPayload): FigureBundle {
  const svg = linesSvg({
    title: p.title ?? `${p.metric} vs ${(p.xTitle ?? "gold document position").toLowerCase()}`,
    xTitle: p.xTitle ?? "Gold document position",
    yTitle: p.metric,
    series: p.series.map((s, i) => ({ name: s.model, color: modelColour(s.model, i), x: p.positions, y: s.values, lo: s.lo, hi: s.hi })),
  });
  return {
    [MIME_DISTRACTOR]: p,
    "image/svg+xml": svg,
    "text/plain": `${p.metric} vs ${p.xTitle ?? "gold position"} ${p.positions.join("/")} — ${p.series.map((s) => s.model).join(", ")}${suffix(p)}`,
  };
}

function driftBundle(p: DriftSpec): FigureBundle {
  const [S, N] = p.heat.shape;
  const anchors = decodeArray(p.anchors, "anchors");
  const hi: number[] = [];
  for (let i = 0; i < anchors.length; i++) if (anchors[i] > 0.5) hi.push(i);
  const r = heatPanelRaster({ values: decodeArray(p.heat, "heat"), rows: S, cols: N, colormap: "blues", highlight: hi }, 480);
  const svg = framedRasterSvg({
    title: p.title ?? `Temporal drift · ${p.model} · layer${p.layers.length > 1 ? "s" : ""} ${p.layers.join(", ")}`,
    panels: [{ ...r, rows: S, cols: N, xLabels: p.tokens, yLabels: p.steps.map((s) => `step ${s}`) }],
    direction: "row",
    xTitle: "key position (token)",
    yTitle: "denoising step",
    colour: (t) => colorAt("blues", t),
    valueLabel: "received",
    note: `orange = floating anchor (${p.rule}); grey = position absent at that step`,
  });
  return {
    [MIME_DRIFT]: p,
    "image/svg+xml": svg,
    "text/plain": `Temporal drift — ${p.model}, layers ${p.layers.join(", ")}: ${S} steps × ${N} positions, ${hi.length} anchor cells, ${p.tracks.length} anchor tracks${suffix(p)}`,
  };
}

function tokenTypesBundle(p: TokenTypesSpec): FigureBundle {
  const series = p.types.map((t, i) => ({
    name: t,
    color: modelColour(t, i + 4),
    x: p.bands.map((_, b) => b),
    y: p.bands.map((b) => 100 * (b.shares[i] ?? 0)),
  }));
  const svg = linesSvg({
    title: `Floating-token types · ${p.model}`,
    xTitle: `layer band (${p.bands.map((b) => b.band).join(", ")})`,
    yTitle: "share (%)",
    series,
  });
  return {
    [MIME_TOKEN_TYPES]: p,
    "image/svg+xml": svg,
    "text/plain": `Floating-token types — ${p.model}: ${p.types.join(", ")} over ${p.bands.length} layer bands${suffix(p)}`,
  };
}

function scrubberBundle(p: ScrubberPayload): FigureBundle {
  decodeInt32(p.runs[0].anchors, "anchors"); // validate before drawing
  return { [MIME_SCRUBBER]: p, "image/svg+xml": scrubberSvg(p), "text/plain": describeScrubber(p) };
}

/**
 * The MIME bundle of any widget payload or analysis spec. A malformed payload (hand-written JSON,
 * a truncated spec) fails here, in the cell that showed it, with a DisplayError naming the kind.
 */
export function payloadBundle(p: ViewPayload): FigureBundle {
  try {
    return bundleOf(p);
  } catch (e) {
    if (e instanceof FloatscopeError) throw e;
    throw new DisplayError(`Malformed ${p.kind} payload`, {
      field: e instanceof PayloadError && e.field ? e.field : "payload",
      expected: `a ${p.kind} payload as built by floatscope (see src/protocol/payloads.ts)`,
      found: e instanceof Error ? e.message : String(e),
    });
  }
}

function bundleOf(p: ViewPayload): FigureBundle {
  switch (p.kind) {
    case "scrubber":
      return scrubberBundle(p);
    case "qk":
      return qkBundle(p);
    case "absorption":
      return absorptionBundle(p);
    case "retrieval":
      return retrievalBundle(p);
    case "rollout":
      return rolloutBundle(p);
    case "distractor":
      return distractorBundle(p);
    case "drift":
      return driftBundle(p);
    case "token-types":
      return tokenTypesBundle(p);
  }
}
