/**
 * The frontier: where a masked diffusion model's floating anchors sit relative to the
 * masked/unmasked boundary of the canvas and to the tokens being written, step by step. The paper
 * describes its layer-0 temporal figure as "a moving frontier" beside several anchors and its
 * layer-31 figure as one dominant column; this analysis turns "do the anchors follow the frontier?"
 * into numbers with an exact chance baseline (docs/analyses.md, "The frontier").
 *
 * Definitions, per denoising step s (its canvas, the model's input at that step) and layer l:
 * - anchors A_{s,l}: the shared detector (anchors.ts) on the step's `received` vector; default rule
 *   `top-k` with k = 1 (the top-1 column), any rule of anchors.ts may be given;
 * - candidates C_s: the keys the rule may pick (its key-side exclusions applied, NaN columns out);
 * - the frontier F_s: the positions on either side of every boundary between a masked slot and an
 *   unmasked position (prompt or decoded) of the canvas; with left-to-right decoding F = {f − 1, f}
 *   for the first masked slot f;
 * - the just-unmasked positions U_s: the positions the sampler unmasks from this step's output
 *   (`TraceStep.transferred`; still masks in the step's canvas);
 * - d_F(j), d_U(j): distance in positions to the nearest member of F_s, U_s; `within` = d ≤ radius;
 * - chance: the value for an anchor drawn uniformly from C_s, computed exactly (the share of
 *   candidates within the radius, the mean candidate distance). An anchor set of m keys drawn
 *   uniformly without replacement has the same expectation (linearity), so pooled over steps the
 *   expected count within the radius is Σ_s |A_s| · chance_s.
 * - on long answers, with facts given as { keySpan, answerTokens }: the facts written at step s are
 *   those with an answer token in U_s; hit(s, t) = share of A_s inside the key spans of the facts of
 *   step t. Observed: mean_s hit(s, s); shuffled: the exact expectation over uniform permutations π
 *   of the steps of mean_s hit(s, π(s)) = mean over all pairs (s, t) of hit(s, t) (each s meets each t
 *   with probability 1/n, fixed points included). An anchor that never moves scores the same on both.
 *
 * Upstream has no such analysis; the paper only shows the heatmaps. Pooled statistics are ratios of
 * sums over traces with a percentile bootstrap over traces (robustness.ts `bootstrap`).
 */
import type { FrontierSpec, Grid } from "./figure-data.js";
import type { Trace } from "../trace/types.js";
import { SettingsError } from "../util/errors.js";
import { type AnchorOptions, describeRule, eligibleKeys, passAnchors, resolveRule, topKIndices } from "./anchors.js";
import { partialWarnings, requireSteps, resolveLayers } from "./probes-access.js";
import { type Interval, bootstrap } from "./robustness.js";
import type { BootstrapOptions } from "../util/stats.js";
import { type ColumnTable, longTable, sampleLabel } from "./tables.js";
import { layerBands } from "./token-types.js";

/** One fact of a long answer: the prompt span that holds it and the answer positions that state it. */
export interface FactSpan {
  factId: string;
  /** Token span [start, end) of the passage text holding the fact, in canvas positions. */
  keySpan: [number, number];
  /** Canvas positions of the answer tokens that state the fact. */
  answerTokens: number[];
}

// ---------------------------------------------------------------------------------------------
// Pure functions on arrays

/**
 * The frontier of a canvas: positions j whose masked state differs from a neighbour's
 * (j − 1 or j + 1), i.e. both sides of every masked/unmasked boundary, ascending.
 * @param masked [seq] truthy where the slot is still a mask.
 * @example frontierPositions([0, 0, 1, 1]) // [1, 2]
 */
export function frontierPositions(masked: ArrayLike<number | boolean>): Int32Array {
  const out: number[] = [];
  const n = masked.length;
  for (let j = 0; j < n; j++) {
    const m = !!masked[j];
    if ((j > 0 && !!masked[j - 1] !== m) || (j + 1 < n && !!masked[j + 1] !== m)) out.push(j);
  }
  return Int32Array.from(out);
}

/**
 * Distance in positions from each of 0…n−1 to the nearest target (targets outside [0, n) are
 * ignored; Infinity everywhere when none is left).
 */
export function distanceTo(targets: ArrayLike<number>, n: number): Float64Array {
  const d = new Float64Array(n).fill(Infinity);
  for (let i = 0; i < targets.length; i++) if (targets[i] >= 0 && targets[i] < n) d[targets[i]] = 0;
  for (let j = 1; j < n; j++) d[j] = Math.min(d[j], d[j - 1] + 1);
  for (let j = n - 2; j >= 0; j--) d[j] = Math.min(d[j], d[j + 1] + 1);
  return d;
}

/** Within-radius count and distance sum of one anchor set (NaN when a distance is undefined). */
export function anchorDistances(dist: ArrayLike<number>, anchors: ArrayLike<number>, radius: number): { within: number; distance: number } {
  let within = 0;
  let distance = 0;
  for (let i = 0; i < anchors.length; i++) {
    const d = dist[anchors[i]];
    if (!Number.isFinite(d)) return { within: NaN, distance: NaN };
    if (d <= radius) within++;
    distance += d;
  }
  return { within, distance };
}

/**
 * The chance baseline, exact: for a key drawn uniformly from the candidates, the probability that it
 * lies within `radius` and its expected distance. NaN when there are no candidates or no target.
 */
export function chanceBaseline(
  dist: ArrayLike<number>,
  candidates: Uint8Array,
  radius: number,
): { share: number; distance: number; candidates: number } {
  let n = 0;
  let within = 0;
  let sum = 0;
  for (let j = 0; j < dist.length; j++) {
    if (!candidates[j]) continue;
    n++;
    if (dist[j] <= radius) within++;
    sum += dist[j];
  }
  if (n === 0 || !Number.isFinite(sum)) return { share: NaN, distance: NaN, candidates: n };
  return { share: within / n, distance: sum / n, candidates: n };
}

/** Indices of the facts written at each step: those with an answer token among the step's unmasked positions. */
export function factsPerStep(facts: readonly FactSpan[], unmasked: readonly ArrayLike<number>[]): number[][] {
  return unmasked.map((u) => {
    const set = new Set(Array.from(u));
    return facts.flatMap((f, i) => (f.answerTokens.some((p) => set.has(p)) ? [i] : []));
  });
}

/**
 * Does the anchor follow the source of what is being written? `anchors[s]` is the anchor set at
 * step s, `spans[s]` the key spans of the facts written at step s. Only steps with both count.
 * @returns sums over the counted steps: `hits` = Σ_s hit(s, s), `shuffled` = Σ_s mean_t hit(s, t)
 *   (the exact expectation of Σ_s hit(s, π(s)) over uniform permutations π), `steps` = how many.
 */
export function sourceFollowing(
  anchors: readonly ArrayLike<number>[],
  spans: readonly (readonly [number, number])[][],
): { hits: number; shuffled: number; steps: number } {
  const use = anchors.flatMap((a, s) => (a.length > 0 && spans[s]?.length ? [s] : []));
  const hit = (s: number, t: number) => {
    const a = anchors[s];
    let k = 0;
    for (let i = 0; i < a.length; i++) if (spans[t].some(([b, e]) => b <= a[i] && a[i] < e)) k++;
    return k / a.length;
  };
  let hits = 0;
  let shuffled = 0;
  for (const s of use) {
    hits += hit(s, s);
    let m = 0;
    for (const t of use) m += hit(s, t);
    shuffled += m / use.length;
  }
  return { hits, shuffled, steps: use.length };
}

// ---------------------------------------------------------------------------------------------
// On traces

export interface FrontierOptions extends AnchorOptions, BootstrapOptions {
  /** Layers read (default: every layer with a `received` probe at step 0). */
  layers?: number[] | "all";
  /** Positions counted as "at" the frontier / the just-unmasked tokens: d ≤ radius (default 2). */
  radius?: number;
  /** One list of facts per trace (same order); a trace without facts has no source statistic. */
  facts?: (readonly FactSpan[] | undefined)[];
  /** Layers of the source statistic (default: the deepest third of the model's layers that are read). */
  sourceLayers?: number[];
  /** Layer of the figure's step × position strip (default: the first layer read). */
  stripLayer?: number;
  /** Sample labels (default: the trace's settings.sampleId or its index). */
  samples?: string[];
}

/** One layer of one trace, summed over steps: what pooling needs. */
export interface FrontierLayerStats {
  layer: number;
  /** Steps read. */
  steps: number;
  /** Distinct anchor positions over the steps. */
  distinct: number;
  /** Steps at which the top-1 column differs from the previous step's. */
  moves: number;
  /** Anchors at steps with a frontier; `within` of them within the radius; `distance` their summed distance. */
  anchors: number;
  within: number;
  distance: number;
  /** Expected `within` and `distance` under the chance baseline (Σ_s |A_s|·chance_s). */
  chanceWithin: number;
  chanceDistance: number;
  /** The same four against the just-unmasked positions, over steps that unmask something. */
  unmaskedAnchors: number;
  unmaskedWithin: number;
  unmaskedDistance: number;
  unmaskedChanceWithin: number;
  unmaskedChanceDistance: number;
  /** Source statistic (source layers of traces with facts; else 0 steps). */
  sourceSteps: number;
  sourceHits: number;
  sourceShuffled: number;
}

/** The five sums one reference set (the frontier, or the just-unmasked positions) adds per step. */
type AnchorSums = Record<"anchors" | "within" | "distance" | "chanceWithin" | "chanceDistance", NumericField>;
const FRONTIER_SUMS: AnchorSums = {
  anchors: "anchors",
  within: "within",
  distance: "distance",
  chanceWithin: "chanceWithin",
  chanceDistance: "chanceDistance",
};
const UNMASKED_SUMS: AnchorSums = {
  anchors: "unmaskedAnchors",
  within: "unmaskedWithin",
  distance: "unmaskedDistance",
  chanceWithin: "unmaskedChanceWithin",
  chanceDistance: "unmaskedChanceDistance",
};

/** Adds one step's `m` anchors, their observed `within`/`distance` and the chance expectation to `st`'s fields `k`. */
function addAnchorSums(
  st: FrontierLayerStats,
  k: AnchorSums,
  m: number,
  seen: { within: number; distance: number },
  chance: { share: number; distance: number },
): void {
  st[k.anchors] += m;
  st[k.within] += seen.within;
  st[k.distance] += seen.distance;
  st[k.chanceWithin] += m * chance.share;
  st[k.chanceDistance] += m * chance.distance;
}

/** One trace's sums per layer: pool many with `poolFrontier` (a notebook can keep these and drop the traces). */
/** A layer's counts before any step is read: every sum at zero (also the rows' fixture in tests). */
export function emptyLayerStats(layer: number, steps: number): FrontierLayerStats {
  return {
    layer,
    steps,
    distinct: 0,
    moves: 0,
    anchors: 0,
    within: 0,
    distance: 0,
    chanceWithin: 0,
    chanceDistance: 0,
    unmaskedAnchors: 0,
    unmaskedWithin: 0,
    unmaskedDistance: 0,
    unmaskedChanceWithin: 0,
    unmaskedChanceDistance: 0,
    sourceSteps: 0,
    sourceHits: 0,
    sourceShuffled: 0,
  };
}

export interface FrontierTraceStats {
  model: string;
  sample: string;
  rule: string;
  radius: number;
  layers: FrontierLayerStats[];
}

export interface FrontierResult {
  /** One row per (sample, step, layer): anchors, top1, distances and within-radius shares with their chance values. */
  cells: ColumnTable;
  /** One row per anchor: sample, step, layer, position, value, masked, dFrontier, dMasked, dUnmasked, token. */
  anchors: ColumnTable;
  /** One row per (model, layer), pooled over steps and traces, with 95 % intervals over traces. */
  layers: ColumnTable;
  /** One row per (model, statistic), pooled, with 95 % intervals over traces and the baseline. */
  summary: ColumnTable;
  /** Per trace sums (input of `poolFrontier`). */
  perTrace: FrontierTraceStats[];
  spec: FrontierSpec;
}

function checkFacts(facts: readonly FactSpan[], T: number, label: string): void {
  for (const f of facts) {
    const [b, e] = f.keySpan ?? [];
    const ok = Number.isInteger(b) && Number.isInteger(e) && 0 <= b && b < e && e <= T;
    const posOk = Array.isArray(f.answerTokens) && f.answerTokens.every((p) => Number.isInteger(p) && p >= 0 && p < T);
    if (!ok || !posOk)
      throw new SettingsError("bad fact span", {
        file: label,
        field: `facts (${f.factId})`,
        expected: `keySpan [start, end) with 0 ≤ start < end ≤ ${T} and answerTokens positions in [0, ${T})`,
        found: `keySpan ${JSON.stringify(f.keySpan)}, answerTokens ${JSON.stringify(f.answerTokens)}`,
      });
  }
}

interface Rows {
  [k: string]: unknown[];
}

/** Per-step, per-layer frontier statistics of one trace; appends rows to `cells` and `anchorRows`. */
function traceStats(trace: Trace, index: number, opts: FrontierOptions, cells: Rows, anchorRows: Rows, warnings: string[]) {
  const model = trace.model.name;
  const sample = sampleLabel(trace.settings, index, opts.samples);
  requireSteps(
    trace,
    model,
    "received",
    "record the run with a sampler (`floatscope generate … --trace f.fstrace --probes received`), not only a final forward pass",
  );
  const radius = opts.radius ?? 2;
  const layers = resolveLayers(trace, 0, "received", opts.layers, model);
  const rule = resolveRule({ ...opts, rule: opts.rule ?? "top-k" }, "drift", trace.model.causal);
  const facts = opts.facts?.[index];
  const T = trace.final.sequence.length;
  if (facts) checkFacts(facts, T, model);
  const sourceLayers = new Set(opts.sourceLayers ?? deepLayers(trace.model.numLayers, layers));
  for (const l of sourceLayers)
    if (!layers.includes(l))
      throw new SettingsError("source layer not read", {
        file: model,
        field: "sourceLayers",
        expected: `among ${layers.join(", ")}`,
        found: String(l),
      });
  const mask = trace.model.maskTokenId;
  const factSpans = facts
    ? factsPerStep(
        facts,
        trace.steps.map((st) => st.transferred),
      ).map((ix) => ix.map((i) => facts[i].keySpan))
    : undefined;
  let noFrontier = 0;
  const perLayer = layers.map((layer) => {
    const st = emptyLayerStats(layer, trace.steps.length);
    const seen = new Set<number>();
    const sets: Int32Array[] = [];
    let prevTop = -1;
    trace.steps.forEach((step, s) => {
      const { received, anchors, ctx } = passAnchors(trace, s, layer, rule, model);
      const n = received.length;
      const isMasked = Array.from(step.canvas, (id) => (id === mask ? 1 : 0));
      const candidates = eligibleKeys(n, rule.exclude, ctx);
      for (let j = 0; j < n; j++) if (Number.isNaN(received[j])) candidates[j] = 0;
      const dF = distanceTo(frontierPositions(isMasked), n);
      const dM = distanceTo(
        isMasked.flatMap((m, j) => (m ? [j] : [])),
        n,
      );
      const dU = distanceTo(step.transferred, n);
      const top = topKIndices(received, 1, candidates);
      const top1 = top.length ? top[0] : -1;
      if (s > 0 && top1 !== prevTop) st.moves++;
      prevTop = top1;
      for (const a of anchors) seen.add(a);
      sets.push(anchors);
      const f = anchorDistances(dF, anchors, radius);
      const cf = chanceBaseline(dF, candidates, radius);
      const u = anchorDistances(dU, anchors, radius);
      const cu = chanceBaseline(dU, candidates, radius);
      const m = anchors.length;
      if (Number.isFinite(cf.share) && m > 0) addAnchorSums(st, FRONTIER_SUMS, m, f, cf);
      else if (!Number.isFinite(cf.share) && layer === layers[0]) noFrontier++;
      if (Number.isFinite(cu.share) && m > 0) addAnchorSums(st, UNMASKED_SUMS, m, u, cu);
      cells.sample.push(sample);
      cells.model.push(model);
      cells.step.push(step.step);
      cells.layer.push(layer);
      cells.anchors.push(m);
      cells.top1.push(top1);
      cells.candidates.push(cf.candidates);
      cells.frontierDistance.push(m && Number.isFinite(cf.share) ? f.distance / m : NaN);
      cells.chanceFrontierDistance.push(cf.distance);
      cells.frontierWithin.push(m && Number.isFinite(cf.share) ? f.within / m : NaN);
      cells.chanceFrontierWithin.push(cf.share);
      cells.unmaskedDistance.push(m && Number.isFinite(cu.share) ? u.distance / m : NaN);
      cells.chanceUnmaskedDistance.push(cu.distance);
      cells.unmaskedWithin.push(m && Number.isFinite(cu.share) ? u.within / m : NaN);
      cells.chanceUnmaskedWithin.push(cu.share);
      for (const a of anchors) {
        anchorRows.sample.push(sample);
        anchorRows.model.push(model);
        anchorRows.step.push(step.step);
        anchorRows.layer.push(layer);
        anchorRows.position.push(a);
        anchorRows.value.push(received[a]);
        anchorRows.masked.push(isMasked[a] === 1);
        anchorRows.dFrontier.push(Number.isFinite(dF[a]) ? dF[a] : NaN);
        anchorRows.dMasked.push(Number.isFinite(dM[a]) ? dM[a] : NaN);
        anchorRows.dUnmasked.push(Number.isFinite(dU[a]) ? dU[a] : NaN);
        anchorRows.token.push(isMasked[a] ? "<mask>" : (trace.tokens[a] ?? ""));
      }
    });
    st.distinct = seen.size;
    if (factSpans && sourceLayers.has(layer)) {
      const r = sourceFollowing(sets, factSpans);
      st.sourceSteps = r.steps;
      st.sourceHits = r.hits;
      st.sourceShuffled = r.shuffled;
    }
    return st;
  });
  if (noFrontier > 0)
    warnings.push(`${sample}: ${noFrontier} step(s) have no masked slot (no frontier) and are left out of the frontier statistics`);
  const stats: FrontierTraceStats = { model, sample, rule: describeRule(rule), radius, layers: perLayer };
  return { stats, layers, rule };
}

/** The deepest third of the model's layers (token-types' deep band), among those read. */
function deepLayers(numLayers: number, read: number[]): number[] {
  const bands = layerBands(numLayers);
  const [a, b] = bands[bands.length - 1].layers;
  return read.filter((l) => a <= l && l <= b);
}

/** Step × position states of one trace for the figure's strip: 0 prompt, 1 decoded, 2 masked, 3 unmasked at this step. */
function stripOf(trace: Trace, layer: number, opts: FrontierOptions, sample: string): FrontierSpec["strip"] {
  const rule = resolveRule({ ...opts, rule: opts.rule ?? "top-k" }, "drift", trace.model.causal);
  const S = trace.steps.length;
  const N = trace.steps.reduce((m, st) => Math.max(m, st.canvas.length), 0);
  const state = new Float64Array(S * N).fill(NaN);
  const anchors = new Uint8Array(S * N);
  const P = trace.prompt.promptLength;
  trace.steps.forEach((st, s) => {
    st.canvas.forEach((id, j) => (state[s * N + j] = j < P ? 0 : id === trace.model.maskTokenId ? 2 : 1));
    for (const j of st.transferred) if (j < st.canvas.length) state[s * N + j] = 3;
    for (const j of passAnchors(trace, s, layer, rule, trace.model.name).anchors) anchors[s * N + j] = 1;
  });
  return {
    sample,
    layer,
    steps: trace.steps.map((st) => st.step),
    state: { shape: [S, N], values: state } satisfies Grid,
    anchors: { shape: [S, N], values: anchors } satisfies Grid,
    tokens: trace.tokens,
  };
}

type Pooled = { value: Interval; baseline: Interval | null; difference: Interval | null };

/** The named columns of `rows` as typed arrays (integers as Int32, the rest as Float64), in the order given. */
function typedColumns(rows: Rows, ints: string[], floats: string[]): Record<string, Int32Array | Float64Array> {
  return Object.fromEntries([
    ...ints.map((k) => [k, Int32Array.from(rows[k] as number[])]),
    ...floats.map((k) => [k, Float64Array.from(rows[k] as number[])]),
  ]);
}

type Stat = (l: FrontierLayerStats) => number;
type NumericField = { [K in keyof FrontierLayerStats]: FrontierLayerStats[K] extends number ? K : never }[keyof FrontierLayerStats];

/** A statistic that is one numeric field of the per-layer stats as it stands. */
function field(k: NumericField): Stat {
  return (l) => l[k];
}

/** Ratio-of-sums statistics over traces (each trace one bootstrap unit; differences paired). */
function pooled(
  units: FrontierLayerStats[][],
  num: (l: FrontierLayerStats) => number,
  den: (l: FrontierLayerStats) => number,
  base: ((l: FrontierLayerStats) => number) | null,
  o: BootstrapOptions,
): Pooled {
  const sums = units.map((ls) => [
    ls.reduce((a, l) => a + num(l), 0),
    ls.reduce((a, l) => a + den(l), 0),
    base ? ls.reduce((a, l) => a + base(l), 0) : 0,
  ]);
  const ratio = (k: number) => (idx: ArrayLike<number>) => {
    let n = 0;
    let d = 0;
    for (let i = 0; i < idx.length; i++) {
      n += sums[idx[i]][k];
      d += sums[idx[i]][1];
    }
    return d > 0 ? n / d : NaN;
  };
  const diff = (idx: ArrayLike<number>) => ratio(0)(idx) - ratio(2)(idx);
  const value = bootstrap(units.length, ratio(0), o);
  if (!base) return { value, baseline: null, difference: null };
  return { value, baseline: bootstrap(units.length, ratio(2), o), difference: bootstrap(units.length, diff, o) };
}

/** The statistics of the summary, in order: name, numerator, denominator, baseline numerator. */
const STATISTICS: [
  string,
  (l: FrontierLayerStats) => number,
  (l: FrontierLayerStats) => number,
  ((l: FrontierLayerStats) => number) | null,
][] = [
  ["distinct anchors per layer", (l) => l.distinct, () => 1, null],
  ["share of layers whose top-1 moves", (l) => (l.moves > 0 ? 1 : 0), () => 1, null],
  ["anchor-to-frontier distance", (l) => l.distance, (l) => l.anchors, (l) => l.chanceDistance],
  ["share of anchors within radius of the frontier", (l) => l.within, (l) => l.anchors, (l) => l.chanceWithin],
  ["anchor-to-unmasked distance", (l) => l.unmaskedDistance, (l) => l.unmaskedAnchors, (l) => l.unmaskedChanceDistance],
  [
    "share of anchors within radius of the unmasked tokens",
    (l) => l.unmaskedWithin,
    (l) => l.unmaskedAnchors,
    (l) => l.unmaskedChanceWithin,
  ],
  ["deep anchor in the written fact's source", (l) => l.sourceHits, (l) => l.sourceSteps, (l) => l.sourceShuffled],
];

const nul = (i: Interval | null, k: "mean" | "lo" | "hi") => (i ? i[k] : NaN);

/** Append an interval's mean, lower and upper bound to three columns of `rows` (NaN for a missing interval). */
function pushInterval(rows: Rows, i: Interval | null, [mean, lo, hi]: [string, string, string]): void {
  rows[mean].push(nul(i, "mean"));
  rows[lo].push(nul(i, "lo"));
  rows[hi].push(nul(i, "hi"));
}

/**
 * Pool per-trace sums: per model, one row per statistic (ratio of sums over traces and layers, with a
 * percentile-bootstrap interval over traces; the baseline and the paired difference observed −
 * baseline likewise) and one row per layer.
 */
export function poolFrontier(
  perTrace: readonly FrontierTraceStats[],
  o: BootstrapOptions = {},
): { summary: ColumnTable; layers: ColumnTable } {
  const s: Rows = {
    model: [],
    statistic: [],
    value: [],
    lo: [],
    hi: [],
    baseline: [],
    baselineLo: [],
    baselineHi: [],
    difference: [],
    differenceLo: [],
    differenceHi: [],
    traces: [],
  };
  const l: Rows = {
    model: [],
    layer: [],
    within: [],
    withinLo: [],
    withinHi: [],
    chance: [],
    unmaskedWithin: [],
    unmaskedLo: [],
    unmaskedHi: [],
    unmaskedChance: [],
    distance: [],
    chanceDistance: [],
    distinct: [],
    moved: [],
    sourceHits: [],
    sourceShuffled: [],
    traces: [],
  };
  const models = [...new Set(perTrace.map((t) => t.model))];
  for (const model of models) {
    const units = perTrace.filter((t) => t.model === model).map((t) => t.layers);
    for (const [name, num, den, base] of STATISTICS) {
      const p = pooled(units, num, den, base, o);
      s.model.push(model);
      s.statistic.push(name);
      pushInterval(s, p.value, ["value", "lo", "hi"]);
      pushInterval(s, p.baseline, ["baseline", "baselineLo", "baselineHi"]);
      pushInterval(s, p.difference, ["difference", "differenceLo", "differenceHi"]);
      s.traces.push(units.length);
    }
    const layerIds = [...new Set(units.flatMap((u) => u.map((x) => x.layer)))].sort((a, b) => a - b);
    for (const layer of layerIds) {
      const one = units.map((u) => u.filter((x) => x.layer === layer));
      // Every per-layer statistic pools over this layer's units with the same bootstrap options.
      const pool = (num: Stat, den: Stat, base: Stat | null) => pooled(one, num, den, base, o);
      const perStep: Stat = (x) => (x.steps ? 1 : 0);
      const w = pool(field("within"), field("anchors"), field("chanceWithin"));
      const u = pool(field("unmaskedWithin"), field("unmaskedAnchors"), field("unmaskedChanceWithin"));
      const d = pool(field("distance"), field("anchors"), field("chanceDistance"));
      const dist = pool(field("distinct"), perStep, null);
      const mv = pool((x) => (x.moves > 0 ? 1 : 0), perStep, null);
      const src = pool(field("sourceHits"), field("sourceSteps"), field("sourceShuffled"));
      l.model.push(model);
      l.layer.push(layer);
      pushInterval(l, w.value, ["within", "withinLo", "withinHi"]);
      l.chance.push(nul(w.baseline, "mean"));
      pushInterval(l, u.value, ["unmaskedWithin", "unmaskedLo", "unmaskedHi"]);
      l.unmaskedChance.push(nul(u.baseline, "mean"));
      l.distance.push(d.value.mean);
      l.chanceDistance.push(nul(d.baseline, "mean"));
      l.distinct.push(dist.value.mean);
      l.moved.push(mv.value.mean);
      l.sourceHits.push(src.value.mean);
      l.sourceShuffled.push(nul(src.baseline, "mean"));
      l.traces.push(units.length);
    }
  }
  const f64 = (r: Rows) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k === "model" || k === "statistic" ? v : Float64Array.from(v as number[])]));
  return { summary: longTable(f64(s) as never), layers: longTable(f64(l) as never) };
}

/**
 * Anchors vs the frontier of one or more MDM traces: per (step, layer) cells, one row per anchor,
 * pooled per-layer and summary tables with 95 % intervals over traces, and the figure input.
 * @example
 * const r = anchorFrontier(traces, { radius: 2, facts });
 * r.summary.print();
 * show(r.spec);
 */
export function anchorFrontier(traces: Trace | Trace[], opts: FrontierOptions = {}): FrontierResult {
  const list = Array.isArray(traces) ? traces : [traces];
  if (list.length === 0) throw new SettingsError("no traces", { field: "traces", expected: "at least one trace", found: "none" });
  const radius = opts.radius ?? 2;
  if (!Number.isInteger(radius) || radius < 0)
    throw new SettingsError("bad radius", { field: "radius", expected: "an integer ≥ 0 (positions)", found: String(radius) });
  if (opts.facts && opts.facts.length !== list.length)
    throw new SettingsError("one fact list per trace", { field: "facts", expected: `${list.length} lists`, found: `${opts.facts.length}` });
  const cellCols = [
    "sample",
    "model",
    "step",
    "layer",
    "anchors",
    "top1",
    "candidates",
    "frontierDistance",
    "chanceFrontierDistance",
    "frontierWithin",
    "chanceFrontierWithin",
    "unmaskedDistance",
    "chanceUnmaskedDistance",
    "unmaskedWithin",
    "chanceUnmaskedWithin",
  ];
  const anchorCols = ["sample", "model", "step", "layer", "position", "value", "masked", "dFrontier", "dMasked", "dUnmasked", "token"];
  const cells: Rows = Object.fromEntries(cellCols.map((c) => [c, []]));
  const anchorRows: Rows = Object.fromEntries(anchorCols.map((c) => [c, []]));
  const warnings = partialWarnings(list);
  const runs = list.map((t, i) => traceStats(t, i, { ...opts, radius }, cells, anchorRows, warnings));
  const perTrace = runs.map((r) => r.stats);
  const { summary, layers } = poolFrontier(perTrace, opts);
  const first = list[0];
  const firstModel = first.model.name;
  const mine = (layers.objects() as Record<string, number | string>[]).filter((r) => r.model === firstModel);
  const col = (k: string) => mine.map((r) => Number(r[k]));
  const stripLayer = opts.stripLayer ?? runs[0].layers[0];
  if (!runs[0].layers.includes(stripLayer))
    throw new SettingsError("strip layer not read", {
      field: "stripLayer",
      expected: runs[0].layers.join(", "),
      found: String(stripLayer),
    });
  const spec: FrontierSpec = {
    kind: "frontier",
    warnings,
    model: firstModel,
    rule: describeRule(runs[0].rule),
    radius,
    traces: perTrace.filter((t) => t.model === firstModel).length,
    layers: col("layer"),
    within: col("within"),
    withinLo: col("withinLo"),
    withinHi: col("withinHi"),
    chance: col("chance"),
    unmasked: col("unmaskedWithin"),
    unmaskedChance: col("unmaskedChance"),
    strip: stripOf(first, stripLayer, opts, perTrace[0].sample),
  };
  const cellTable = longTable({
    ...cells,
    ...typedColumns(cells, ["step", "layer", "anchors", "top1", "candidates"], cellCols.slice(7)),
  } as never);
  const anchorTable = longTable({
    ...anchorRows,
    ...typedColumns(anchorRows, ["step", "layer", "position"], ["value", "dFrontier", "dMasked", "dUnmasked"]),
  } as never);
  return { cells: cellTable, anchors: anchorTable, layers, summary, perTrace, spec };
}
