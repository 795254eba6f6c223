/**
 * A pre-run memory estimate, so a forward that would not fit is refused with a BudgetError that
 * names the term (and probe) responsible instead of the process being killed mid-run.
 *
 * The terms follow what the decomposed graph materialises (docs/engine.md):
 * - weights: every parameter as the engine holds it (`weightBytes`): in the compute type (on CPU
 *   BF16/F16 checkpoints are cast to f32 when the session is created, so they cost 4 bytes each),
 *   except GGUF blocks kept quantised for MatMulNBits, counted as their codes plus float32 scales
 *   (and zero points), and an embedding read from the weight cache's mapped file, of which only the
 *   rows a run gathers are resident;
 * - attention: the decomposed attention holds scores, masked scores and probabilities, each
 *   [batch, head, query, key] f32, at once for one layer, for one query chunk (graph/chunks.ts);
 * - activations: the residual stream and projections of one layer, and the MLP intermediates of one
 *   MLP row chunk (all rows unchunked), with headroom;
 * - logits: [batch, seq, vocab] f32, twice (graph output + shifted copy / JS view); with row
 *   selection [batch, rows, vocab] twice plus the f64 summary temporaries (3 × 8 bytes per logit);
 * - probes: every requested probe output ×2.5 (ORT's output buffer with its arena slack + the JS
 *   copy the Node binding makes; measured 2.5× at T 1024 and 2048);
 * - kvCache: with a key/value cache, every layer's keys and values, three copies (KV_CACHE_COPIES);
 * - arena: ORT's CPU arena grows in doubling chunks and keeps them, so the compute terms above
 *   (not the probe outputs, nor MatMulNBits blocks) cost about 1.5× (measured: 4 layers, d 256, T 2048 → 0.92 GB RSS
 *   without probes, 1.76 GB with full maps for every layer; see BENCHMARKS.md "Engine");
 * - runtime: Node + onnxruntime's own libraries (~96 MiB).
 * It is an estimate (±25 %), not a guarantee; the benchmark prints it next to the measured peak.
 */
import * as os from "node:os";
import { activationsPerToken, mlpPerToken, mlpRowsPerChunk, rowsPerChunk as rowsPerChunk_, type QueryChunks } from "../graph/chunks.js";
import { probeOutputs, type ProbeOutput } from "../graph/probes.js";
import type { ModelSpec } from "../graph/spec.js";
import type { TensorInfo } from "../checkpoint/types.js";
import { NBITS_TYPES, nbitsBytes } from "../checkpoint/gguf/nbits.js";
import { BudgetError } from "../util/errors.js";
import { probeElementsOf, probeInfo, type ProbeRequest } from "../util/probes.js";

export interface MemoryEstimateOptions {
  batch: number;
  seq: number;
  probes?: ProbeRequest;
  computeDType?: "f32" | "f16";
  /** Attention and MLP computed in this many row chunks (or "auto", graph/chunks.ts): their terms shrink accordingly. */
  queryChunks?: QueryChunks;
  /** The engine's `chunkBudgetBytes` (scratch per chunk under "auto"; default chunks.ts). */
  chunkBudgetBytes?: number;
  /** Logits rows returned per batch row (row selection; default seq): the head runs on only these. */
  logitRows?: number;
  /**
   * The graph has the attention-intervention inputs: one [batch, query, key] boolean for the whole
   * graph and, per chunk, two [batch, head, rows, key] booleans next to the scores.
   */
  interventions?: boolean;
  /** The weights as the engine holds them (`weightFootprint`); default: every parameter in the compute type. */
  weights?: WeightFootprint;
  /**
   * The graph carries a key/value cache (graph/build/kv-cache.ts) over `seq` tokens: every layer's
   * keys and values [batch, seq, kvHead, headDim], held three times (the past fed in, the present
   * ORT computes, and the Node binding's copy of it that becomes the next past).
   */
  kvCache?: boolean;
}

export interface WeightRepresentation {
  computeDType?: "f32" | "f16";
  /** As EngineOptions.quantizedWeights (default "matmulnbits"). */
  quantizedWeights?: "dequantize" | "matmulnbits";
  /** Decoded weights live in the weight cache's mapped file (EngineOptions.weightCache): the embedding's unread rows cost nothing. */
  mapped?: boolean;
}

/** The weights as the engine holds them: all bytes, and the part that is MatMulNBits blocks. */
export interface WeightFootprint {
  bytes: number;
  /** Codes, scales and zero points of layers kept quantised (prepacked once, outside the run's arena). */
  quantised: number;
}

/**
 * Bytes of the weights a spec reads, as the engine will hold them — computed from the tensor index
 * alone, before any weight is read. A quantised linear weight kept for MatMulNBits (Q4_0, Q4_1,
 * Q8_0, Q4_K; f32 compute) costs bits/8 per element for its codes plus 4 bytes per 32-element block
 * for its scale (and 4 more for a Q4_1 / Q4_K zero point: `nbitsBytes`); everything else costs the compute type's size per
 * element. The embedding is a Gather: decoded into the mapped cache file, only gathered rows are
 * resident, so it counts nothing there (unless it is also the head).
 */
export function weightFootprint(spec: ModelSpec, tensors: Map<string, TensorInfo>, r: WeightRepresentation = {}): WeightFootprint {
  const elem = r.computeDType === "f16" ? 2 : 4;
  const nbits = (r.quantizedWeights ?? "matmulnbits") === "matmulnbits" && elem === 4;
  const tied = spec.weights.lmHead === spec.weights.embed;
  const names = new Set<string>([spec.weights.embed, spec.weights.finalNorm, spec.weights.lmHead]);
  for (const b of spec.weights.blocks) for (const n of Object.values(b)) if (n) names.add(n);
  let bytes = 0,
    quantised = 0;
  for (const name of names) {
    const t = tensors.get(name);
    if (!t) continue;
    const n = t.shape.reduce((a, b) => a * b, 1);
    const type = t.encoding?.ggmlType;
    const isEmbedOnly = name === spec.weights.embed && !tied;
    const decoded = t.encoding !== undefined;
    if (nbits && type !== undefined && NBITS_TYPES.has(type) && t.shape.length === 2 && !isEmbedOnly) {
      const q = nbitsBytes(type, n);
      bytes += q;
      quantised += q;
      // a tied head is also the embedding's float32 Gather table
      if (name === spec.weights.embed && !(r.mapped && decoded)) bytes += n * elem;
    } else if (!(name === spec.weights.embed && r.mapped && decoded)) {
      bytes += n * elem;
    }
  }
  return { bytes, quantised };
}

/** `weightFootprint(...).bytes`. */
export function weightBytes(spec: ModelSpec, tensors: Map<string, TensorInfo>, r: WeightRepresentation = {}): number {
  return weightFootprint(spec, tensors, r).bytes;
}

export interface MemoryEstimate {
  weights: number;
  attention: number;
  activations: number;
  logits: number;
  /** PROBE_FACTOR × the probe outputs (ORT buffer + arena slack + JS copy). */
  probes: number;
  /** The key/value cache (0 without one): KV_CACHE_COPIES × keys and values of every layer. */
  kvCache: number;
  /** Arena slack: half of weights + attention + activations + logits. */
  arena: number;
  /** Fixed: Node + onnxruntime libraries. */
  runtime: number;
  /** Bytes of each probe output, by name (all layers listed; one copy). */
  probeBytes: Map<string, number>;
  total: number;
  /** The largest term: "weights", "attention", "activations", "logits", "kvCache" or a probe name. */
  dominant: string;
}

/** Node + onnxruntime-node libraries, measured as the RSS of an engine process before its first run. */
export const RUNTIME_BYTES = 96 * 2 ** 20;

/** Memory per byte of probe output: ORT's buffer (+ its arena slack) and the JS copy. */
export const PROBE_FACTOR = 2.5;

/** Copies of the key/value cache alive during a cached forward: the past fed in, ORT's present, its JS copy. */
export const KV_CACHE_COPIES = 3;

/** Parameters implied by a spec (tied LM head counted once). */
export function specParameterCount(s: ModelSpec): number {
  const attn =
    s.hiddenSize * s.headDim * (2 * s.numHeads + 2 * s.numKvHeads) + (s.qkvBias ? s.headDim * (s.numHeads + 2 * s.numKvHeads) : 0);
  const mlp = 3 * s.hiddenSize * s.intermediateSize;
  const tied = s.weights.lmHead === s.weights.embed;
  return s.vocabSize * s.hiddenSize * (tied ? 1 : 2) + s.hiddenSize + s.numLayers * (attn + mlp + 2 * s.hiddenSize);
}

/** Elements of one probe output for a [batch, seq] run (the probe table's axes, sized for this model). */
export function probeElements(spec: ModelSpec, p: ProbeOutput, req: ProbeRequest, batch: number, seq: number): number {
  const info = probeInfo(p.kind);
  return info ? probeElementsOf(info, req, { batch, seq, numHeads: spec.numHeads, numKvHeads: spec.numKvHeads, headDim: spec.headDim }) : 0;
}

export function estimateMemory(spec: ModelSpec, o: MemoryEstimateOptions): MemoryEstimate {
  const { batch: B, seq: T } = o;
  const req = o.probes ?? {};
  const bytes = o.computeDType === "f16" ? 2 : 4;
  const weights = o.weights?.bytes ?? specParameterCount(spec) * bytes;
  // scores + masked + softmax in f32 (+ one f16 copy of P in half mode) for one layer at a time
  // a layer with a full-map probe runs as one chunk under "auto"
  const fullMap = (req.pattern?.layers.length ?? 0) + (req.patternMean?.layers.length ?? 0) > 0;
  const chunks = o.queryChunks === "auto" && fullMap ? 1 : (o.queryChunks ?? 1);
  const rowsPerChunk = rowsPerChunk_(spec, T, chunks, o.chunkBudgetBytes);
  const attention =
    B * spec.numHeads * rowsPerChunk * T * (3 * 4 + (bytes === 2 ? 2 : 0) + (o.interventions ? 2 : 0)) + (o.interventions ? B * T * T : 0);
  // residual, normed, q/k/v, context for all rows, three MLP intermediates for one MLP chunk's rows
  // (the MLP is chunked even where a full-map layer's attention is not), ×2 headroom for ORT's arena
  const perToken = activationsPerToken(spec) - mlpPerToken(spec);
  const mlpRows = mlpRowsPerChunk(spec, B * T, o.queryChunks ?? 1, o.chunkBudgetBytes);
  const activations = 2 * (B * T * perToken + mlpRows * mlpPerToken(spec)) * bytes;
  // Row selection (logitRows < seq) gathers rows before the head: [B, R, V] plus its f64 summary
  // temporaries (cast, exp, p: 3 × 8 bytes per logit, alive for the selected rows only).
  const R = o.logitRows;
  const logits =
    R === undefined || R >= T ? 2 * B * T * spec.vocabSize * 4 * (spec.logitShift ? 1.5 : 1) : B * R * spec.vocabSize * (2 * 4 + 3 * 8);
  const probeBytes = new Map<string, number>();
  let probes = 0;
  for (const p of probeOutputs(spec, req)) {
    const b = probeElements(spec, p, req, B, T) * 4;
    probeBytes.set(p.name, b);
    probes += PROBE_FACTOR * b;
  }
  const kvCache = o.kvCache ? KV_CACHE_COPIES * 2 * spec.numLayers * B * T * spec.numKvHeads * spec.headDim * bytes : 0;
  const terms: [string, number][] = [
    ["weights", weights],
    ["attention", attention],
    ["activations", activations],
    ["logits", logits],
    ["kvCache", kvCache],
  ];
  // Probes compete as a group per kind ("blocks.*.attn.pattern"), which is what a user turns off.
  const byKind = new Map<string, number>();
  for (const [name, b] of probeBytes) {
    const kind = name.replace(/^blocks\.\d+\./, "blocks.*.");
    byKind.set(kind, (byKind.get(kind) ?? 0) + PROBE_FACTOR * b);
  }
  terms.push(...byKind);
  const dominant = terms.reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  // MatMulNBits blocks are prepacked once when the session is made, not grown into by runs: no
  // arena share (measured on an 8B-shaped Q4_0 GGUF: peak 5.1 GB for 4.7 GB of blocks at T 64).
  const arena = 0.5 * (weights - (o.weights?.quantised ?? 0) + attention + activations + logits);
  const runtime = RUNTIME_BYTES;
  return {
    weights,
    attention,
    activations,
    logits,
    probes,
    kvCache,
    arena,
    runtime,
    probeBytes,
    total: weights + attention + activations + logits + probes + kvCache + arena + runtime,
    dominant,
  };
}

/** Default budget: 75 % of physical memory. */
export function defaultMemoryBudget(): number {
  return Math.floor(os.totalmem() * 0.75);
}

export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** Throw BudgetError when the estimate exceeds the budget, naming the dominant term. */
export function checkBudget(est: MemoryEstimate, budget: number, where: { batch: number; seq: number }, fits = ""): void {
  if (est.total <= budget) return;
  const isProbe = est.dominant.startsWith("blocks.");
  const domBytes = isProbe
    ? [...est.probeBytes]
        .filter(([n]) => n.replace(/^blocks\.\d+\./, "blocks.*.") === est.dominant)
        .reduce((a, [, b]) => a + PROBE_FACTOR * b, 0)
    : (est as unknown as Record<string, number>)[est.dominant];
  throw new BudgetError("Forward pass would exceed the memory budget", {
    field: isProbe ? `probes (${est.dominant})` : est.dominant,
    expected: `at most ${formatBytes(budget)} (memoryBudgetBytes)`,
    found: `≈${formatBytes(est.total)} for batch ${where.batch} × seq ${where.seq}, of which ${est.dominant} ≈${formatBytes(domBytes)}`,
    hint:
      fits +
      (isProbe
        ? `drop ${est.dominant} or restrict it to fewer layers/heads, shorten the sequence, or raise memoryBudgetBytes`
        : est.dominant === "attention"
          ? `${chunkHint(est, budget)}shorten the sequence or the batch (attention grows with seq²), or raise memoryBudgetBytes`
          : est.dominant === "weights"
            ? `the weights alone take ≈${formatBytes(est.weights)}: raise memoryBudgetBytes (≥ ${formatBytes(est.total)}) or use a smaller or more quantised checkpoint`
            : "use a smaller batch/sequence or raise memoryBudgetBytes"),
  });
}

/** "create the engine with queryChunks: n, or " when more query chunks alone would fit the budget. */
function chunkHint(est: MemoryEstimate, budget: number): string {
  // attention and its arena share scale as 1/chunks; everything else stays
  const rest = est.total - 1.5 * est.attention;
  if (rest >= budget || est.attention <= 0) return "";
  const factor = Math.ceil((1.5 * est.attention) / (budget - rest));
  return `create the engine with ${factor}× more queryChunks, or `;
}
