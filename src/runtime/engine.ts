/**
 * `createEngine`: checkpoint → ONNX graph (with the chosen probes) → onnxruntime session, behind
 * the `Engine` interface samplers are written against (types.ts).
 *
 * One engine = one (checkpoint, probe set, device). Each `forward` validates its input, checks
 * the memory estimate against the budget, derives position ids and query weights in TS, runs the
 * graph, and returns logits plus probes keyed by their canonical names.
 */
import * as fs from "node:fs";
import * as path from "node:path";
// Must come before onnxruntime-node: see ort-env.ts (a long command line crashed ORT).
import "./ort-env.js";
import * as ort from "onnxruntime-node";
import { openCheckpoint } from "../checkpoint/checkpoint.js";
import type { Checkpoint, TensorInfo } from "../checkpoint/types.js";
import { resolveModelSpec } from "../graph/adapters/index.js";
import type { QueryChunks } from "../graph/chunks.js";
import { buildModelGraph, type BuiltGraph } from "../graph/model.js";
import { assertFiniteWeights } from "../graph/scan-weights.js";
import { LOGIT_ROWS_INPUT, SUMMARIES_INPUT, SUMMARY_OUTPUTS } from "../graph/logits.js";
import { INTERVENTION_INPUTS } from "../graph/interventions.js";
import { PROBE_INPUTS, type ProbeOutput } from "../graph/probes.js";
import { positionIdsFromMask } from "../graph/rope.js";
import type { ModelSpec } from "../graph/spec.js";
import { RuntimeError, SettingsError, keyword } from "../util/errors.js";
import { DEFAULT_PROBES, type ProbeRequest, type ProbeTensor } from "../util/probes.js";
import {
  checkBudget,
  defaultMemoryBudget,
  estimateMemory,
  formatBytes,
  weightBytes,
  weightFootprint,
  type MemoryEstimate,
  type WeightFootprint,
} from "./memory.js";
import { defaultWeightCacheDir } from "../graph/build/weight-cache.js";
import { KV_CACHE_NAMES, kvCacheConflict } from "../graph/build/kv-cache.js";
import { createSession, type DeviceRequest, type SessionOptions } from "./session.js";
import type { SessionCacheReport } from "./session-cache.js";
import { CachedDecoder, emptyPast, type KvPast } from "./kv-decoder.js";
import type { Engine, ForwardInput, ForwardOutput, KvDecoder } from "./types.js";

export interface EngineOptions extends SessionOptions {
  /** Which statistics the graph computes (default `{received: true}`). */
  probes?: ProbeRequest;
  /** "f32" (default). "f16" only on CUDA: weights and matmuls in half, norms and softmax in f32. */
  computeDType?: "f32" | "f16";
  /** Refuse a forward whose estimate exceeds this (default 75 % of physical memory). */
  memoryBudgetBytes?: number;
  /**
   * Attention and MLP in this many row chunks, or "auto" (default): chunks sized so that each holds
   * at most `chunkBudgetBytes` of scratch per batch row (graph/chunks.ts, docs/engine.md). Less
   * memory at long sequences, the same results up to summation order.
   */
  queryChunks?: QueryChunks;
  /** Scratch bytes per chunk and batch row under `queryChunks: "auto"` (default 32 MiB, `AUTO_CHUNKS.scratchBytes`). */
  chunkBudgetBytes?: number;
  /**
   * Row-selectable LM head (default true): `forward` honours `logitRows` / `summaries`, running
   * the head only on the requested rows. false builds the plain head (every row, always); the
   * samplers then read full rows, which tests use to check that both give the same traces.
   */
  logitRows?: boolean;
  /**
   * Fused attention (com.microsoft MultiHeadAttention) for layers whose probes need no attention
   * probabilities (default false: on CPU it measured slower than the decomposed ops; docs/engine.md).
   */
  fusedAttention?: boolean;
  /**
   * GGUF quantised linear layers: "matmulnbits" (kept 4/8-bit, run by MatMulNBits; f32 compute),
   * "dequantize" (expanded to float32 once; see BuildOptions), or "auto" (default,
   * `chooseQuantizedWeights`): kept quantised unless the expanded model is small.
   */
  quantizedWeights?: "auto" | "dequantize" | "matmulnbits";
  /**
   * Folder of the decoded-weight cache (graph/build/weight-cache.ts): GGUF blocks are decoded once
   * per checkpoint into a file there, which onnxruntime maps. Default `defaultWeightCacheDir()`
   * ($FLOATSCOPE_CACHE_DIR, else the temp folder); false hands them to onnxruntime from memory.
   */
  weightCache?: string | false;
  /**
   * The largest run planned (default batch 1 × seq 1): checked against the memory budget before any
   * weight is read, so a model that cannot run is refused before it is expanded.
   */
  plannedRun?: { batch: number; seq: number };
  /** MatMulNBits `accuracy_level` (0 = float compute, default; 4 = int8 activations). */
  nbitsAccuracyLevel?: 0 | 4;
  /**
   * Build the attention-intervention inputs (default false; src/graph/interventions.ts): `forward`
   * then honours `ForwardInput.intervention`. Without it the graph is unchanged.
   */
  interventions?: boolean;
  /**
   * Scan the weights for NaN/Inf before building the session (default true): a checkpoint with
   * non-finite weights is refused with a CheckpointError naming each tensor. false skips the
   * scan (it reads every weight byte once; see BENCHMARKS.md "Weight scan" for its cost).
   */
  scanWeights?: boolean;
  /**
   * The session cache (runtime/session-cache.ts, under `<weightCache>/sessions`; default false):
   * onnxruntime's optimized model with its prepacked weights, saved on the first open and loaded on
   * the next. Off by default: on onnxruntime 1.30 loading it measured no faster than building the
   * session (an 8B-shaped Q4_0 GGUF: 7.2 s CPU against 6.6 s; its MatMulNBits kernel packs its
   * weights again), while an entry took 10.5 GB on disk (docs/engine.md, "Opening a large quantised
   * model").
   */
  sessionCache?: boolean;
  /**
   * Build the graph with a key/value cache (graph/build/kv-cache.ts), so that `decoder()` can run
   * autoregressive decoding one new token at a time. Default: on wherever it applies — a causal
   * model whose engine has no probes and no interventions; `forward` is then the same forward with
   * nothing cached. false builds the plain graph; true where it cannot apply is a SettingsError.
   */
  kvCache?: boolean;
}

/** A checkpoint folder, an opened Checkpoint, or a spec with its tensor index (tests, custom specs). */
export type EngineSource = string | Checkpoint | { spec: ModelSpec; tensors: Map<string, TensorInfo> };

export interface OnnxEngine extends Engine {
  readonly computeDType: "f32" | "f16";
  readonly memoryBudgetBytes: number;
  /** How GGUF quantised layers run ("auto" resolved). */
  readonly quantizedWeights: "dequantize" | "matmulnbits";
  readonly queryChunks: QueryChunks;
  /** Whether the head is row-selectable (EngineOptions.logitRows). */
  readonly logitRows: boolean;
  /** Whether the graph has the intervention inputs (EngineOptions.interventions). */
  readonly interventions: boolean;
  /** Whether the graph carries a key/value cache (EngineOptions.kvCache resolved): `decoder` is then defined. */
  readonly kvCache: boolean;
  /** Graph size, for reports. */
  readonly nodeCount: number;
  /** Whether the session was loaded from the session cache ("hit"), saved to it, or built without it; with the entry's size. */
  readonly sessionCache: SessionCacheReport;
  estimateMemory(batch: number, seq: number, logitRows?: number): MemoryEstimate;
}

function resolveSource(source: EngineSource): { spec: ModelSpec; tensors: Map<string, TensorInfo> } {
  if (typeof source === "string") {
    const ckpt = openCheckpoint(source);
    return { spec: resolveModelSpec(ckpt), tensors: ckpt.tensors };
  }
  if ("spec" in source) return source;
  return { spec: resolveModelSpec(source), tensors: source.tensors };
}

export async function createEngine(source: EngineSource, options: EngineOptions = {}): Promise<OnnxEngine> {
  const { spec, tensors } = resolveSource(source);
  const kvCache = resolveKvCache(options.kvCache, spec, options.probes ?? DEFAULT_PROBES, options.interventions ?? false);
  // a clean verdict is remembered beside the weight cache (the same files are not read twice)
  const verdictCache = options.weightCache === false ? undefined : (options.weightCache ?? defaultWeightCacheDir());
  if (options.scanWeights ?? true) assertFiniteWeights({ tensors }, spec, { verdictCache });
  const device = keyword<DeviceRequest>(options.device ?? "cpu", ["cpu", "cuda", "auto"], { field: "device" });
  const computeDType = keyword<"f32" | "f16">(options.computeDType ?? "f32", ["f32", "f16"], { field: "computeDType" });
  if (computeDType === "f16" && device === "cpu") {
    throw new SettingsError("f16 compute is only available on CUDA", {
      field: "computeDType",
      expected: '"f32" on CPU',
      found: '"f16"',
      hint: 'use device: "cuda" (or "auto"), or computeDType: "f32"',
    });
  }
  const probes = options.probes ?? DEFAULT_PROBES;
  const warn = options.warn ?? ((m: string) => console.warn(m));
  const queryChunks = options.queryChunks ?? "auto";
  const logitRows = options.logitRows ?? true;
  const interventions = options.interventions ?? false;
  const { nbitsAccuracyLevel, fusedAttention, chunkBudgetBytes } = options;
  const quantizedWeights = chooseQuantizedWeights(
    keyword<"auto" | "dequantize" | "matmulnbits">(options.quantizedWeights ?? "auto", ["auto", "matmulnbits", "dequantize"], {
      field: "quantizedWeights",
    }),
    weightBytes(spec, tensors, { quantizedWeights: "dequantize" }),
  );
  const weightCacheDir = options.weightCache === false ? undefined : (options.weightCache ?? defaultWeightCacheDir());
  const memoryBudgetBytes = options.memoryBudgetBytes ?? defaultMemoryBudget();
  // The budget is checked on the weights as they will be held, before one of them is read.
  const weightsFor = (dtype: typeof computeDType, mode = quantizedWeights) =>
    weightFootprint(spec, tensors, { computeDType: dtype, quantizedWeights: mode, mapped: weightCacheDir !== undefined });
  const planned = options.plannedRun ?? { batch: 1, seq: 1 };
  const estimateAt = (seq: number, dtype = computeDType, mode = quantizedWeights) =>
    estimateMemory(spec, {
      batch: planned.batch,
      seq,
      probes,
      computeDType: dtype,
      queryChunks,
      chunkBudgetBytes,
      interventions,
      logitRows: logitRows ? 1 : undefined,
      weights: weightsFor(dtype, mode),
      kvCache,
    });
  checkBudget(
    estimateAt(planned.seq),
    memoryBudgetBytes,
    planned,
    fitHint(planned.seq, memoryBudgetBytes, estimateAt, () =>
      quantizedWeights === "dequantize" && weightsFor(computeDType, "matmulnbits").bytes < weightsFor(computeDType).bytes
        ? estimateAt(planned.seq, computeDType, "matmulnbits").total
        : undefined,
    ),
  );
  // The CPU fallback below rebuilds with every option the same but the compute dtype.
  const build = (dtype: typeof computeDType) =>
    buildModelGraph(spec, tensors, {
      probes,
      computeDType: dtype,
      queryChunks,
      chunkBudgetBytes,
      logitRows,
      quantizedWeights,
      nbitsAccuracyLevel,
      interventions,
      fusedAttention,
      weightCacheDir,
      kvCache,
    });
  let built = build(computeDType);
  const sessionCacheDir = options.sessionCache && weightCacheDir !== undefined ? path.join(weightCacheDir, "sessions") : undefined;
  let created = await createSession(built.bytes, built.externalFiles, {
    ...options,
    device,
    warn,
    externalBuffers: built.externalBuffers,
    sessionCacheDir,
  });
  let dtype = computeDType;
  if (created.device === "cpu" && dtype === "f16") {
    // CPU has no half kernels (ORT would insert casts around every op): rebuild in f32.
    warn("floatscope: f16 compute needs CUDA; rebuilding the graph in f32 for CPU.");
    await created.session.release();
    if (created.tempDir) fs.rmSync(created.tempDir, { recursive: true, force: true });
    built = build("f32");
    created = await createSession(built.bytes, built.externalFiles, {
      ...options,
      device: "cpu",
      warn,
      externalBuffers: built.externalBuffers,
      sessionCacheDir,
    });
    dtype = "f32";
  }
  return new OrtEngine(
    spec,
    probes,
    built,
    created.session,
    created.device,
    dtype,
    memoryBudgetBytes,
    weightsFor(dtype),
    quantizedWeights,
    queryChunks,
    logitRows,
    interventions,
    kvCache,
    chunkBudgetBytes,
    created.sessionCache,
    created.tempDir,
  );
}

/**
 * EngineOptions.kvCache resolved: unset means on wherever it applies. Checked here, before any weight
 * is read, so an explicit `true` that cannot apply fails at once.
 */
function resolveKvCache(requested: boolean | undefined, spec: ModelSpec, probes: ProbeRequest, interventions: boolean): boolean {
  if (requested === false) return false;
  const conflict = kvCacheConflict(spec, { probes, interventions });
  if (conflict && requested === true) throw conflict;
  return conflict === undefined;
}

/**
 * Float32 weights from which "auto" keeps quantised layers quantised. Below it the expanded model is
 * small enough that memory hardly matters and the float32 Gemm wins on speed (`npx tsx bench/gguf.ts`
 * compares both modes on SmolLM2-135M, ≈0.5 GB expanded); from it on, the expanded weights are
 * several GB that MatMulNBits holds in about a sixth (an 8B-shaped Q4_0 GGUF: 32 GB expanded, 4.7 GB
 * as blocks), which is what lets such a model open on a 24 GB machine at all.
 */
export const AUTO_NBITS_FROM_BYTES = 2 * 2 ** 30;

/** The quantised-layer mode "auto" resolves to, from the weights' size once expanded to float32. */
export function chooseQuantizedWeights(
  mode: "auto" | "dequantize" | "matmulnbits",
  dequantisedBytes: number,
): "dequantize" | "matmulnbits" {
  if (mode !== "auto") return mode;
  return dequantisedBytes >= AUTO_NBITS_FROM_BYTES ? "matmulnbits" : "dequantize";
}

/**
 * What would fit when the planned run does not: the longest sequence that does (estimates are
 * monotone in seq), or keeping quantised weights quantised. Empty when nothing changes that.
 */
function fitHint(seq: number, budget: number, at: (seq: number) => MemoryEstimate, quantisedTotal: () => number | undefined): string {
  const q = quantisedTotal();
  if (q !== undefined && q <= budget)
    return `keeping the GGUF blocks quantised fits (≈${formatBytes(q)}: quantizedWeights "matmulnbits", --quantized-weights matmulnbits), or `;
  if (seq <= 1 || at(1).total > budget) return "";
  let lo = 1,
    hi = seq;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (at(mid).total <= budget) lo = mid;
    else hi = mid;
  }
  return `at most ${lo} tokens per row fit, or `;
}

function bad(field: string, expected: string, found: string): SettingsError {
  return new SettingsError("Invalid forward input", { field, expected, found });
}

class OrtEngine implements OnnxEngine {
  readonly nodeCount: number;
  private readonly outputs: ProbeOutput[];

  constructor(
    readonly spec: ModelSpec,
    readonly probes: ProbeRequest,
    built: BuiltGraph,
    private session: ort.InferenceSession,
    readonly device: "cpu" | "cuda",
    readonly computeDType: "f32" | "f16",
    readonly memoryBudgetBytes: number,
    /** The weights as held (memory.ts weightFootprint). */
    private readonly weights: WeightFootprint,
    readonly quantizedWeights: "dequantize" | "matmulnbits",
    readonly queryChunks: QueryChunks,
    readonly logitRows: boolean,
    readonly interventions: boolean,
    readonly kvCache: boolean,
    private readonly chunkBudgetBytes: number | undefined,
    readonly sessionCache: SessionCacheReport,
    private tempDir?: string,
  ) {
    this.outputs = built.probes;
    this.nodeCount = built.nodeCount;
    if (kvCache)
      this.decoder = () =>
        new CachedDecoder(
          (input, past) => this.run(input, past),
          (batch) => this.emptyPast(batch),
        );
  }

  /** @param logitRows rows of logits per batch row (default: seq) */
  estimateMemory(batch: number, seq: number, logitRows?: number): MemoryEstimate {
    return estimateMemory(this.spec, {
      batch,
      seq,
      probes: this.probes,
      computeDType: this.computeDType,
      queryChunks: this.queryChunks,
      chunkBudgetBytes: this.chunkBudgetBytes,
      logitRows,
      interventions: this.interventions,
      weights: this.weights,
      kvCache: this.kvCache,
    });
  }

  preflight(batch: number, seq: number, logitRows?: number): void {
    checkBudget(this.estimateMemory(batch, seq, this.logitRows ? logitRows : undefined), this.memoryBudgetBytes, { batch, seq });
  }

  async forward(input: ForwardInput): Promise<ForwardOutput> {
    // a cached graph runs a plain forward with nothing cached (P = 0), its presents left in onnxruntime
    const past = this.kvCache ? this.emptyPast(input.batch) : undefined;
    return (await this.run(input, past, false)).out;
  }

  readonly decoder?: () => KvDecoder;

  private emptyPast(batch: number): KvPast {
    const { numLayers, numKvHeads, headDim } = this.spec;
    return emptyPast(batch, numLayers, numKvHeads, headDim, this.computeDType === "f16" ? "float16" : "float32");
  }

  /**
   * One run of the graph over `input`'s tokens. With `past` (a cached graph): after the past's
   * columns, whose keys the mask extends over and whose real-token counts the positions continue;
   * the present tensors come back too, unless `presents` is false.
   */
  private async run(input: ForwardInput, past?: KvPast, presents = true): Promise<{ out: ForwardOutput; present: ort.Tensor[] }> {
    const { batch: B, seq: T, ids } = input;
    if (!Number.isInteger(B) || B < 1 || !Number.isInteger(T) || T < 1) throw bad("batch/seq", "positive integers", `${B} × ${T}`);
    const N = B * T;
    if (ids.length !== N) throw bad("ids", `${N} ids (batch ${B} × seq ${T})`, `${ids.length}`);
    const V = this.spec.vocabSize;
    for (let i = 0; i < N; i++) {
      if (!(ids[i] >= 0 && ids[i] < V)) throw bad(`ids[${i}]`, `a token id in [0, ${V - 1}]`, String(ids[i]));
    }
    const mask = input.attentionMask ?? new Uint8Array(N).fill(1);
    if (mask.length !== N) throw bad("attentionMask", `${N} values`, `${mask.length}`);
    const sel = this.logitRows ? selectRows(input, B, T, this.spec.logitShift) : undefined;
    const P = past?.length ?? 0;
    checkBudget(this.estimateMemory(B, P + T, sel?.rows), this.memoryBudgetBytes, { batch: B, seq: P + T });

    const pos = positionIdsFromMask(mask, B, T);
    // cached tokens come first: positions are HF's cumsum(mask) − 1 over the past and new columns,
    // i.e. they continue from each row's real tokens so far
    if (past) {
      for (let b = 0; b < B; b++) {
        let seen = past.real[b];
        for (let t = 0; t < T; t++) {
          if (mask[b * T + t]) seen++;
          pos[b * T + t] = Math.max(0, seen - 1);
        }
      }
    }
    // RoPE is computed for any position, so nothing in the graph would stop a sequence longer than
    // the model was trained for: refuse it here, for every caller (CLI, samplers, notebooks).
    let maxPos = -1;
    for (let i = 0; i < N; i++) if (pos[i] > maxPos) maxPos = pos[i];
    if (maxPos + 1 > this.spec.maxPositionEmbeddings) {
      throw new SettingsError("Input is longer than the model's maximum positions", {
        field: "ids",
        expected: `at most ${this.spec.maxPositionEmbeddings} positions per row (max_position_embeddings)`,
        found: `${maxPos + 1} positions`,
      });
    }
    // with a cache the mask covers the past columns too: [batch, P + seq]
    const keyMask = new Uint8Array(B * (P + T));
    for (let b = 0; b < B; b++) {
      if (past) keyMask.set(past.mask.subarray(b * P, (b + 1) * P), b * (P + T));
      for (let t = 0; t < T; t++) keyMask[b * (P + T) + P + t] = mask[b * T + t] ? 1 : 0;
    }
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor(
        "int64",
        BigInt64Array.from(ids, (v) => BigInt(v)),
        [B, T],
      ),
      position_ids: new ort.Tensor(
        "int64",
        BigInt64Array.from(pos, (v) => BigInt(v)),
        [B, T],
      ),
      attention_mask: new ort.Tensor("bool", keyMask, [B, P + T]),
    };
    if (past) {
      if (past.batch !== B) throw bad("batch", `${past.batch} rows (the cached batch)`, String(B));
      past.tensors.forEach((t, i) => {
        const l = i >> 1;
        feeds[i % 2 === 0 ? KV_CACHE_NAMES.pastKey(l) : KV_CACHE_NAMES.pastValue(l)] = t;
      });
    }
    if (this.probes.received || this.probes.receivedHeads) {
      const w = input.queryWeight ?? Float32Array.from(mask, (v) => (v ? 1 : 0));
      if (w.length !== N) throw bad("queryWeight", `${N} values`, `${w.length}`);
      // normalised per batch row here, so the graph's w·P is directly the weighted mean
      const norm = new Float32Array(N);
      for (let b = 0; b < B; b++) {
        let s = 0;
        for (let t = 0; t < T; t++) s += w[b * T + t];
        if (s > 0) for (let t = 0; t < T; t++) norm[b * T + t] = w[b * T + t] / s;
      }
      feeds[PROBE_INPUTS.queryWeight] = new ort.Tensor("float32", norm, [B, T]);
    }
    if (this.probes.regionSum) {
      const R = this.probes.regionSum.regions;
      const m = input.regionOneHot;
      if (!m || m.length !== N * R) {
        throw bad(
          "regionOneHot",
          `[batch ${B}, seq ${T}, region ${R}] = ${N * R} values (the regionSum probe is on)`,
          m ? `${m.length}` : "nothing",
        );
      }
      feeds[PROBE_INPUTS.regionOneHot] = new ort.Tensor("float32", m, [B, T, R]);
    }
    if (this.interventions) Object.assign(feeds, interventionFeeds(input.intervention, B, T, this.spec));
    else if (input.intervention) {
      throw new SettingsError("This engine has no intervention inputs", {
        field: "intervention",
        expected: "no intervention",
        found: "an intervention",
        hint: "create the engine with { interventions: true }",
      });
    }

    const fetches = this.outputs.map((p) => p.name);
    if (sel) {
      feeds[LOGIT_ROWS_INPUT] = new ort.Tensor("int64", sel.hidden, [B, sel.rows]);
      feeds[SUMMARIES_INPUT] = new ort.Tensor("bool", Uint8Array.of(sel.summaries ? 1 : 0), [1]);
      if (sel.logits) fetches.push("logits");
      if (sel.summaries) fetches.push(...Object.values(SUMMARY_OUTPUTS));
    } else {
      fetches.push("logits");
    }
    const fetchPresent = past !== undefined && presents;
    if (fetchPresent) {
      for (let l = 0; l < this.spec.numLayers; l++) fetches.push(KV_CACHE_NAMES.presentKey(l), KV_CACHE_NAMES.presentValue(l));
    }
    let res: ort.InferenceSession.OnnxValueMapType;
    try {
      // onnxruntime runs the whole graph whatever is fetched (it does not prune per run): work a run
      // does not need is skipped by the graph's own If nodes (summaries: the logit_summaries input).
      res = await this.session.run(feeds, fetches);
    } catch (e) {
      throw new RuntimeError("onnxruntime failed during the forward pass", {
        field: "session.run",
        expected: "a successful run",
        found: e instanceof Error ? e.message.slice(0, 400) : String(e),
        hint: "a memory allocation failure here usually means the sequence is too long: lower memoryBudgetBytes to be refused earlier",
      });
    }
    const probes = new Map<string, ProbeTensor>();
    for (const p of this.outputs) {
      const t = res[p.name];
      const data = p.dtype === "int32" ? (t.data as Int32Array) : (t.data as Float32Array);
      // a full pattern comes out in the grouped 5-D layout [batch, kvHead, group, query, key]; head = kvHead·group + g
      const dims = t.dims.length === 5 ? [t.dims[0], t.dims[1] * t.dims[2], t.dims[3], t.dims[4]] : [...t.dims];
      probes.set(p.name, { name: p.name, axes: p.axes, dims, data });
    }
    const out: ForwardOutput = {
      logits: sel?.logits === false ? new Float32Array(0) : (res.logits.data as Float32Array),
      vocabSize: V,
      probes,
    };
    if (sel?.requested) out.logitRows = sel.requested;
    if (sel?.summaries) {
      out.summary = {
        argmax: res[SUMMARY_OUTPUTS.argmax].data as Int32Array,
        maxProb: res[SUMMARY_OUTPUTS.maxProb].data as Float64Array,
        logSumExp: res[SUMMARY_OUTPUTS.logSumExp].data as Float64Array,
        negEntropy: res[SUMMARY_OUTPUTS.negEntropy].data as Float64Array,
        margin: res[SUMMARY_OUTPUTS.margin].data as Float64Array,
      };
    }
    const present: ort.Tensor[] = [];
    if (fetchPresent) {
      for (let l = 0; l < this.spec.numLayers; l++) present.push(res[KV_CACHE_NAMES.presentKey(l)], res[KV_CACHE_NAMES.presentValue(l)]);
    }
    return { out, present };
  }

  async dispose(): Promise<void> {
    await this.session.release();
    if (this.tempDir) fs.rmSync(this.tempDir, { recursive: true, force: true });
  }
}

/** The intervention inputs of one forward, neutral where the caller gave nothing; sizes and values checked. */
function interventionFeeds(iv: ForwardInput["intervention"], B: number, T: number, spec: ModelSpec): Record<string, ort.Tensor> {
  const L = spec.numLayers,
    H = spec.numHeads;
  const n = B * L * H * T;
  const hidden = iv?.keyHidden ?? new Uint8Array(n);
  if (hidden.length !== n)
    throw bad("intervention.keyHidden", `[batch ${B}, layer ${L}, head ${H}, seq ${T}] = ${n} values`, `${hidden.length}`);
  const bias = iv?.keyBias ?? new Float32Array(n);
  if (bias.length !== n) throw bad("intervention.keyBias", `[batch ${B}, layer ${L}, head ${H}, seq ${T}] = ${n} values`, `${bias.length}`);
  for (let i = 0; i < n; i++)
    if (!Number.isFinite(bias[i])) throw bad(`intervention.keyBias[${i}]`, "a finite number (hide keys with keyHidden)", String(bias[i]));
  const selfOnly = iv?.selfOnly ?? new Uint8Array(B * T);
  if (selfOnly.length !== B * T) throw bad("intervention.selfOnly", `[batch ${B}, seq ${T}] = ${B * T} values`, `${selfOnly.length}`);
  return {
    [INTERVENTION_INPUTS.keyHidden]: new ort.Tensor(
      "bool",
      Uint8Array.from(hidden, (v) => (v ? 1 : 0)),
      [B, L, H, T],
    ),
    [INTERVENTION_INPUTS.keyBias]: new ort.Tensor("float32", bias, [B, L, H, T]),
    [INTERVENTION_INPUTS.selfOnly]: new ort.Tensor(
      "bool",
      Uint8Array.from(selfOnly, (v) => (v ? 1 : 0)),
      [B, T],
    ),
  };
}

interface RowSelection {
  /** Rows per batch row. */
  rows: number;
  /** Hidden-state positions fed to `logit_rows`, [batch, rows]. */
  hidden: BigInt64Array;
  /** The caller's positions (undefined: all rows, the default). */
  requested?: Int32Array;
  logits: boolean;
  summaries: boolean;
}

/**
 * The rows the head runs on: the caller's positions, or every position. Output row i is the
 * distribution for token i, which a model with logitShift 1 (Dream) computes at hidden state
 * i − 1 (row 0 repeats hidden 0, as Dream's sampler does).
 */
function selectRows(input: ForwardInput, B: number, T: number, shift: 0 | 1): RowSelection {
  const req = input.logitRows;
  if (req !== undefined) {
    if (req.length === 0 || req.length % B !== 0)
      throw bad("logitRows", `[batch ${B}, rows] positions (a non-zero multiple of ${B})`, `${req.length} values`);
    for (let i = 0; i < req.length; i++) {
      if (!(Number.isInteger(req[i]) && req[i] >= 0 && req[i] < T))
        throw bad(`logitRows[${i}]`, `a position in [0, ${T - 1}]`, String(req[i]));
    }
  }
  if (input.returnLogits === false && !(req && input.summaries)) {
    throw bad("returnLogits", "true unless logitRows and summaries are both given", "false");
  }
  const rows = req ? req.length / B : T;
  const hidden = new BigInt64Array(B * rows);
  for (let b = 0; b < B; b++) {
    for (let r = 0; r < rows; r++) hidden[b * rows + r] = BigInt(Math.max((req ? req[b * rows + r] : r) - shift, 0));
  }
  const summaries = req !== undefined && input.summaries === true;
  return { rows, hidden, requested: req && Int32Array.from(req), logits: !(summaries && input.returnLogits === false), summaries };
}
