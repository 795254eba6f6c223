/**
 * The ONE sink / floating-anchor detector every analysis shares (paper §5 temporal, §6 absorption,
 * §7 QK; docs/analyses.md "Anchor rules").
 *
 * Definition: given the head-mean attention each key receives, averaged over query rows
 * (`received`, [key]), an anchor set S is the keys a named rule selects among the eligible keys
 * (those not excluded by token class).
 *
 * Rules (all over the eligible keys; ties broken towards the lower position):
 * - `first-token` — S = {0}.
 * - `bos` — S = positions whose token id is the model's BOS id (empty when the model has none, e.g. Qwen).
 * - `top-k` — the `topK` largest columns.
 * - `mean+ksigma` (alias `mean+kσ`) — c_j > μ + k·σ, μ and population σ (ddof 0) over the eligible keys, strict >.
 * - `rulli-eps` (alias `rulli-ε`) — after Rulli et al. 2025: s_j > mean_{i≠j} s_i + ε. On `scale: "sum"` (our
 *   default) s_j is the column SUM (c_j × number of query rows; the uniform value is 1, so ε = 3 means
 *   "four times uniform"); on `scale: "mean"` s_j = c_j, which is what the paper's absorption script did.
 * - `upstream` — what the paper's code does for the analysis at hand (see `upstreamRule`).
 * `fallback: "top-1"` adds the argmax when a threshold rule selects nothing.
 *
 * Where upstream differs: it has three detectors (absorption: additive ε = 3 on probabilities, which
 * never fires, so top-1; QK: μ + 3σ with argmax fallback; temporal: μ + 3σ, no fallback) and no
 * exclusions. Our default is `mean+ksigma`, k = 3, no fallback, no exclusions.
 */
import type { Trace } from "../trace/types.js";
import { SettingsError, keyword } from "../util/errors.js";
import { type PassRef, getProbe, sequenceOf } from "./probes-access.js";

export const ANCHOR_RULES = ["first-token", "bos", "top-k", "mean+ksigma", "rulli-eps", "upstream"] as const;
export type AnchorRule = (typeof ANCHOR_RULES)[number];

/** Key-side exclusions (keys that can never be anchors) and query-side ones (rows left out of the column mean). */
export const ANCHOR_EXCLUSIONS = ["diagonal", "first-row", "bos", "first-token", "mask", "eos", "pad"] as const;
export type AnchorExclusion = (typeof ANCHOR_EXCLUSIONS)[number];

/** Which upstream script's detector `rule: "upstream"` stands for. */
export type UpstreamAnalysis = "absorption" | "drift" | "qk";

export interface AnchorOptions {
  /** Default "mean+ksigma". The Greek spellings "mean+kσ" and "rulli-ε" are accepted too. */
  rule?: AnchorRule | "mean+kσ" | "rulli-ε";
  /** σ multiplier of `mean+ksigma`. Default 3. */
  k?: number;
  /** Size of `top-k`. Default 1. */
  topK?: number;
  /** ε of `rulli-eps`. Default 3. */
  epsilon?: number;
  /** Scale `rulli-eps` compares on. Default "sum". */
  scale?: "sum" | "mean";
  /** What a threshold rule returns when nothing passes. Default "none". */
  fallback?: "none" | "top-1";
  /**
   * Exclusions. Key side: `bos`, `first-token`, `mask`, `eos`, `pad` (by the token id at that position).
   * Query side: `diagonal` (needs the `self` probe) and `first-row` (causal models only: row 0 of a
   * causal map is [1, 0, …] and adds 1/T to key 0).
   */
  exclude?: AnchorExclusion[];
}

/** A rule with every parameter filled in. */
export interface ResolvedRule {
  rule: Exclude<AnchorRule, "upstream">;
  k: number;
  topK: number;
  epsilon: number;
  scale: "sum" | "mean";
  fallback: "none" | "top-1";
  exclude: AnchorExclusion[];
  /** For reports: the name the user asked for ("upstream" stays visible). */
  label: string;
}

/** What the detector needs to know about the sequence and model. */
export interface AnchorContext {
  /** Token ids of the sequence the pass saw, [key]. Needed by `bos` and the token-class exclusions. */
  ids?: ArrayLike<number>;
  /** Query rows averaged into `received`. Default: received.length. */
  numQueries?: number;
  causal?: boolean;
  bosTokenId?: number;
  maskTokenId?: number;
  eosTokenIds?: number[];
  padTokenId?: number;
}

/** The concrete rule behind `upstream` for each of the paper's scripts (docs/analyses.md). */
export function upstreamRule(analysis: UpstreamAnalysis, causal: boolean): ResolvedRule {
  const base = { k: 3, topK: 1, epsilon: 3, scale: "mean" as const, exclude: [] as AnchorExclusion[], label: "upstream" };
  if (analysis === "absorption") {
    // ARMs: S = {0}. MDMs: "c_j > mean of the other columns + 3.0" on probabilities, min_sinks = 1.
    return causal ? { ...base, rule: "first-token", fallback: "none" } : { ...base, rule: "rulli-eps", fallback: "top-1" };
  }
  // drift (create_temporal.py): μ + 3σ per step, no fallback; qk: μ + 3σ with argmax fallback.
  return { ...base, rule: "mean+ksigma", fallback: analysis === "qk" ? "top-1" : "none" };
}

/** Check and fill an options object; `upstream` resolves to the script-specific rule. */
export function resolveRule(opts: AnchorOptions = {}, analysis: UpstreamAnalysis = "absorption", causal = false): ResolvedRule {
  const raw = opts.rule === "mean+kσ" ? "mean+ksigma" : opts.rule === "rulli-ε" ? "rulli-eps" : (opts.rule ?? "mean+ksigma");
  const rule = keyword(raw, ANCHOR_RULES, { field: "rule" });
  const exclude = (opts.exclude ?? []).map((e) => keyword(e, ANCHOR_EXCLUSIONS, { field: "exclude" }));
  if (rule === "upstream") {
    const r = upstreamRule(analysis, causal);
    return { ...r, exclude };
  }
  const k = opts.k ?? 3;
  const topK = opts.topK ?? 1;
  const epsilon = opts.epsilon ?? 3;
  if (!Number.isFinite(k)) throw new SettingsError("bad k", { field: "k", expected: "a finite number", found: String(k) });
  if (!Number.isInteger(topK) || topK < 1)
    throw new SettingsError("bad topK", { field: "topK", expected: "an integer ≥ 1", found: String(topK) });
  if (!Number.isFinite(epsilon))
    throw new SettingsError("bad epsilon", { field: "epsilon", expected: "a finite number", found: String(epsilon) });
  return {
    rule,
    k,
    topK,
    epsilon,
    scale: keyword(opts.scale ?? "sum", ["sum", "mean"] as const, { field: "scale" }),
    fallback: keyword(opts.fallback ?? "none", ["none", "top-1"] as const, { field: "fallback" }),
    exclude,
    label: rule,
  };
}

/**
 * Column means with query rows left out (`diagonal`, `first-row`), from the `received` probe alone.
 * The column sum of key j is numQueries·c_j; we subtract the removed entries and divide by the rows left.
 * @param received [key]
 * @param self [key] — mean_h P[h,j,j]; required with `diagonal`.
 */
export function adjustReceived(
  received: ArrayLike<number>,
  opts: { numQueries?: number; self?: ArrayLike<number>; diagonal?: boolean; firstRow?: boolean; causal?: boolean },
): Float64Array {
  const n = received.length;
  const nq = opts.numQueries ?? n;
  const dropFirst = !!opts.firstRow && !!opts.causal; // row 0 is only trivial under a causal mask
  if (opts.diagonal && !opts.self)
    throw new SettingsError("excluding the diagonal needs the self probe", { field: "exclude", expected: "a `self` vector" });
  const out = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    let sum = nq * received[j];
    let rows = nq;
    if (opts.diagonal && j < nq) {
      sum -= opts.self![j];
      rows -= 1;
    }
    // Row 0 of a causal map is e_0; when the diagonal is already out, P[0,0] is gone for key 0.
    if (dropFirst && !(opts.diagonal && j === 0)) {
      if (j === 0) sum -= 1;
      rows -= 1;
    }
    out[j] = rows > 0 ? sum / rows : NaN;
  }
  return out;
}

/** true where key j may be an anchor, from the key-side exclusions. */
export function eligibleKeys(n: number, exclude: AnchorExclusion[], ctx: AnchorContext): Uint8Array {
  const ok = new Uint8Array(n).fill(1);
  const byId = exclude.filter((e) => e === "bos" || e === "mask" || e === "eos" || e === "pad");
  if (byId.length && !ctx.ids)
    throw new SettingsError("token-class exclusions need token ids", { field: "exclude", found: byId.join(", ") });
  if (exclude.includes("first-token") && n > 0) ok[0] = 0;
  const ids = ctx.ids;
  if (ids) {
    const bad = new Set<number>();
    if (exclude.includes("bos") && ctx.bosTokenId !== undefined) bad.add(ctx.bosTokenId);
    if (exclude.includes("mask") && ctx.maskTokenId !== undefined) bad.add(ctx.maskTokenId);
    if (exclude.includes("eos")) for (const e of ctx.eosTokenIds ?? []) bad.add(e);
    if (exclude.includes("pad") && ctx.padTokenId !== undefined) bad.add(ctx.padTokenId);
    for (let j = 0; j < n; j++) if (bad.has(ids[j])) ok[j] = 0;
  }
  return ok;
}

/** Indices of the `k` largest eligible values, ties to the lower index, returned ascending. */
export function topKIndices(values: ArrayLike<number>, k: number, eligible?: Uint8Array): Int32Array {
  const idx: number[] = [];
  for (let j = 0; j < values.length; j++) if ((!eligible || eligible[j]) && !Number.isNaN(values[j])) idx.push(j);
  idx.sort((a, b) => values[b] - values[a] || a - b);
  return Int32Array.from(idx.slice(0, k)).sort();
}

/** Population mean and σ (ddof 0) over eligible, non-NaN entries. */
export function meanStd(values: ArrayLike<number>, eligible?: Uint8Array): { mean: number; std: number; count: number } {
  let s = 0;
  let n = 0;
  for (let j = 0; j < values.length; j++) {
    if ((!eligible || eligible[j]) && !Number.isNaN(values[j])) {
      s += values[j];
      n++;
    }
  }
  const mean = n ? s / n : NaN;
  let v = 0;
  for (let j = 0; j < values.length; j++) if ((!eligible || eligible[j]) && !Number.isNaN(values[j])) v += (values[j] - mean) ** 2;
  return { mean, std: n ? Math.sqrt(v / n) : NaN, count: n };
}

/**
 * The anchor set of one attention pass.
 * @param received [key] — column means (already adjusted for query-side exclusions if wanted).
 * @returns anchor positions, ascending.
 */
export function detectAnchors(received: ArrayLike<number>, rule: ResolvedRule, ctx: AnchorContext = {}): Int32Array {
  const n = received.length;
  const ok = eligibleKeys(n, rule.exclude, ctx);
  let picked: number[] = [];
  switch (rule.rule) {
    case "first-token":
      picked = n > 0 && ok[0] ? [0] : [];
      break;
    case "bos": {
      if (!ctx.ids) throw new SettingsError("rule 'bos' needs token ids", { field: "rule", expected: "the sequence's token ids" });
      if (ctx.bosTokenId !== undefined) for (let j = 0; j < n; j++) if (ok[j] && ctx.ids[j] === ctx.bosTokenId) picked.push(j);
      break;
    }
    case "top-k":
      return topKIndices(received, rule.topK, ok);
    case "mean+ksigma": {
      const { mean, std } = meanStd(received, ok);
      const thr = mean + rule.k * std;
      for (let j = 0; j < n; j++) if (ok[j] && received[j] > thr) picked.push(j);
      break;
    }
    case "rulli-eps": {
      const f = rule.scale === "sum" ? (ctx.numQueries ?? n) : 1;
      let total = 0;
      let m = 0;
      for (let j = 0; j < n; j++) {
        if (ok[j] && !Number.isNaN(received[j])) {
          total += f * received[j];
          m++;
        }
      }
      for (let j = 0; j < n; j++) {
        if (!ok[j] || m < 2) continue;
        const s = f * received[j];
        if (s > (total - s) / (m - 1) + rule.epsilon) picked.push(j);
      }
      break;
    }
  }
  if (picked.length === 0 && rule.fallback === "top-1" && (rule.rule === "mean+ksigma" || rule.rule === "rulli-eps")) {
    return topKIndices(received, 1, ok);
  }
  return Int32Array.from(picked);
}

/** The detector context of a trace's pass: its token ids and the model's special ids. */
export function anchorContext(trace: Trace, pass: PassRef): AnchorContext {
  const m = trace.model;
  return {
    ids: sequenceOf(trace, pass),
    causal: m.causal,
    bosTokenId: m.bosTokenId,
    maskTokenId: m.maskTokenId,
    eosTokenIds: m.eosTokenIds,
    padTokenId: m.padTokenId,
  };
}

/**
 * Column means of one (pass, layer) of a trace with the rule's query-side exclusions applied: reads
 * `received` (and `self` when the diagonal is excluded).
 */
export function passReceived(trace: Trace, pass: PassRef, layer: number, rule: ResolvedRule, label = "trace"): Float64Array {
  const rec = getProbe(trace, pass, "received", layer, label).data;
  const diagonal = rule.exclude.includes("diagonal");
  const self = diagonal ? getProbe(trace, pass, "self", layer, label).data : undefined;
  return adjustReceived(rec, { self, diagonal, firstRow: rule.exclude.includes("first-row"), causal: trace.model.causal });
}

/** Column means and anchor set of one (pass, layer) of a trace. */
export function passAnchors(
  trace: Trace,
  pass: PassRef,
  layer: number,
  rule: ResolvedRule,
  label = "trace",
): { received: Float64Array; anchors: Int32Array; ctx: AnchorContext } {
  const received = passReceived(trace, pass, layer, rule, label);
  const ctx = anchorContext(trace, pass);
  return { received, anchors: detectAnchors(received, rule, ctx), ctx };
}

/** Words for a resolved rule, e.g. "mean+ksigma (k=3)" or "upstream (rulli-eps, mean scale, ε=3 → top-1)". */
export function describeRule(r: ResolvedRule): string {
  const core =
    r.rule === "mean+ksigma"
      ? `mean+ksigma (k=${r.k})`
      : r.rule === "top-k"
        ? `top-k (k=${r.topK})`
        : r.rule === "rulli-eps"
          ? `rulli-eps (ε=${r.epsilon}, ${r.scale} scale)`
          : r.rule;
  const fb = r.fallback === "top-1" ? ", fallback top-1" : "";
  const ex = r.exclude.length ? `, excluding ${r.exclude.join(", ")}` : "";
  return r.label === "upstream" ? `upstream: ${core}${fb}${ex}` : `${core}${fb}${ex}`;
}
