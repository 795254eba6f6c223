/**
 * A fake `Engine` for sampler tests: logits and probes come from hand-written functions of each
 * row's UNPADDED canvas, so a row gives the same numbers alone or left-padded in a batch (as the
 * real engine does up to rounding), and tests can compute by hand what the sampler must pick.
 * Also a tiny word-level `TextTokenizer` ("t7" ↔ id 7).
 */
import { ADAPTERS } from "../../src/families/index.js";
import type { Family, ModelSpec } from "../../src/graph/spec.js";
import type { ChatMessage, Encoding, Engine, ForwardInput, ForwardOutput, TextTokenizer } from "../../src/runtime/types.js";
import type { ProbeRequest, ProbeTensor } from "../../src/util/probes.js";

/** Logits of one position given the row's unpadded canvas: [vocab]. */
export type LogitsFn = (canvas: Int32Array, pos: number) => Float32Array;

export interface FakeEngineOptions {
  family?: Family;
  vocabSize?: number;
  numLayers?: number;
  numHeads?: number;
  maskTokenId?: number;
  eosTokenIds?: number[];
  logitShift?: 0 | 1;
  causal?: boolean;
  maxPositionEmbeddings?: number;
  probes?: ProbeRequest;
  logits?: LogitsFn;
}

export function fakeSpec(o: FakeEngineOptions = {}): ModelSpec {
  const family = o.family ?? "llada";
  const mdm = ADAPTERS[family].flags.masked;
  return {
    family,
    architecture: `Fake${family}`,
    vocabSize: o.vocabSize ?? 32,
    hiddenSize: 8,
    numLayers: o.numLayers ?? 2,
    numHeads: o.numHeads ?? 2,
    numKvHeads: 1,
    headDim: 4,
    intermediateSize: 16,
    rmsNormEps: 1e-5,
    rope: { theta: 10000 },
    maxPositionEmbeddings: o.maxPositionEmbeddings ?? 256,
    causal: o.causal ?? !mdm,
    qkvBias: false,
    logitShift: o.logitShift ?? ADAPTERS[family].flags.logitShift,
    maskTokenId: mdm ? (o.maskTokenId ?? 31) : undefined,
    bosTokenId: 1,
    eosTokenIds: o.eosTokenIds ?? [2],
    padTokenId: 0,
    addsBos: false,
    weights: { embed: "e", finalNorm: "n", lmHead: "h", blocks: [] },
  };
}

/**
 * Default logits: position p prefers token 3 + ((p + Σ unmasked ids) mod (V − 5)) with a sharpness
 * that varies with p, so confidences differ between positions and depend on the canvas.
 */
export function defaultLogits(spec: ModelSpec): LogitsFn {
  const V = spec.vocabSize;
  return (canvas, pos) => {
    let s = 0;
    for (const t of canvas) if (t !== spec.maskTokenId) s += t;
    const target = 3 + ((pos + s) % (V - 5));
    const sharp = 0.5 + ((pos * 7 + s) % 11) / 4;
    const out = new Float32Array(V);
    for (let v = 0; v < V; v++) out[v] = -sharp * Math.abs(v - target) + 0.01 * ((v * 13 + pos) % 7);
    if (spec.maskTokenId !== undefined) out[spec.maskTokenId] = -50; // as trained MDMs: never predict the mask
    return out;
  };
}

export class FakeEngine implements Engine {
  readonly spec: ModelSpec;
  readonly probes: ProbeRequest;
  readonly device = "cpu";
  /** Every input the sampler sent, in order. */
  readonly calls: ForwardInput[] = [];
  private readonly logitsFn: LogitsFn;

  constructor(o: FakeEngineOptions = {}) {
    this.spec = fakeSpec(o);
    this.probes = o.probes ?? { received: true };
    this.logitsFn = o.logits ?? defaultLogits(this.spec);
  }

  async forward(input: ForwardInput): Promise<ForwardOutput> {
    this.calls.push(input);
    const { batch: B, seq: T } = input;
    const V = this.spec.vocabSize;
    const L = this.spec.numLayers;
    const H = this.spec.numHeads;
    const mask = input.attentionMask ?? new Uint8Array(B * T).fill(1);
    const logits = new Float32Array(B * T * V);
    const probes = new Map<string, ProbeTensor>();
    const received = Array.from({ length: L }, () => new Float32Array(B * T));
    const argKey = Array.from({ length: L }, () => new Int32Array(B * H * T));
    for (let b = 0; b < B; b++) {
      let pad = 0;
      while (pad < T && !mask[b * T + pad]) pad++;
      const canvas = input.ids.slice(b * T + pad, (b + 1) * T);
      for (let p = 0; p < canvas.length; p++) {
        // The real engine applies Dream's shift: row i holds the model's row i − 1 (row 0 repeats itself).
        const src = this.spec.logitShift ? Math.max(0, p - 1) : p;
        logits.set(this.logitsFn(canvas, src), (b * T + pad + p) * V);
      }
      // received: a normalised function of (layer, token id, position); 0 on padding keys.
      for (let l = 0; l < L; l++) {
        let sum = 0;
        for (let p = 0; p < canvas.length; p++) sum += 1 + ((canvas[p] + l + p) % 5);
        for (let p = 0; p < canvas.length; p++) received[l][b * T + pad + p] = (1 + ((canvas[p] + l + p) % 5)) / sum;
        for (let h = 0; h < H; h++)
          for (let q = 0; q < canvas.length; q++) argKey[l][(b * H + h) * T + pad + q] = pad + ((q + h + l) % canvas.length);
      }
    }
    for (let l = 0; l < L; l++) {
      if (this.probes.received)
        probes.set(`blocks.${l}.attn.received`, {
          name: `blocks.${l}.attn.received`,
          axes: ["batch", "key"],
          dims: [B, T],
          data: received[l],
        });
      if (this.probes.argmax)
        probes.set(`blocks.${l}.attn.argmax_key`, {
          name: `blocks.${l}.attn.argmax_key`,
          axes: ["batch", "head", "query"],
          dims: [B, H, T],
          data: argKey[l],
        });
      if (this.probes.pattern?.layers.includes(l)) {
        const data = new Float32Array(B * H * T * T);
        for (let i = 0; i < data.length; i++) data[i] = (i % 17) / 17;
        probes.set(`blocks.${l}.attn.pattern`, {
          name: `blocks.${l}.attn.pattern`,
          axes: ["batch", "head", "query", "key"],
          dims: [B, H, T, T],
          data,
        });
      }
    }
    return { logits, vocabSize: V, probes };
  }

  async dispose(): Promise<void> {}
}

/** Words "t<id>" ↔ ids; special ids render as "<s{id}>". Offsets are exact character spans. */
export class FakeTokenizer implements TextTokenizer {
  constructor(private readonly special: Set<number> = new Set([0, 1, 2, 31])) {}

  encode(text: string): Encoding {
    const ids: number[] = [];
    const tokens: string[] = [];
    const offsets: [number, number][] = [];
    for (const m of text.matchAll(/\S+/g)) {
      const w = /^t(\d+)$/.exec(m[0]);
      ids.push(w ? Number(w[1]) : 3 + (m[0].length % 20));
      tokens.push(m[0]);
      offsets.push([m.index!, m.index! + m[0].length]);
    }
    return { ids, tokens, offsets };
  }

  decode(ids: number[], options: { skipSpecialTokens?: boolean } = {}): string {
    return ids
      .filter((i) => !(options.skipSpecialTokens && this.special.has(i)))
      .map((i) => ` ${this.idToToken(i)}`)
      .join("");
  }

  applyChatTemplate(messages: ChatMessage[]): string {
    return messages.map((m) => m.content).join(" ");
  }

  idToToken(id: number): string {
    return this.special.has(id) ? `<s${id}>` : `t${id}`;
  }

  tokenToId(token: string): number | undefined {
    const w = /^t(\d+)$/.exec(token);
    return w ? Number(w[1]) : undefined;
  }
}
