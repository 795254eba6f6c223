/**
 * Hand-built Trace objects for the analysis tests: only the fields the analyses read are real;
 * probe tensors are whatever each test plants.
 */
import type { ProbeTensor, Trace, TraceModelInfo, TraceStep } from "../../src/trace/types.js";
import { PROBE_AXES } from "../../src/util/probes.js";

/** A probe tensor with the batch axis already removed (as in a Trace). */
export function probe(layer: number, kind: string, dims: number[], data: ArrayLike<number>, int = false): ProbeTensor {
  const axes = PROBE_AXES[kind].filter((a) => a !== "batch");
  const arr = int ? Int32Array.from(data) : Float32Array.from(data);
  if (arr.length !== dims.reduce((a, b) => a * b, 1)) throw new Error(`probe ${kind}: ${arr.length} values for dims [${dims}]`);
  return { name: `blocks.${layer}.attn.${kind}`, axes, dims, data: arr };
}

export function probeMap(...ps: ProbeTensor[]): Map<string, ProbeTensor> {
  return new Map(ps.map((p) => [p.name, p]));
}

export function model(over: Partial<TraceModelInfo> = {}): TraceModelInfo {
  return {
    name: "tiny-llada",
    family: "llada",
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 2,
    headDim: 2,
    causal: false,
    logitShift: 0,
    maskTokenId: 99,
    bosTokenId: 1,
    eosTokenIds: [2],
    padTokenId: 3,
    ...over,
  };
}

export function step(i: number, canvas: number[], probes: Map<string, ProbeTensor>, over: Partial<TraceStep> = {}): TraceStep {
  return {
    step: i,
    block: 0,
    canvas: Int32Array.from(canvas),
    transferred: new Int32Array(0),
    tokens: new Int32Array(0),
    confidence: new Float32Array(0),
    producingRow: new Int32Array(0),
    probes,
    ...over,
  };
}

export interface TraceParts {
  model?: Partial<TraceModelInfo>;
  sequence: number[];
  promptLength?: number;
  finalProbes?: Map<string, ProbeTensor>;
  steps?: TraceStep[];
  tokens?: string[];
  promptText?: string;
  offsets?: [number, number][];
  regions?: Trace["prompt"]["regions"];
  settings?: Record<string, unknown>;
  answer?: string;
}

export function makeTrace(p: TraceParts): Trace {
  const T = p.sequence.length;
  const promptLength = p.promptLength ?? T;
  return {
    formatVersion: 1,
    model: model(p.model),
    prompt: { text: p.promptText ?? "", ids: p.sequence.slice(0, promptLength), promptLength, regions: p.regions ?? [] },
    tokens: p.tokens ?? p.sequence.map((t) => `t${t}`),
    offsets: p.offsets ?? p.sequence.map((_, i) => [i, i + 1] as [number, number]),
    settings: p.settings ?? {},
    probes: { received: true },
    steps: p.steps ?? [],
    final: { sequence: Int32Array.from(p.sequence), probes: p.finalProbes ?? new Map() },
    unmaskedAt: Int32Array.from(p.sequence.map((_, i) => (i < promptLength ? -1 : 0))),
    answer: p.answer ?? "",
    completion: p.answer ?? "",
    seed: 0,
    stream: 0,
    device: "cpu",
    partial: false,
  };
}

/**
 * The retrieval-heads fixture shared by the analysis and grid tests. Prompt "The capital is Paris":
 * BOS(0) The(1) ␣capital(2) ␣is(3) ␣Paris(4); generated 5 ("Paris" = id 23), 6 (EOS); 2 heads, 7 positions.
 */
export const capitalIsParis = {
  text: "The capital is Paris",
  offsets: [
    [0, 0],
    [0, 3],
    [3, 11],
    [11, 14],
    [14, 20],
    [20, 26],
    [26, 26],
  ] as [number, number][],
  prompt: [1, 20, 21, 22, 23],
  H: 2,
  T: 7,
  /** argmax_key [head, query]: every row at BOS (key 0) except the given (head, row) → key. */
  argmax(set: [number, number, number][]): number[] {
    const a = new Array(2 * 7).fill(0);
    for (const [h, row, key] of set) a[h * 7 + row] = key;
    return a;
  },
};
