/**
 * QK geometric decomposition — paper §7 / Fig. 4 (`QK_decomposition.py`, README §3).
 *
 * Definition: each pre-softmax score splits exactly as s_ij = ‖q_i‖‖k_j‖ · cos θ_ij; per layer we report
 * the three [query, key] maps and how much of the floating columns' score advantage over the other
 * columns comes from the angle (cos θ) and how much from the norms (‖q‖‖k‖).
 *
 * Where our default differs from upstream (docs/analyses.md), each switchable:
 * - GQA: query head h reads KV head ⌊h / (H/H_kv)⌋ (consecutive repetition, as the models do); upstream
 *   used h mod H_kv, wrong whenever H_kv < H (Dream 28:4).
 * - Head averaging: default "score-mean", the mean over heads of per-head score maps (scores the model
 *   actually computes); upstream averaged the q and k VECTORS first ("vector-mean"), a score no head computes.
 * - Scale: default includes 1/√d (what the softmax sees); upstream used the raw dot product.
 * - Causal mask: default from the model; upstream masked everything whose file path lacked "llada"
 *   (so Dream was masked as if causal).
 * `upstream: true` restores all four, plus the [0, 256) token window. The floating set is the shared
 * detector with the upstream QK rule (μ + 3σ of the column means, argmax fallback) in both modes.
 */
import type { QKSpec, QkSummarySpec } from "./figure-data.js";
import type { Trace } from "../trace/types.js";
import { SettingsError } from "../util/errors.js";
import { type AnchorOptions, anchorContext, detectAnchors, passReceived, resolveRule } from "./anchors.js";
import { type PassRef, getProbe, partialWarnings, resolveLayers } from "./probes-access.js";
import { type ColumnTable, concatTables, longTable, type Rows } from "./tables.js";

/** KV head read by query head h: ⌊h / (H/H_kv)⌋, or upstream's h mod H_kv. */
export function kvHeadOf(h: number, numHeads: number, numKvHeads: number, mapping: "grouped" | "upstream" = "grouped"): number {
  if (numHeads % numKvHeads !== 0)
    throw new SettingsError("heads not divisible by KV heads", {
      field: "numKvHeads",
      expected: `a divisor of ${numHeads}`,
      found: String(numKvHeads),
    });
  return mapping === "upstream" ? h % numKvHeads : Math.floor(h / (numHeads / numKvHeads));
}

/** The three maps, each [query, key]; NaN where a causal mask hides the key. */
export interface QkParts {
  score: Float64Array;
  cos: Float64Array;
  normProd: Float64Array;
  dims: [number, number];
}

/**
 * Score, cos θ and norm product of one query set against one key set.
 * @param q [query, dHead]  @param k [key, dHead]
 * @param opts.scale multiplies score and normProd (1/√d for what the softmax sees); cos is scale-free.
 * @param opts.causal hide keys after the query (absolute positions `offset + index`).
 */
export function qkParts(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  numQuery: number,
  numKey: number,
  dHead: number,
  opts: { scale?: number; causal?: boolean } = {},
): QkParts {
  const scale = opts.scale ?? 1;
  const qn = rowNorms(q, numQuery, dHead);
  const kn = rowNorms(k, numKey, dHead);
  const n = numQuery * numKey;
  const score = new Float64Array(n);
  const cos = new Float64Array(n);
  const normProd = new Float64Array(n);
  for (let i = 0; i < numQuery; i++) {
    for (let j = 0; j < numKey; j++) {
      const at = i * numKey + j;
      if (opts.causal && j > i) {
        score[at] = cos[at] = normProd[at] = NaN;
        continue;
      }
      let dot = 0;
      for (let d = 0; d < dHead; d++) dot += q[i * dHead + d] * k[j * dHead + d];
      const np = qn[i] * kn[j];
      score[at] = scale * dot;
      normProd[at] = scale * np;
      cos[at] = dot / Math.max(np, 1e-12); // upstream's guard
    }
  }
  return { score, cos, normProd, dims: [numQuery, numKey] };
}

function rowNorms(x: ArrayLike<number>, rows: number, d: number): Float64Array {
  const out = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += x[r * d + c] ** 2;
    out[r] = Math.sqrt(s);
  }
  return out;
}

/** Slice head `h`, rows [start, end) of a [head, seq, dHead] tensor. */
export function headRows(x: ArrayLike<number>, h: number, seq: number, dHead: number, start: number, end: number): Float64Array {
  const out = new Float64Array((end - start) * dHead);
  const base = h * seq * dHead;
  for (let r = start; r < end; r++) for (let d = 0; d < dHead; d++) out[(r - start) * dHead + d] = x[base + r * dHead + d];
  return out;
}

/** Mean over heads of a [head, seq, dHead] tensor, rows [start, end) → [seq', dHead]. */
export function meanHeadRows(x: ArrayLike<number>, heads: number, seq: number, dHead: number, start: number, end: number): Float64Array {
  const out = new Float64Array((end - start) * dHead);
  for (let h = 0; h < heads; h++) {
    const r = headRows(x, h, seq, dHead, start, end);
    for (let i = 0; i < out.length; i++) out[i] += r[i] / heads;
  }
  return out;
}

/**
 * Floating vs other columns. `advantage` = mean over (row i, floating f, other o), both visible to i, of
 * s_if − s_io, split exactly (midpoint rule for a product) into
 * angleTerm = mean of ½(n_if + n_io)(c_if − c_io) and normTerm = mean of ½(c_if + c_io)(n_if − n_io).
 * @param floating key indices into the maps' key axis.
 */
export function floatingAdvantage(p: QkParts, floating: ArrayLike<number>): Omit<QkSummarySpec, "layer"> {
  const [nq, nk] = p.dims;
  const isF = new Uint8Array(nk);
  for (let i = 0; i < floating.length; i++) isF[floating[i]] = 1;
  let angle = 0,
    norm = 0,
    count = 0;
  const m = { cf: 0, co: 0, nf: 0, no: 0, kf: 0, ko: 0 };
  for (let i = 0; i < nq; i++) {
    const row = i * nk;
    for (let j = 0; j < nk; j++) {
      const c = p.cos[row + j];
      if (Number.isNaN(c)) continue;
      if (isF[j]) {
        m.cf += c;
        m.nf += p.normProd[row + j];
        m.kf++;
      } else {
        m.co += c;
        m.no += p.normProd[row + j];
        m.ko++;
      }
    }
    for (let f = 0; f < nk; f++) {
      if (!isF[f] || Number.isNaN(p.cos[row + f])) continue;
      const cf = p.cos[row + f],
        nf = p.normProd[row + f];
      for (let o = 0; o < nk; o++) {
        if (isF[o] || Number.isNaN(p.cos[row + o])) continue;
        const co = p.cos[row + o],
          no = p.normProd[row + o];
        angle += 0.5 * (nf + no) * (cf - co);
        norm += 0.5 * (cf + co) * (nf - no);
        count++;
      }
    }
  }
  return {
    cosFloating: m.cf / m.kf,
    cosOther: m.co / m.ko,
    normFloating: m.nf / m.kf,
    normOther: m.no / m.ko,
    advantage: (angle + norm) / count,
    angleTerm: angle / count,
    normTerm: norm / count,
  };
}

export interface QkOptions extends AnchorOptions {
  /** Layers. Default: every layer with q/k probes in the pass. */
  layers?: number[] | "all";
  pass?: PassRef;
  /** "score-mean" (default), "vector-mean" (the paper's), or one query head. */
  heads?: "score-mean" | "vector-mean" | number;
  /** Post-RoPE (`q_rot`/`k_rot`, default) or pre-RoPE (`q`/`k`). */
  rope?: "post" | "pre";
  /** Multiply scores by 1/√d. Default true (upstream: false). */
  scaled?: boolean;
  /** Token window [start, end). Default all (upstream: [0, 256)). */
  window?: [number, number];
  /** Reproduce the paper's code: h mod H_kv, vector-mean, unscaled, causal unless family "llada", window [0, 256). */
  upstream?: boolean;
}

/** A row of `QkResult.summary`: one layer of one trace. */
export type QkSummaryRow = { layer: number; model: string; heads: string; angleShare: number } & Record<
  "cosFloating" | "cosOther" | "normFloating" | "normOther" | "advantage" | "angleTerm" | "normTerm",
  number
>;

export interface QkResult {
  /** One row per (layer, query, key): score, cos, normProd, anchor (the key is an anchor); NaN where masked. */
  table: ColumnTable;
  /** One row per layer: floating vs other means, the angle/norm split of the advantage, and angleShare = angleTerm / advantage. */
  summary: Rows<QkSummaryRow>;
  spec: QKSpec;
}

/**
 * QK decomposition of one trace pass.
 * @example
 * const { summary } = qkDecomposition(trace, { layers: [1, 11, 28] });
 * summary.select("layer", "advantage", "angleTerm", "normTerm").print();
 */
export function qkDecomposition(trace: Trace, opts: QkOptions = {}): QkResult {
  const up = !!opts.upstream;
  const label = trace.model.name;
  const pass = opts.pass ?? "final";
  const heads = opts.heads ?? (up ? "vector-mean" : "score-mean");
  const pre = (opts.rope ?? "post") === "pre";
  const [qKind, kKind] = pre ? ["q", "k"] : ["q_rot", "k_rot"];
  const scaled = opts.scaled ?? !up;
  const causal = up ? trace.model.family !== "llada" : trace.model.causal;
  const rule = resolveRule({ fallback: "top-1", ...opts, ...(up ? { rule: "upstream" as const } : {}) }, "qk", trace.model.causal);
  const { numHeads: H, numKvHeads: Hkv, headDim: d } = trace.model;
  if (typeof heads === "number" && !(Number.isInteger(heads) && heads >= 0 && heads < H)) {
    throw new SettingsError("head out of range", {
      field: "heads",
      expected: `"score-mean", "vector-mean" or an integer in [0, ${H})`,
      found: String(heads),
    });
  }
  const layers = resolveLayers(trace, pass, qKind, opts.layers, label);
  const tables: ColumnTable[] = [];
  let window: [number, number] = [0, 0];
  const panels: QKSpec["panels"] = [];
  const summaries: QkSummarySpec[] = [];
  for (const layer of layers) {
    const q = getProbe(trace, pass, qKind, layer, label);
    const k = getProbe(trace, pass, kKind, layer, label);
    const T = q.dims[1];
    const [start, end] = windowOf(opts.window ?? (up ? [0, 256] : [0, T]), T);
    const n = end - start;
    window = [start, end];
    const scale = scaled ? 1 / Math.sqrt(d) : 1;
    // Floating keys: the shared detector on the column means, restricted to the window.
    const ctx = anchorContext(trace, pass);
    const win = passReceived(trace, pass, layer, rule, label).subarray(start, end);
    const floating = detectAnchors(win, rule, { ...ctx, ids: Array.from(ctx.ids ?? []).slice(start, end) });
    const partsOf = (h: number) =>
      qkParts(
        headRows(q.data, h, T, d, start, end),
        headRows(k.data, kvHeadOf(h, H, Hkv, up ? "upstream" : "grouped"), T, d, start, end),
        n,
        n,
        d,
        { scale, causal },
      );
    let parts: QkParts;
    let sum: Omit<QkSummarySpec, "layer">;
    if (heads === "vector-mean") {
      parts = qkParts(meanHeadRows(q.data, H, T, d, start, end), meanHeadRows(k.data, Hkv, T, d, start, end), n, n, d, { scale, causal });
      sum = floatingAdvantage(parts, floating);
    } else if (heads === "score-mean") {
      // One head at a time (H full maps at once would not fit for long prompts): running means.
      parts = { score: new Float64Array(n * n), cos: new Float64Array(n * n), normProd: new Float64Array(n * n), dims: [n, n] };
      const acc: Record<string, number> = {};
      for (let h = 0; h < H; h++) {
        const p = partsOf(h);
        addScaled(parts, p, 1 / H);
        for (const [key, v] of Object.entries(floatingAdvantage(p, floating))) acc[key] = (acc[key] ?? 0) + v / H;
      }
      sum = acc as unknown as typeof sum;
    } else {
      parts = partsOf(heads);
      sum = floatingAdvantage(parts, floating);
    }
    const abs = Array.from(floating, (f) => f + start);
    const isF = new Set(abs);
    const qi = new Int32Array(n * n),
      ki = new Int32Array(n * n);
    for (let i = 0; i < n * n; i++) {
      qi[i] = start + Math.floor(i / n);
      ki[i] = start + (i % n);
    }
    tables.push(
      longTable(
        { query: qi, key: ki, score: parts.score, cos: parts.cos, normProd: parts.normProd, anchor: Array.from(ki, (j) => isF.has(j)) },
        { model: label, layer, heads: String(heads) },
      ),
    );
    summaries.push({ layer, ...sum });
    panels.push({
      layer,
      ...(typeof heads === "number" ? { head: heads } : {}),
      start,
      score: { shape: [n, n], values: parts.score },
      cos: { shape: [n, n], values: parts.cos },
      normProduct: { shape: [n, n], values: parts.normProd },
      anchors: abs,
    });
  }
  const s = summaries;
  const col = (key: keyof QkSummarySpec) => Float64Array.from(s, (r) => r[key]);
  const summary = longTable(
    {
      layer: Int32Array.from(layers),
      cosFloating: col("cosFloating"),
      cosOther: col("cosOther"),
      normFloating: col("normFloating"),
      normOther: col("normOther"),
      advantage: col("advantage"),
      angleTerm: col("angleTerm"),
      normTerm: col("normTerm"),
      // Share of the advantage carried by the angle (the rest by the norms); NaN when there is no advantage.
      angleShare: Float64Array.from(s, (r) => (Math.abs(r.advantage) > 1e-12 ? r.angleTerm / r.advantage : NaN)),
    },
    { model: label, heads: String(heads) },
  );
  const warnings: string[] = partialWarnings([trace]);
  if (up && H !== Hkv && typeof heads === "number")
    warnings.push(
      `upstream head mapping h mod ${Hkv} is wrong for GQA: head ${heads} reads KV head ${heads % Hkv}, the model uses ${kvHeadOf(heads, H, Hkv)}`,
    );
  if (up && causal !== trace.model.causal)
    warnings.push(`upstream masks by path name: ${label} treated as ${causal ? "causal" : "bidirectional"}`);
  const spec: QKSpec = {
    kind: "qk",
    warnings,
    model: label,
    tokens: trace.tokens.slice(window[0], window[1]),
    panels,
    summary: s,
    heads: typeof heads === "number" ? `head ${heads}` : heads,
    rope: pre ? "pre" : "post",
    scaled,
  };
  return { table: concatTables(tables), summary, spec };
}

function windowOf(w: [number, number], T: number): [number, number] {
  const start = Math.max(0, w[0]);
  const end = Math.min(T, w[1]);
  if (!(end > start))
    throw new SettingsError("empty token window", { field: "window", expected: `[start, end) inside [0, ${T})`, found: `[${w}]` });
  return [start, end];
}

/** out += w · p, cell by cell, for the three maps. */
function addScaled(out: QkParts, p: QkParts, w: number): void {
  for (let i = 0; i < out.score.length; i++) {
    out.score[i] += w * p.score[i];
    out.cos[i] += w * p.cos[i];
    out.normProd[i] += w * p.normProd[i];
  }
}
