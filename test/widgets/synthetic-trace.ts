/**
 * Hand-made traces for the widget tests and the scrubber benchmark: an MDM run (LLaDA-like,
 * bidirectional, positions unmasked over the steps) or an ARM run (one token per step, keys grow),
 * with a known floating anchor so tests can check where the view must highlight it.
 *
 * Attention received is a uniform floor plus a bump: in "shallow" layers (l < L/2) the bump sits on
 * the mask frontier and drifts right by one position per step; in deep layers it stays on
 * position `deepAnchor`. Rows of the full maps (pattern_mean) are the same profile, normalised.
 */
import type { Trace, TraceStep } from "../../src/trace/types.js";
import type { ProbeTensor } from "../../src/util/probes.js";

export interface SyntheticOptions {
  tokens?: string[];
  promptLength: number;
  genLength: number;
  steps: number;
  layers: number;
  heads: number;
  causal?: boolean;
  /** Record received_heads (default false). */
  perHead?: boolean;
  /** Layers that record pattern_mean full maps (default none). */
  mapLayers?: number[];
  /**
   * Layers that record per-head maps (`pattern`, [head, query, key]; default none). Head h's query i
   * attends most to key `syntheticHeadKey(h, i)`.
   */
  headMapLayers?: number[];
  /** Position of the deep-layer anchor (default: last prompt token). */
  deepAnchor?: number;
}

function tensor(name: string, axes: ProbeTensor["axes"], dims: number[], data: Float32Array): ProbeTensor {
  return { name, axes, dims, data };
}

/** Anchor position of (step, layer) in the synthetic world. */
export function syntheticAnchor(o: SyntheticOptions, step: number, layer: number): number {
  const N = o.promptLength + o.genLength;
  if (layer < o.layers / 2) return Math.min(N - 1, o.promptLength + (step % o.genLength));
  return o.deepAnchor ?? o.promptLength - 1;
}

/** The key head h's query i attends to most in the per-head maps (causal: never a later key). */
export function syntheticHeadKey(h: number, i: number, n: number, causal: boolean): number {
  return causal ? Math.max(0, i - h) : (i + h) % n;
}

export function syntheticTrace(o: SyntheticOptions): Trace {
  const P = o.promptLength;
  const G = o.genLength;
  const N = P + G;
  const causal = o.causal ?? false;
  const tokens = o.tokens ?? Array.from({ length: N }, (_, j) => (j < P ? `p${j}` : `g${j - P}`));
  if (tokens.length !== N) throw new Error(`tokens: expected ${N}, got ${tokens.length}`);
  // MDM: generated positions are unmasked over the steps in a scrambled order; ARM: one per step.
  const unmaskedAt = new Int32Array(N).fill(-1);
  const order = Array.from({ length: G }, (_, g) => g);
  let seed = 12345;
  for (let i = G - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const k = seed % (i + 1);
    [order[i], order[k]] = [order[k], order[i]];
  }
  for (let g = 0; g < G; g++) {
    if (causal) unmaskedAt[P + g] = Math.min(o.steps - 1, g);
    else unmaskedAt[P + order[g]] = Math.floor((g * o.steps) / G);
  }
  const steps: TraceStep[] = [];
  for (let s = 0; s < o.steps; s++) {
    const n = causal ? Math.min(N, P + s + 1) : N;
    const probes = new Map<string, ProbeTensor>();
    for (let l = 0; l < o.layers; l++) {
      const a = syntheticAnchor(o, s, l);
      const base = new Float32Array(n);
      for (let j = 0; j < n; j++) base[j] = 1 / n + 0.002 * Math.sin(j * 0.7 + l + s * 0.3);
      if (a < n) base[a] += 0.5;
      let sum = 0;
      for (const v of base) sum += v;
      for (let j = 0; j < n; j++) base[j] /= sum;
      probes.set(`blocks.${l}.attn.received`, tensor(`blocks.${l}.attn.received`, ["key"], [n], base));
      if (o.perHead) {
        const rh = new Float32Array(o.heads * n);
        for (let h = 0; h < o.heads; h++) for (let j = 0; j < n; j++) rh[h * n + j] = base[j] * (1 + 0.1 * Math.cos(h + j));
        probes.set(`blocks.${l}.attn.received_heads`, tensor(`blocks.${l}.attn.received_heads`, ["head", "key"], [o.heads, n], rh));
      }
      if (o.mapLayers?.includes(l)) {
        const m = new Float32Array(n * n);
        for (let i = 0; i < n; i++) {
          let rs = 0;
          for (let j = 0; j < n; j++) {
            const v = causal && j > i ? 0 : base[j] + (i === j ? 0.05 : 0);
            m[i * n + j] = v;
            rs += v;
          }
          for (let j = 0; j < n; j++) m[i * n + j] /= rs;
        }
        probes.set(`blocks.${l}.attn.pattern_mean`, tensor(`blocks.${l}.attn.pattern_mean`, ["query", "key"], [n, n], m));
      }
      if (o.headMapLayers?.includes(l)) {
        const m = new Float32Array(o.heads * n * n);
        for (let h = 0; h < o.heads; h++) {
          for (let i = 0; i < n; i++) {
            const o2 = (h * n + i) * n;
            const spike = syntheticHeadKey(h, i, n, causal);
            let rs = 0;
            for (let j = 0; j < n; j++) {
              const v = causal && j > i ? 0 : base[j] + (j === spike ? 0.6 : 0);
              m[o2 + j] = v;
              rs += v;
            }
            for (let j = 0; j < n; j++) m[o2 + j] /= rs;
          }
        }
        probes.set(`blocks.${l}.attn.pattern`, tensor(`blocks.${l}.attn.pattern`, ["head", "query", "key"], [o.heads, n, n], m));
      }
    }
    const transferred = Int32Array.from([...unmaskedAt.keys()].filter((j) => unmaskedAt[j] === s));
    steps.push({
      step: s,
      block: 0,
      // The prompt's ids (0…P−1) head every canvas, as in a real run (the reader checks it).
      canvas: Int32Array.from({ length: n }, (_, j) => (j < P ? j : 0)),
      transferred,
      tokens: new Int32Array(transferred.length),
      confidence: new Float32Array(transferred.length),
      producingRow: transferred,
      probes,
    });
  }
  return {
    formatVersion: 1,
    model: {
      name: causal ? "synthetic-arm" : "synthetic-mdm",
      family: causal ? "llama" : "llada",
      numLayers: o.layers,
      numHeads: o.heads,
      numKvHeads: o.heads,
      headDim: 8,
      causal,
      logitShift: 0,
      eosTokenIds: [],
    },
    prompt: {
      text: tokens.slice(0, P).join(""),
      ids: Array.from({ length: P }, (_, i) => i),
      promptLength: P,
      regions: [{ name: "query", tokens: [0, P], chars: [0, 0] }],
    },
    tokens,
    offsets: tokens.map(() => [0, 0] as [number, number]),
    settings: { sampler: causal ? "arm" : "llada", steps: o.steps },
    probes: { received: true },
    steps,
    final: { sequence: Int32Array.from({ length: N }, (_, j) => (j < P ? j : 0)), probes: new Map() },
    unmaskedAt,
    answer: "",
    completion: "",
    seed: 0,
    stream: 0,
    device: "cpu",
    partial: false,
  } as Trace;
}
