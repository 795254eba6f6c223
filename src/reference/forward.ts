/**
 * A plain TypeScript reference forward pass: slow, obvious, Float64 accumulation, for tiny
 * configs only. Every ONNX graph variant and every in-graph probe is tested against it
 * (an obvious reference is what makes the fast paths checkable).
 *
 * It follows HF's Llama/Qwen2/LLaDA/Dream forward literally: RMSNorm, q/k/v projections
 * (+bias), half-split RoPE, softmax(q·kᵀ/√d + mask) with query head h reading kv head
 * ⌊h/(H/H_kv)⌋, SwiGLU MLP, final norm, LM head, and Dream's logit shift.
 */
import { positionIdsFromMask, ropeInvFreq } from "../graph/rope.js";
import type { ModelSpec } from "../graph/spec.js";
import { PROBES, probeNameOf, records, type ProbeKind, type ProbeRequest } from "../util/probes.js";

export interface ReferenceInput {
  /** [batch, seq] */
  ids: ArrayLike<number>;
  batch: number;
  seq: number;
  /** [batch, seq], 1 = real token; default all ones. */
  attentionMask?: ArrayLike<number>;
}

export interface ReferenceOutput {
  /** [batch, seq, vocab], shifted like the engine's output. */
  logits: Float64Array;
  /** Per layer, [batch, head, query, key]. */
  attention: Float64Array[];
  /** Per layer, [batch, head, query, dHead] pre-/post-RoPE q and [batch, kvHead, key, dHead] k. */
  q: Float64Array[];
  k: Float64Array[];
  qRot: Float64Array[];
  kRot: Float64Array[];
}

/** y[n, o] = Σ_i x[n, i]·W[o, i] (+ b[o]); W in HF [out, in] layout. */
function linear(x: Float64Array, n: number, inp: number, w: Float32Array, out: number, b?: Float32Array): Float64Array {
  const y = new Float64Array(n * out);
  for (let r = 0; r < n; r++) {
    for (let o = 0; o < out; o++) {
      let s = b ? b[o] : 0;
      for (let i = 0; i < inp; i++) s += x[r * inp + i] * w[o * inp + i];
      y[r * out + o] = s;
    }
  }
  return y;
}

function rmsNorm(x: Float64Array, n: number, d: number, w: Float32Array, eps: number): Float64Array {
  const y = new Float64Array(n * d);
  for (let r = 0; r < n; r++) {
    let ms = 0;
    for (let i = 0; i < d; i++) ms += x[r * d + i] ** 2;
    const inv = 1 / Math.sqrt(ms / d + eps);
    for (let i = 0; i < d; i++) y[r * d + i] = x[r * d + i] * inv * w[i];
  }
  return y;
}

/**
 * @param weights tensor name → values (use readTensorF32 on each; BF16/F16 already widened)
 */
export function referenceForward(spec: ModelSpec, weights: Map<string, Float32Array>, input: ReferenceInput): ReferenceOutput {
  const W = (name: string): Float32Array => {
    const t = weights.get(name);
    if (!t) throw new Error(`reference: missing weight ${name}`);
    return t;
  };
  const { batch: B, seq: T } = input;
  const { hiddenSize: D, numHeads: H, numKvHeads: KV, headDim: hd, vocabSize: V, intermediateSize: F } = spec;
  const G = H / KV;
  const N = B * T;
  const mask = Uint8Array.from({ length: N }, (_, i) => (input.attentionMask ? (input.attentionMask[i] ? 1 : 0) : 1));
  const pos = positionIdsFromMask(mask, B, T);
  const inv = ropeInvFreq(spec.rope, hd);
  const half = hd / 2;

  const embed = W(spec.weights.embed);
  let x = new Float64Array(N * D);
  for (let r = 0; r < N; r++) for (let i = 0; i < D; i++) x[r * D + i] = embed[input.ids[r] * D + i];

  const out: ReferenceOutput = { logits: new Float64Array(0), attention: [], q: [], k: [], qRot: [], kRot: [] };
  /** [B,T,heads,hd] (row-major from the projection) → rotated copy, and [B,heads,T,hd] views of both. */
  const headsFirst = (a: Float64Array, heads: number): Float64Array => {
    const y = new Float64Array(a.length);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let h = 0; h < heads; h++)
          for (let d = 0; d < hd; d++) {
            y[((b * heads + h) * T + t) * hd + d] = a[((b * T + t) * heads + h) * hd + d];
          }
    return y;
  };
  const rotate = (a: Float64Array, heads: number): Float64Array => {
    const y = new Float64Array(a.length);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++) {
        const p = pos[b * T + t];
        for (let h = 0; h < heads; h++) {
          const base = ((b * T + t) * heads + h) * hd;
          for (let d = 0; d < hd; d++) {
            const ang = p * inv[d % half];
            const rot = d < half ? -a[base + d + half] : a[base + d - half];
            y[base + d] = a[base + d] * Math.cos(ang) + rot * Math.sin(ang);
          }
        }
      }
    return y;
  };

  for (let l = 0; l < spec.numLayers; l++) {
    const w = spec.weights.blocks[l];
    const h = rmsNorm(x, N, D, W(w.attnNorm), spec.rmsNormEps);
    const bias = (name?: string) => (spec.qkvBias && name ? W(name) : undefined);
    const q = linear(h, N, D, W(w.q), H * hd, bias(w.qBias));
    const k = linear(h, N, D, W(w.k), KV * hd, bias(w.kBias));
    const v = linear(h, N, D, W(w.v), KV * hd, bias(w.vBias));
    const qr = rotate(q, H);
    const kr = rotate(k, KV);
    out.q.push(headsFirst(q, H));
    out.k.push(headsFirst(k, KV));
    out.qRot.push(headsFirst(qr, H));
    out.kRot.push(headsFirst(kr, KV));

    const P = new Float64Array(B * H * T * T);
    const attnOut = new Float64Array(N * H * hd);
    const scale = 1 / Math.sqrt(hd);
    const row = new Float64Array(T);
    for (let b = 0; b < B; b++)
      for (let hh = 0; hh < H; hh++) {
        const kvh = Math.floor(hh / G);
        for (let i = 0; i < T; i++) {
          let max = -Infinity;
          for (let j = 0; j < T; j++) {
            const allowed = mask[b * T + j] === 1 && (!spec.causal || j <= i);
            let s = 0;
            for (let d = 0; d < hd; d++) s += qr[((b * T + i) * H + hh) * hd + d] * kr[((b * T + j) * KV + kvh) * hd + d];
            // masked keys get finfo.min like HF; a fully masked row then becomes uniform
            row[j] = allowed ? s * scale : -3.4028234663852886e38;
            max = Math.max(max, row[j]);
          }
          let z = 0;
          for (let j = 0; j < T; j++) z += row[j] = Math.exp(row[j] - max);
          for (let j = 0; j < T; j++) {
            const p = row[j] / z;
            P[((b * H + hh) * T + i) * T + j] = p;
            for (let d = 0; d < hd; d++) attnOut[((b * T + i) * H + hh) * hd + d] += p * v[((b * T + j) * KV + kvh) * hd + d];
          }
        }
      }
    out.attention.push(P);
    const o = linear(attnOut, N, H * hd, W(w.o), D);
    for (let i = 0; i < x.length; i++) x[i] += o[i];

    const h2 = rmsNorm(x, N, D, W(w.mlpNorm), spec.rmsNormEps);
    const gate = linear(h2, N, D, W(w.gate), F);
    const up = linear(h2, N, D, W(w.up), F);
    for (let i = 0; i < gate.length; i++) gate[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * up[i];
    const down = linear(gate, N, F, W(w.down), D);
    x = x.map((xi, i) => xi + down[i]);
  }

  const logits = linear(rmsNorm(x, N, D, W(spec.weights.finalNorm), spec.rmsNormEps), N, D, W(spec.weights.lmHead), V);
  if (spec.logitShift === 1) {
    const shifted = new Float64Array(logits.length);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++) {
        const from = b * T + Math.max(0, t - 1);
        shifted.set(logits.subarray(from * V, (from + 1) * V), (b * T + t) * V);
      }
    out.logits = shifted;
  } else {
    out.logits = logits;
  }
  return out;
}

/** A reference probe value: row-major over `dims`. */
export interface ReferenceProbe {
  dims: number[];
  data: Float64Array;
}

/** One layer's attention maps and the run's per-query inputs, as a reference probe reads them. */
export interface ReferenceMaps {
  B: number;
  T: number;
  H: number;
  req: ProbeRequest;
  /** P[b, h, i, j] of the layer (query i, key j). */
  P(b: number, h: number, i: number, j: number): number;
  /** [batch, seq] query weights (unnormalised). */
  wq: Float64Array;
  /** [batch, seq, region], when regionSum is on. */
  regionOneHot?: ArrayLike<number>;
}

/** received_heads: Σ_q w_q P[h,q,k] / Σ_q w_q, [batch, head, key]. */
function receivedHeads({ B, T, H, P, wq }: ReferenceMaps): ReferenceProbe {
  const heads = new Float64Array(B * H * T);
  for (let b = 0; b < B; b++) {
    let wsum = 0;
    for (let i = 0; i < T; i++) wsum += wq[b * T + i];
    for (let h = 0; h < H; h++)
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let i = 0; i < T; i++) s += wq[b * T + i] * P(b, h, i, j);
        heads[(b * H + h) * T + j] = wsum > 0 ? s / wsum : 0;
      }
  }
  return { dims: [B, H, T], data: heads };
}

/** received: the head mean of received_heads, [batch, key]. */
function received(a: ReferenceMaps): ReferenceProbe {
  const { B, T, H } = a;
  const heads = receivedHeads(a).data;
  const m = new Float64Array(B * T);
  for (let b = 0; b < B; b++)
    for (let j = 0; j < T; j++) {
      for (let h = 0; h < H; h++) m[b * T + j] += heads[(b * H + h) * T + j] / H;
    }
  return { dims: [B, T], data: m };
}

/** self: mean_h P[h,k,k], [batch, key]. */
function self({ B, T, H, P }: ReferenceMaps): ReferenceProbe {
  const d = new Float64Array(B * T);
  for (let b = 0; b < B; b++) for (let j = 0; j < T; j++) for (let h = 0; h < H; h++) d[b * T + j] += P(b, h, j, j) / H;
  return { dims: [B, T], data: d };
}

/** Per head and query row, the first key of largest probability (`key`) or that probability. */
function argmax(what: "key" | "prob") {
  return ({ B, T, H, P }: ReferenceMaps): ReferenceProbe => {
    const out = new Float64Array(B * H * T);
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let i = 0; i < T; i++) {
          let best = 0;
          for (let j = 1; j < T; j++) if (P(b, h, i, j) > P(b, h, i, best)) best = j;
          out[(b * H + h) * T + i] = what === "key" ? best : P(b, h, i, best);
        }
    return { dims: [B, H, T], data: out };
  };
}

/** region_sum: Σ over query tokens of region r and key tokens of region s of mean_h P, [batch, region, region]. */
function regionSum({ B, T, H, P, req, regionOneHot }: ReferenceMaps): ReferenceProbe {
  const R = req.regionSum!.regions;
  const M = regionOneHot!;
  const s = new Float64Array(B * R * R);
  for (let b = 0; b < B; b++)
    for (let i = 0; i < T; i++)
      for (let j = 0; j < T; j++) {
        let mean = 0;
        for (let h = 0; h < H; h++) mean += P(b, h, i, j) / H;
        for (let r = 0; r < R; r++)
          for (let c = 0; c < R; c++) {
            s[(b * R + r) * R + c] += Number(M[(b * T + i) * R + r]) * mean * Number(M[(b * T + j) * R + c]);
          }
      }
  return { dims: [B, R, R], data: s };
}

/** pattern: the map of the chosen heads, [batch, head, query, key]. */
function pattern({ B, T, H, P, req }: ReferenceMaps): ReferenceProbe {
  const heads = req.pattern!.heads ?? Array.from({ length: H }, (_, h) => h);
  const d = new Float64Array(B * heads.length * T * T);
  for (let b = 0; b < B; b++)
    heads.forEach((h, hi) => {
      for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) d[((b * heads.length + hi) * T + i) * T + j] = P(b, h, i, j);
    });
  return { dims: [B, heads.length, T, T], data: d };
}

/** pattern_mean: mean_h P, [batch, query, key]. */
function patternMean({ B, T, H, P }: ReferenceMaps): ReferenceProbe {
  const d = new Float64Array(B * T * T);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < T; i++)
        for (let j = 0; j < T; j++) {
          d[(b * T + i) * T + j] += P(b, h, i, j) / H;
        }
  return { dims: [B, T, T], data: d };
}

/** The probes computed from the attention maps (q/k states are `ReferenceOutput`'s q, k, qRot, kRot). */
type MapKind = Exclude<ProbeKind, "q_rot" | "k_rot" | "q" | "k">;

/** Each probe kind's reference, computed the obvious way (the compiler asks for one per kind of the table). */
export const REFERENCE_PROBES: { readonly [K in MapKind]: (a: ReferenceMaps) => ReferenceProbe } = {
  received,
  received_heads: receivedHeads,
  self,
  argmax_key: argmax("key"),
  argmax_prob: argmax("prob"),
  region_sum: regionSum,
  pattern,
  pattern_mean: patternMean,
};

/**
 * The probe statistics, computed the obvious way from full attention maps [batch, head, query, key]
 * (so they can be checked against the graph's in-graph reductions).
 * @param queryWeight [batch, seq] unnormalised weights (default: the attention mask)
 * @param regionOneHot [batch, seq, region]
 */
export function probesFromAttention(
  spec: ModelSpec,
  attention: Float64Array[],
  req: ProbeRequest,
  run: { batch: number; seq: number; attentionMask?: ArrayLike<number>; queryWeight?: ArrayLike<number>; regionOneHot?: ArrayLike<number> },
): Map<string, ReferenceProbe> {
  const { batch: B, seq: T } = run;
  const H = spec.numHeads;
  const res = new Map<string, ReferenceProbe>();
  const wq = Float64Array.from({ length: B * T }, (_, i) => Number(run.queryWeight?.[i] ?? run.attentionMask?.[i] ?? 1));
  for (let l = 0; l < attention.length; l++) {
    const p = attention[l];
    const maps: ReferenceMaps = { B, T, H, req, wq, regionOneHot: run.regionOneHot, P: (b, h, i, j) => p[((b * H + h) * T + i) * T + j] };
    for (const info of PROBES) {
      if (info.kind in REFERENCE_PROBES && records(req, info, l))
        res.set(probeNameOf(info.kind, l), REFERENCE_PROBES[info.kind as MapKind](maps));
    }
  }
  return res;
}
