/**
 * `describeCheckpoint`: a plain, JSON-ready summary of a checkpoint and its resolved spec, for
 * `floatscope inspect` and notebook cells. Nothing is loaded: sizes come from the tensor index.
 */
import { templatePrefixTokens } from "../checkpoint/special-tokens.js";
import type { Checkpoint } from "../checkpoint/types.js";
import { specTensorNames } from "./adapters/index.js";
import type { Family, ModelSpec } from "./spec.js";

export interface CheckpointDescription {
  dir: string;
  architecture: string;
  family: Family;
  sizes: {
    vocab: number;
    hidden: number;
    layers: number;
    heads: number;
    kvHeads: number;
    headDim: number;
    intermediate: number;
    maxPositions: number;
  };
  attention: { causal: boolean; gqaGroup: number; qkvBias: boolean; logitShift: 0 | 1 };
  rope: { theta: number; scaling: "llama3" | null };
  /** Elements of the tensors the model reads (tied embeddings counted once). */
  parameters: number;
  tiedEmbeddings: boolean;
  /** Per stored dtype (GGUF: ggml type): how many tensors and how many bytes, over every tensor in the checkpoint. */
  dtypes: Record<string, { tensors: number; bytes: number }>;
  weightFiles: string[];
  specialIds: { bos: number | null; eos: number[]; pad: number | null; mask: number | null };
  /** Token strings of those ids, when a tokenizer is present. */
  specialTokens: { bos: string | null; mask: string | null };
  bos: {
    /** Whether encoding plain text adds a BOS (from the tokenizer files). */
    addedByTokenizer: boolean;
    /** The special tokens the post-processor prepends, e.g. ["<|begin_of_text|>"]. */
    prefix: string[];
  };
  tokenizer: { path: string; vocabEntries: number } | null;
  chatTemplate: boolean;
}

export function describeCheckpoint(checkpoint: Checkpoint, spec: ModelSpec): CheckpointDescription {
  const dtypes: Record<string, { tensors: number; bytes: number }> = {};
  for (const t of checkpoint.tensors.values()) {
    // GGUF: count the stored type (Q4_1, Q8_0, ...), not the float32 it decodes to.
    const d = (dtypes[t.encoding?.ggmlType ?? t.dtype] ??= { tensors: 0, bytes: 0 });
    d.tensors++;
    d.bytes += t.byteLength;
  }
  let parameters = 0;
  for (const name of specTensorNames(spec)) {
    const t = checkpoint.tensors.get(name);
    if (t) parameters += t.shape.reduce((a, b) => a * b, 1);
  }
  const tok = checkpoint.tokenizer;
  const vocabOf = (id: number | undefined): string | null => {
    if (id === undefined || !tok) return null;
    const added = Array.isArray(tok.json.added_tokens) ? tok.json.added_tokens : [];
    const hit = added.find((t) => t && typeof t === "object" && (t as { id?: unknown }).id === id) as { content?: string } | undefined;
    if (hit?.content) return hit.content;
    const vocab = (tok.json.model as { vocab?: unknown } | undefined)?.vocab;
    if (vocab && typeof vocab === "object" && !Array.isArray(vocab)) {
      for (const [k, v] of Object.entries(vocab)) if (v === id) return k;
    }
    return null;
  };
  const entries = new Set<string>();
  const vocab = (tok?.json.model as { vocab?: unknown } | undefined)?.vocab;
  if (vocab && typeof vocab === "object" && !Array.isArray(vocab)) for (const k of Object.keys(vocab)) entries.add(k);
  if (Array.isArray(vocab)) for (const e of vocab) if (Array.isArray(e)) entries.add(String(e[0]));
  for (const t of Array.isArray(tok?.json.added_tokens) ? (tok!.json.added_tokens as { content?: unknown }[]) : []) {
    if (typeof t?.content === "string") entries.add(t.content);
  }
  const vocabEntries = entries.size;
  return {
    dir: checkpoint.dir,
    architecture: spec.architecture,
    family: spec.family,
    sizes: {
      vocab: spec.vocabSize,
      hidden: spec.hiddenSize,
      layers: spec.numLayers,
      heads: spec.numHeads,
      kvHeads: spec.numKvHeads,
      headDim: spec.headDim,
      intermediate: spec.intermediateSize,
      maxPositions: spec.maxPositionEmbeddings,
    },
    attention: { causal: spec.causal, gqaGroup: spec.numHeads / spec.numKvHeads, qkvBias: spec.qkvBias, logitShift: spec.logitShift },
    rope: { theta: spec.rope.theta, scaling: spec.rope.llama3 ? "llama3" : null },
    parameters,
    tiedEmbeddings: spec.weights.lmHead === spec.weights.embed,
    dtypes,
    weightFiles: [...new Set([...checkpoint.tensors.values()].map((t) => t.file))].sort(),
    specialIds: { bos: spec.bosTokenId ?? null, eos: spec.eosTokenIds, pad: spec.padTokenId ?? null, mask: spec.maskTokenId ?? null },
    specialTokens: { bos: vocabOf(spec.bosTokenId), mask: vocabOf(spec.maskTokenId) },
    bos: { addedByTokenizer: spec.addsBos, prefix: tok ? templatePrefixTokens(tok.json) : [] },
    tokenizer: tok ? { path: tok.path, vocabEntries } : null,
    chatTemplate: tok?.chatTemplate !== undefined,
  };
}
