/**
 * Floating anchors across denoising steps — paper §5 / Fig. temporal (`create_temporal.py`, README §1),
 * plus anchor tracking (birth, death, drift, lifetime), which the paper does not measure.
 *
 * Definition: the temporal drift matrix heat[step, key] is, per denoising step, the `received` column
 * means of the selected layers averaged over those layers; the anchors of each row come from the shared
 * detector, and a track follows one anchor from the step it appears (birth) to the step after it was
 * last seen (death), matching anchors of consecutive steps that lie at most `maxJump` positions apart.
 *
 * Where our default differs from upstream: the default rule is the same (μ + 3σ per row, population σ,
 * strict >, no fallback), so `rule: "upstream"` changes nothing here; but we label rows with the trace's
 * `step` values (upstream: row indices), read the per-step data our sampler records (upstream ships no
 * producer for `step_attention_data`) and default to all recorded layers averaged (upstream: layer 20
 * unless `--all_layers`). Exclusions (diagonal, mask, EOS/pad, causal row 0) are opt-in.
 */
import type { DriftSpec } from "./figure-data.js";
import type { Trace } from "../trace/types.js";
import { type AnchorOptions, describeRule, detectAnchors, passAnchors, resolveRule } from "./anchors.js";
import { partialWarnings, requireSteps, resolveLayers } from "./probes-access.js";
import { type ColumnTable, longTable, type Rows } from "./tables.js";

/** One anchor followed across steps. Rows are indices into the step list. */
export interface AnchorTrack {
  id: number;
  /** First row where the anchor is present. */
  birth: number;
  /** Row after the last one where it is present (exclusive). */
  death: number;
  /** Rows where it is present (≤ death − birth when gaps are allowed). */
  lifetime: number;
  /** Position at birth and at its last sighting; drift = to − from. */
  from: number;
  to: number;
  /** [row, position] of every sighting. */
  path: [number, number][];
}

/**
 * Stack per-step vectors into a [step, key] matrix; shorter rows (an ARM's growing canvas) are padded with NaN.
 * @param rows one vector per step, each [key].
 */
export function stackRows(rows: ArrayLike<number>[]): { heat: Float64Array; dims: [number, number] } {
  const width = rows.reduce((m, r) => Math.max(m, r.length), 0);
  const heat = new Float64Array(rows.length * width).fill(NaN);
  rows.forEach((r, s) => {
    for (let j = 0; j < r.length; j++) heat[s * width + j] = r[j];
  });
  return { heat, dims: [rows.length, width] };
}

/** Element-wise mean of equal-length vectors (mean over layers of column means = column means of the mean map). */
export function meanVectors(vectors: ArrayLike<number>[]): Float64Array {
  const out = new Float64Array(vectors[0]?.length ?? 0);
  for (const v of vectors) for (let j = 0; j < out.length; j++) out[j] += v[j] / vectors.length;
  return out;
}

/**
 * Follow anchors across rows. Consecutive sightings are linked when they are at most `maxJump`
 * positions apart and at most `maxGap` rows are skipped; closest pairs are linked first (ties: older
 * track, then lower position). `maxJump = 0, maxGap = 0` (default) makes a track one position's
 * uninterrupted run.
 * @param sets anchor positions per row.
 */
export function trackAnchors(sets: ArrayLike<number>[], opts: { maxJump?: number; maxGap?: number } = {}): AnchorTrack[] {
  const maxJump = opts.maxJump ?? 0;
  const maxGap = opts.maxGap ?? 0;
  const open: AnchorTrack[] = [];
  const done: AnchorTrack[] = [];
  let nextId = 0;
  sets.forEach((set, row) => {
    // Close tracks whose gap is now too long.
    for (let t = open.length - 1; t >= 0; t--) {
      if (row - open[t].death > maxGap) done.push(...open.splice(t, 1));
    }
    const pairs: [number, number, number][] = []; // [distance, track index, anchor index]
    open.forEach((tr, ti) => {
      for (let a = 0; a < set.length; a++) {
        const d = Math.abs(set[a] - tr.to);
        if (d <= maxJump) pairs.push([d, ti, a]);
      }
    });
    pairs.sort((x, y) => x[0] - y[0] || open[x[1]].id - open[y[1]].id || set[x[2]] - set[y[2]]);
    const usedTrack = new Set<number>();
    const usedAnchor = new Set<number>();
    for (const [, ti, a] of pairs) {
      if (usedTrack.has(ti) || usedAnchor.has(a)) continue;
      usedTrack.add(ti);
      usedAnchor.add(a);
      const tr = open[ti];
      tr.to = set[a];
      tr.death = row + 1;
      tr.lifetime += 1;
      tr.path.push([row, set[a]]);
    }
    for (let a = 0; a < set.length; a++) {
      if (usedAnchor.has(a)) continue;
      open.push({ id: nextId++, birth: row, death: row + 1, lifetime: 1, from: set[a], to: set[a], path: [[row, set[a]]] });
    }
  });
  return [...done, ...open].sort((a, b) => a.id - b.id);
}

export interface DriftOptions extends AnchorOptions {
  /** Layers averaged into the drift matrix. Default: every layer with a `received` probe at step 0. */
  layers?: number[] | "all";
  /** Anchor tracking: largest position jump between consecutive sightings (default 0). */
  maxJump?: number;
  /** Anchor tracking: most steps an anchor may vanish and still be the same track (default 0). */
  maxGap?: number;
}

export interface DriftResult {
  /** One row per (step, position) of the averaged selection: value, anchor, masked. */
  heat: Rows<{
    step: number;
    position: number;
    value: number;
    anchor: boolean;
    masked: boolean;
    model: string;
    layers: string;
    rule: string;
  }>;
  /** One row per anchor of each (step, layer) in the selection: value, masked, token. */
  anchors: ColumnTable;
  /** One row per track: birth/death as step values, lifetime, from, to, drift. */
  tracks: Rows<{ track: number; birth: number; death: number; lifetime: number; from: number; to: number; drift: number; model: string }>;
  spec: DriftSpec;
}

/**
 * Temporal drift heatmap and anchor tracks of one MDM (or ARM) trace.
 * @example
 * const { heat, tracks, spec } = temporalDrift(trace, { layers: [31] });
 * tracks.orderby(aq.desc("lifetime")).print();
 */
export function temporalDrift(trace: Trace, opts: DriftOptions = {}): DriftResult {
  const label = trace.model.name;
  requireSteps(
    trace,
    label,
    "received",
    "record the run with a sampler (every step is written with the requested probes), not only a final forward pass",
  );
  const layers = resolveLayers(trace, 0, "received", opts.layers, label);
  const rule = resolveRule(opts, "drift", trace.model.causal);
  const mask = trace.model.maskTokenId;
  const rows: Float64Array[] = [];
  const sets: Int32Array[] = [];
  const anc = {
    step: [] as number[],
    layer: [] as number[],
    position: [] as number[],
    value: [] as number[],
    masked: [] as boolean[],
    token: [] as string[],
  };
  trace.steps.forEach((st, s) => {
    const per = layers.map((l) => passAnchors(trace, s, l, rule, label));
    const row = meanVectors(per.map((p) => p.received));
    rows.push(row);
    sets.push(layers.length === 1 ? per[0].anchors : detectAnchors(row, rule, per[0].ctx));
    per.forEach((p, li) => {
      for (const j of p.anchors) {
        anc.step.push(st.step);
        anc.layer.push(layers[li]);
        anc.position.push(j);
        anc.value.push(p.received[j]);
        anc.masked.push(st.canvas[j] === mask);
        anc.token.push(st.canvas[j] === mask ? "<mask>" : (trace.tokens[j] ?? ""));
      }
    });
  });
  const { heat, dims } = stackRows(rows);
  const [S, T] = dims;
  const isAnchor = new Uint8Array(S * T);
  const isMasked = new Uint8Array(S * T);
  sets.forEach((set, s) => set.forEach((j) => (isAnchor[s * T + j] = 1)));
  trace.steps.forEach((st, s) => st.canvas.forEach((id, j) => (isMasked[s * T + j] = id === mask ? 1 : 0)));
  const stepOf = trace.steps.map((st) => st.step);
  const stepCol = new Int32Array(S * T);
  const posCol = new Int32Array(S * T);
  for (let i = 0; i < S * T; i++) {
    stepCol[i] = stepOf[Math.floor(i / T)];
    posCol[i] = i % T;
  }
  const ruleText = describeRule(rule);
  const heatTable = longTable(
    { step: stepCol, position: posCol, value: heat, anchor: Array.from(isAnchor, Boolean), masked: Array.from(isMasked, Boolean) },
    { model: label, layers: layers.join(","), rule: ruleText },
  );
  const anchorTable = longTable(
    {
      ...anc,
      step: Int32Array.from(anc.step),
      layer: Int32Array.from(anc.layer),
      position: Int32Array.from(anc.position),
      value: Float64Array.from(anc.value),
    },
    { model: label, rule: ruleText },
  );
  const tracks = trackAnchors(sets, { maxJump: opts.maxJump, maxGap: opts.maxGap });
  // death is exclusive: the step after the last sighting, or one past the last step value.
  const stepAfter = (row: number) => (row < S ? stepOf[row] : stepOf[S - 1] + 1);
  const trackTable = longTable(
    {
      track: Int32Array.from(tracks, (t) => t.id),
      birth: Int32Array.from(tracks, (t) => stepOf[t.birth]),
      death: Int32Array.from(tracks, (t) => stepAfter(t.death)),
      lifetime: Int32Array.from(tracks, (t) => t.lifetime),
      from: Int32Array.from(tracks, (t) => t.from),
      to: Int32Array.from(tracks, (t) => t.to),
      drift: Int32Array.from(tracks, (t) => t.to - t.from),
    },
    { model: label },
  );
  const spec: DriftSpec = {
    kind: "drift",
    warnings: partialWarnings([trace]),
    model: label,
    layers,
    rule: ruleText,
    steps: stepOf,
    heat: { shape: [S, T], values: heat },
    anchors: { shape: [S, T], values: isAnchor },
    masked: { shape: [S, T], values: isMasked },
    tokens: trace.tokens,
    tracks: tracks.map((t) => ({
      id: t.id,
      birth: stepOf[t.birth],
      death: stepAfter(t.death),
      from: t.from,
      to: t.to,
      lifetime: t.lifetime,
    })),
  };
  return { heat: heatTable, anchors: anchorTable, tracks: trackTable, spec };
}
