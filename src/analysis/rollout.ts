/**
 * Region-level attention flow by rollout — paper §9 / Fig. rollout (`attention_rollout.py`, README §6).
 *
 * Definition: per layer, pool the head-mean map into regions by summing (P[a,b] = Σ_{r∈a, c∈b} A[r,c]),
 * renormalise rows, mix with the residual (Â = rownorm(P + I) = ½P + ½I), multiply in ascending layer
 * order (R = Â_{L−1} ⋯ Â_0), renormalise rows and average over samples; we also report each layer's
 * pooled map and the stationary vector π = π·R̄.
 *
 * Caveats, reported as warnings: under a causal mask the first region only attends to itself, so it is
 * absorbing and the rollout drains to it with depth whatever the model does (the paper's Llama figure);
 * for bidirectional models R̄ tends to rank one (identical rows), so only π carries information.
 *
 * Where our default differs from upstream: regions come from the character offsets of the actual prompt
 * (trace.prompt.regions), partition every token (BOS, each named region, "template" for uncovered prompt
 * tokens, answer) and mark the gold document by name. `layout: "upstream"` rebuilds the paper's layout —
 * BOS = [0,1), Query = [1, n_header), documents laid end to end from n_header, Answer = [P, T) — with its
 * off-by-one when position 0 really is a BOS and its dropped tokens (the last document token onwards
 * up to the answer). Upstream also hard-coded max_samples = 1; we average every trace given.
 */
import type { RolloutSpec } from "./figure-data.js";
import type { Trace } from "../trace/types.js";
import { ProbeMissingError, SettingsError, keyword } from "../util/errors.js";
import { probeInfo } from "../util/probes.js";
import { getProbe, partialWarnings, probeLayers } from "./probes-access.js";
import { type ColumnTable, concatTables, longTable, sampleLabel, type Rows } from "./tables.js";

/** A partition of the sequence: region index per token (−1 = dropped) and region names. */
export interface RegionLayout {
  names: string[];
  /** [seq] region index of each token, −1 for tokens in no region. */
  assign: Int32Array;
  /**
   * Regions of `trace.prompt.regions` left out because they hold no token of their own (nested in an
   * outer region, or outside the sequence): an empty region would get an identity row in the rollout
   * and absorb a share of the stationary vector.
   */
  empty?: string[];
}

/** Layout from character-offset regions: every token belongs to exactly one region. */
export function offsetsLayout(trace: Trace): RegionLayout {
  const T = trace.final.sequence.length;
  const P = trace.prompt.promptLength;
  const assign = new Int32Array(T).fill(-1);
  const names: string[] = [];
  // Identical spans (e.g. "doc 3" and "gold") are one region with both names.
  const spans = new Map<string, string[]>();
  for (const r of trace.prompt.regions) {
    const key = `${r.tokens[0]}:${r.tokens[1]}`;
    spans.set(key, [...(spans.get(key) ?? []), r.name]);
  }
  const bos = trace.model.bosTokenId !== undefined && trace.final.sequence[0] === trace.model.bosTokenId;
  const covered = (t: number) => trace.prompt.regions.some((r) => r.tokens[0] <= t && t < r.tokens[1]);
  if (bos && !covered(0)) {
    names.push("BOS");
    assign[0] = 0;
  }
  const sorted = [...spans.entries()]
    .map(([k, n]) => [k.split(":").map(Number), n.join(" / ")] as [number[], string])
    .sort((a, b) => a[0][0] - b[0][0] || b[0][1] - a[0][1]);
  for (const [[s, e], name] of sorted) {
    const idx = names.push(name) - 1;
    for (let t = s; t < Math.min(e, T); t++) if (assign[t] < 0) assign[t] = idx; // first (outermost) region wins
  }
  let gaps = 0;
  for (let t = 0; t < P; t++) {
    if (assign[t] >= 0) continue;
    if (t === 0 || assign[t - 1] !== names.length - 1 || !names[names.length - 1].startsWith("template")) names.push(`template ${++gaps}`);
    assign[t] = names.length - 1;
  }
  // Generated tokens no region claims form "answer". A trace labelled by promptRegionsToTokens already
  // has an "answer" region [P, P + genLength): its tokens stay there (a second, layout-made "answer"
  // used to take them all and leave the trace's own one empty).
  for (let t = P; t < T; t++) {
    if (assign[t] >= 0) continue;
    let idx = names.indexOf("answer");
    if (idx < 0) idx = names.push("answer") - 1;
    assign[t] = idx;
  }
  if (gaps === 1) names[names.indexOf("template 1")] = "template";
  // Order regions by their first token so the figure reads left to right; regions left without a
  // token (first = −1) are dropped and named in `empty`.
  const first = names.map((_, r) => assign.indexOf(r));
  const order = names
    .map((_, r) => r)
    .filter((r) => first[r] >= 0)
    .sort((a, b) => first[a] - first[b]);
  const rank = new Int32Array(names.length).fill(-1);
  order.forEach((r, k) => (rank[r] = k));
  const empty = names.filter((_, r) => first[r] < 0);
  return {
    names: order.map((r) => names[r]),
    assign: assign.map((a) => (a < 0 ? a : rank[a])),
    ...(empty.length ? { empty } : {}),
  };
}

/**
 * The layout `region_sum` was recorded with: the sampler feeds one one-hot column per entry of
 * `trace.prompt.regions`, in order, so the probe's region axis IS that list. Tokens in no region are
 * left out; overlapping regions share tokens (both are reported as warnings by `regionRollout`).
 */
export function recordedLayout(trace: Trace): RegionLayout & { overlaps: string[]; uncovered: number } {
  const T = trace.final.sequence.length;
  const assign = new Int32Array(T).fill(-1);
  const overlaps = new Set<string>();
  trace.prompt.regions.forEach((r, k) => {
    for (let t = r.tokens[0]; t < Math.min(r.tokens[1], T); t++) {
      if (assign[t] >= 0) overlaps.add(`${trace.prompt.regions[assign[t]].name} and ${r.name}`);
      else assign[t] = k;
    }
  });
  return { names: trace.prompt.regions.map((r) => r.name), assign, overlaps: [...overlaps], uncovered: assign.filter((a) => a < 0).length };
}

/**
 * The paper's layout from the trace's region lengths: BOS [0,1), Query [1, n_header), documents end to end,
 * Answer [P, T); n_header is the header's token count WITHOUT the BOS (upstream tokenised it separately).
 * Documents are the regions named "doc …" in order; the one sharing its span with "gold" is "Gold Doc".
 */
export function upstreamLayout(trace: Trace): RegionLayout {
  const T = trace.final.sequence.length;
  const P = trace.prompt.promptLength;
  const docs = trace.prompt.regions.filter((r) => /^doc/i.test(r.name)).sort((a, b) => a.tokens[0] - b.tokens[0]);
  if (docs.length === 0)
    throw new SettingsError("the upstream layout needs document regions", {
      field: "prompt.regions",
      expected: 'regions named "doc 1", "doc 2", …',
      found: trace.prompt.regions.map((r) => r.name).join(", ") || "none",
    });
  const gold = trace.prompt.regions.find((r) => r.name === "gold");
  const bos = trace.model.bosTokenId !== undefined && trace.final.sequence[0] === trace.model.bosTokenId;
  const header = docs[0].tokens[0] - (bos ? 1 : 0);
  const names = ["BOS", "Query"];
  const assign = new Int32Array(T).fill(-1);
  assign[0] = 0;
  for (let t = 1; t < header; t++) assign[t] = 1;
  let cur = header;
  docs.forEach((d, i) => {
    const isGold = gold !== undefined && gold.tokens[0] === d.tokens[0] && gold.tokens[1] === d.tokens[1];
    const idx = names.push(isGold ? "Gold Doc" : `Doc${i + 1}`) - 1;
    for (let t = cur; t < Math.min(cur + d.tokens[1] - d.tokens[0], T); t++) assign[t] = idx;
    cur += d.tokens[1] - d.tokens[0];
  });
  const ans = names.push("Answer") - 1;
  for (let t = P; t < T; t++) assign[t] = ans;
  return { names, assign };
}

/**
 * Sum-pool a token map into regions.
 * @param A [query, key] head-mean attention.  @returns [region, regionKey].
 */
export function poolRegions(A: ArrayLike<number>, T: number, layout: RegionLayout): Float64Array {
  const R = layout.names.length;
  const out = new Float64Array(R * R);
  for (let r = 0; r < T; r++) {
    const a = layout.assign[r];
    if (a < 0) continue;
    for (let c = 0; c < T; c++) {
      const b = layout.assign[c];
      if (b >= 0) out[a * R + b] += A[r * T + c];
    }
  }
  return out;
}

/** Divide each row by its sum (an all-zero row stays zero, as upstream's guard of 1). */
export function rowNormalize(M: ArrayLike<number>, R: number): Float64Array {
  const out = Float64Array.from(M);
  for (let a = 0; a < R; a++) {
    let s = 0;
    for (let b = 0; b < R; b++) s += out[a * R + b];
    if (s !== 0) for (let b = 0; b < R; b++) out[a * R + b] /= s;
  }
  return out;
}

/**
 * Rollout over layers in ascending order: R = Â_{L−1} ⋯ Â_0 with Â = rownorm(rownorm(P_l) + I), then rownorm(R).
 * @param maps pooled maps, each [region, regionKey].
 */
export function rollout(maps: ArrayLike<number>[], R: number): Float64Array {
  let acc = new Float64Array(R * R);
  for (let a = 0; a < R; a++) acc[a * R + a] = 1;
  for (const m of maps) {
    const P = rowNormalize(m, R);
    for (let a = 0; a < R; a++) P[a * R + a] += 1;
    const A = rowNormalize(P, R);
    const next = new Float64Array(R * R);
    for (let i = 0; i < R; i++) for (let k = 0; k < R; k++) for (let j = 0; j < R; j++) next[i * R + j] += A[i * R + k] * acc[k * R + j];
    acc = next;
  }
  return rowNormalize(acc, R);
}

/** Left stationary vector π = π·M of a row-stochastic M (power iteration from uniform). */
export function stationary(M: ArrayLike<number>, R: number, iterations = 10_000): Float64Array {
  let pi = new Float64Array(R).fill(1 / R);
  for (let it = 0; it < iterations; it++) {
    const next = new Float64Array(R);
    for (let a = 0; a < R; a++) for (let b = 0; b < R; b++) next[b] += pi[a] * M[a * R + b];
    const s = next.reduce((x, y) => x + y, 0);
    let delta = 0;
    for (let b = 0; b < R; b++) {
      next[b] /= s;
      delta = Math.max(delta, Math.abs(next[b] - pi[b]));
    }
    pi = next;
    if (delta < 1e-13) break;
  }
  return pi;
}

export interface RolloutOptions {
  /** "offsets" (default) or "upstream" (the paper's layout and off-by-one). */
  layout?: "offsets" | "upstream";
  /**
   * Map source. Default: `region_sum` when the layout is "offsets" and it is recorded (its regions are then
   * exactly `trace.prompt.regions`, as the sampler fed them), else `pattern_mean`, else `pattern`.
   */
  source?: "region_sum" | "pattern_mean" | "pattern";
  samples?: string[];
  /**
   * "all" (default): every layer of the model must carry the map, else `ProbeMissingError` names the
   * missing layers (a rollout over some layers is a different quantity). "recorded": roll out over
   * the layers the trace has, with a warning in the result naming the ones left out.
   */
  layers?: "all" | "recorded";
}

export interface RolloutResult {
  /** One row per (from, to): value = R̄ (mean over samples). */
  rollout: ColumnTable;
  /** One row per (sample, layer, from, to): the row-normalised pooled map. */
  layers: Rows<{ layer: number; from: string; to: string; value: number; model: string; sample: string }>;
  /** One row per region: π. */
  stationary: ColumnTable;
  spec: RolloutSpec;
}

/** Pooled maps of one trace, [layer][region·regionKey], with the layout used. */
export function regionMaps(
  trace: Trace,
  layout: RegionLayout,
  source: "region_sum" | "pattern_mean" | "pattern",
  label = "trace",
): { layers: number[]; maps: Float64Array[] } {
  const R = layout.names.length;
  const T = trace.final.sequence.length;
  const layers = probeLayers(trace, "final", source);
  if (layers.length === 0) getProbe(trace, "final", source, 0, label); // throws the canonical message
  const maps = layers.map((l) => {
    const t = getProbe(trace, "final", source, l, label);
    if (source === "region_sum") {
      if (t.dims[0] !== R)
        throw new SettingsError("region_sum has a different region count than the layout", {
          file: label,
          field: t.name,
          expected: `${R} regions (${layout.names.join(", ")})`,
          found: `${t.dims[0]}`,
        });
      return Float64Array.from(t.data);
    }
    if (source === "pattern_mean") return poolRegions(t.data, T, layout);
    const H = t.dims[0]; // pattern [head, query, key] → head mean
    const mean = new Float64Array(T * T);
    for (let h = 0; h < H; h++) for (let i = 0; i < T * T; i++) mean[i] += t.data[h * T * T + i] / H;
    return poolRegions(mean, T, layout);
  });
  return { layers, maps };
}

/** Layers 0…numLayers−1 the trace has no map for. */
function missingLayers(trace: Trace, have: number[]): number[] {
  const set = new Set(have);
  const out: number[] = [];
  for (let l = 0; l < trace.model.numLayers; l++) if (!set.has(l)) out.push(l);
  return out;
}

const listLayers = (layers: number[]) => `layer${layers.length === 1 ? "" : "s"} ${layers.join(", ")}`;

/**
 * Region rollout over samples of one model (all traces must share the region names).
 * @example
 * const { spec, stationary } = regionRollout(traces);            // offsets layout
 * regionRollout(traces, { layout: "upstream" }).rollout.print(); // the paper's layout, off-by-one included
 */
export function regionRollout(traces: Trace | Trace[], opts: RolloutOptions = {}): RolloutResult {
  const list = Array.isArray(traces) ? traces : [traces];
  const layoutName = keyword(opts.layout ?? "offsets", ["offsets", "upstream"] as const, { field: "layout" });
  const layerRule = keyword(opts.layers ?? "all", ["all", "recorded"] as const, { field: "layers" });
  let names: string[] | undefined;
  let sum: Float64Array | undefined;
  const layerTables: RolloutResult["layers"][] = [];
  let perLayerMean: Float64Array[] = [];
  let layersUsed: number[] = [];
  const warnings = new Set<string>();
  list.forEach((trace, i) => {
    const label = trace.model.name;
    const has = (k: string) => probeLayers(trace, "final", k).length > 0;
    const source =
      opts.source ??
      (layoutName === "offsets" && has("region_sum") ? "region_sum" : has("pattern_mean") || !has("pattern") ? "pattern_mean" : "pattern");
    if (layoutName === "upstream" && source === "region_sum")
      throw new SettingsError("the upstream layout needs full maps", {
        field: "source",
        expected: '"pattern_mean" or "pattern"',
        found: '"region_sum"',
      });
    let layout: RegionLayout;
    if (source === "region_sum") {
      const rec = recordedLayout(trace);
      for (const o of rec.overlaps) warnings.add(`${label}: regions ${o} overlap, so region_sum counts their shared tokens in both`);
      if (rec.uncovered) warnings.add(`${label}: ${rec.uncovered} tokens lie in no recorded region and are left out of region_sum`);
      layout = rec;
    } else layout = layoutName === "upstream" ? upstreamLayout(trace) : offsetsLayout(trace);
    for (const e of layout.empty ?? [])
      warnings.add(`${label}: region ${e} has no token of its own (it lies inside another region) and is left out`);
    if (names && names.join("|") !== layout.names.join("|"))
      throw new SettingsError("traces have different regions", {
        file: label,
        field: "prompt.regions",
        expected: names.join(", "),
        found: layout.names.join(", "),
      });
    names = layout.names;
    const R = names.length;
    const { layers, maps } = regionMaps(trace, layout, source, label);
    const missing = missingLayers(trace, layers);
    if (missing.length > 0) {
      if (layerRule === "all") {
        throw new ProbeMissingError(
          `${label} has ${source} for ${listLayers(layers)} only: a rollout multiplies every layer's map, so ${listLayers(missing)} ${missing.length === 1 ? "is" : "are"} missing`,
          {
            file: trace.source?.file ?? label,
            field: `blocks.${missing[0]}.attn.${source}`,
            expected: `layers 0…${trace.model.numLayers - 1} (model.numLayers ${trace.model.numLayers})`,
            found: listLayers(layers),
            hint: `record every layer (${probeInfo(source)?.hint(missing[0]) ?? source} with all layers listed), or roll out over the recorded layers only (analyze rollout --layers recorded; regionRollout(…, { layers: "recorded" }))`,
          },
        );
      }
      warnings.add(
        `${label}: rolled out over ${listLayers(layers)} only; ${listLayers(missing)} of ${trace.model.numLayers} ${missing.length === 1 ? "was" : "were"} not recorded, so this is not the model's full rollout`,
      );
    }
    const sample = sampleLabel(trace.settings, i, opts.samples);
    const R2 = R * R;
    const normed = maps.map((m) => rowNormalize(m, R));
    if (i === 0) {
      perLayerMean = normed.map(() => new Float64Array(R2));
      layersUsed = layers;
    }
    normed.forEach((m, li) => m.forEach((v, x) => (perLayerMean[li][x] += v / list.length)));
    const val = new Float64Array(layers.length * R2);
    normed.forEach((m, li) => val.set(m, li * R2));
    const lc = new Int32Array(val.length),
      fc: string[] = [],
      tc: string[] = [];
    for (let x = 0; x < val.length; x++) {
      lc[x] = layers[Math.floor(x / R2)];
      fc.push(names[Math.floor((x % R2) / R)]);
      tc.push(names[x % R]);
    }
    layerTables.push(longTable({ layer: lc, from: fc, to: tc, value: val }, { model: label, sample }));
    const r = rollout(maps, R);
    sum ??= new Float64Array(R2);
    r.forEach((v, x) => (sum![x] += v / list.length));
    if (trace.model.causal)
      warnings.add(
        `${label} is causal: the first region (${names[0]}) only attends to itself, so the rollout drains to it with depth regardless of the model; read the per-layer maps instead`,
      );
  });
  const R = names!.length;
  const mean = sum!;
  const pi = stationary(mean, R);
  let spread = 0;
  for (let b = 0; b < R; b++) {
    let lo = Infinity,
      hi = -Infinity;
    for (let a = 0; a < R; a++) {
      lo = Math.min(lo, mean[a * R + b]);
      hi = Math.max(hi, mean[a * R + b]);
    }
    spread = Math.max(spread, hi - lo);
  }
  if (spread < 1e-3)
    warnings.add(
      "every row of the rollout is the same (rank-one limit): only the column profile, the stationary vector, carries information",
    );
  const from: string[] = [],
    to: string[] = [];
  for (let x = 0; x < R * R; x++) {
    from.push(names![Math.floor(x / R)]);
    to.push(names![x % R]);
  }
  const perLayer = new Float64Array(layersUsed.length * R * R);
  perLayerMean.forEach((m, li) => perLayer.set(m, li * R * R));
  const spec: RolloutSpec = {
    kind: "rollout",
    warnings: [...partialWarnings(list), ...warnings],
    model: list[0].model.name,
    regions: names!,
    matrix: { shape: [R, R], values: mean },
    perLayer: { shape: [layersUsed.length, R, R], values: perLayer },
    samples: list.length,
    stationary: Array.from(pi),
    rowSpread: spread,
    layout: layoutName,
  };
  return {
    rollout: longTable({ from, to, value: mean }, { model: list[0].model.name, layout: layoutName }),
    layers: concatTables(layerTables),
    stationary: longTable({ region: names!, value: pi }, { model: list[0].model.name }),
    spec,
  };
}
