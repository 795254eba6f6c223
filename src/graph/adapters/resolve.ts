/**
 * `specFromAdapter`: the one piece of code that turns a family table (src/families/) plus a checkpoint
 * into a `ModelSpec`. Checks, nanoGPT-style but as typed errors naming the file and field:
 * every size is an integer in a sane range (before anything loops over it), every expected
 * tensor exists with the expected shape and a float dtype, and the file has no blocks beyond
 * the configured count.
 */
import * as path from "node:path";
import { CheckpointError } from "../../util/errors.js";
import {
  describeValue,
  firstPresentKey,
  optionalBool,
  optionalInt,
  optionalIntList,
  optionalNumber,
  optionalObject,
  optionalString,
  requireInt,
  requireNumber,
  type JsonObject,
} from "../../checkpoint/config.js";
import { addsBosFromFiles, configTokenId, tokenIdInFiles } from "../../checkpoint/special-tokens.js";
import type { Checkpoint, TensorInfo } from "../../checkpoint/types.js";
import type { BlockWeights, ModelSpec, RopeSettings } from "../spec.js";
import type { Family, FamilyAdapter } from "../../families/index.js";

/** Upper bounds far above any real model, low enough that a corrupt config cannot make us loop for hours. */
export const LIMITS = {
  layers: 1024,
  hidden: 1 << 17,
  heads: 4096,
  intermediate: 1 << 20,
  vocab: 1 << 24,
  positions: 1 << 26,
  /** RoPE base θ: real models use 1e4 … 1e8; θ ≤ 1 would make frequencies grow with the index. */
  ropeTheta: 1e15,
  /** Llama-3 RoPE scaling factors (real: 8, 1, 4). */
  ropeFactor: 1e4,
} as const;

const FLOAT_DTYPES = new Set(["F32", "F16", "BF16"]);

export function specFromAdapter(a: FamilyAdapter<Family>, ckpt: Checkpoint, architecture: string): ModelSpec {
  const cfg = ckpt.config;
  const file = ckpt.configFile ?? path.join(ckpt.dir, "config.json");
  const o = { file };
  for (const r of a.requires) {
    const v = cfg[r.key];
    if (v !== undefined && !r.allowed.includes(v as never)) {
      throw new CheckpointError(`Unsupported ${a.family} variant`, {
        file,
        field: r.key,
        expected: r.allowed.map((x) => JSON.stringify(x)).join(" or "),
        found: describeValue(v),
        hint: r.why,
      });
    }
  }
  const k = a.keys;
  const hiddenSize = requireInt(cfg, k.hiddenSize, { ...o, min: 1, max: LIMITS.hidden });
  const numLayers = requireInt(cfg, k.numLayers, { ...o, min: 1, max: LIMITS.layers });
  const numHeads = requireInt(cfg, k.numHeads, { ...o, min: 1, max: LIMITS.heads });
  const numKvHeads = optionalInt(cfg, k.numKvHeads, numHeads, { ...o, min: 1, max: numHeads });
  if (numHeads % numKvHeads !== 0) {
    throw new CheckpointError("Query heads are not a multiple of key/value heads", {
      file,
      field: k.numKvHeads,
      expected: `a divisor of ${k.numHeads} = ${numHeads}`,
      found: String(numKvHeads),
    });
  }
  const explicitHeadDim = k.headDim !== undefined && cfg[k.headDim] !== undefined && cfg[k.headDim] !== null;
  const headDim = explicitHeadDim ? requireInt(cfg, k.headDim!, { ...o, min: 2, max: LIMITS.hidden }) : hiddenSize / numHeads;
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) {
    throw new CheckpointError("Head size is not an even integer (RoPE rotates halves)", {
      file,
      field: explicitHeadDim ? k.headDim : k.numHeads,
      expected: explicitHeadDim ? "an even integer" : `a divisor of ${k.hiddenSize} = ${hiddenSize} giving an even head size`,
      found: explicitHeadDim ? String(headDim) : `${numHeads} (head size ${headDim})`,
    });
  }
  const intermediateSize = requireInt(cfg, k.intermediateSize, { ...o, min: 1, max: LIMITS.intermediate });
  const vocabKey = firstPresentKey(cfg, k.vocabSize) ?? k.vocabSize[k.vocabSize.length - 1];
  const vocabSize = requireInt(cfg, vocabKey, { ...o, min: 1, max: LIMITS.vocab });
  // ε = 0 divides by zero on an all-zero row (padding, a zeroed embedding): NaN downstream.
  const rmsNormEps = optionalNumber(cfg, k.rmsNormEps, a.defaults.rmsNormEps, { ...o, above: 0, max: 1 });
  const rope = readRope(a, cfg, file);
  const maxPositionEmbeddings = requireInt(cfg, k.maxPositionEmbeddings, { ...o, min: 1, max: LIMITS.positions });
  const tied = optionalBool(cfg, k.tieEmbeddings, a.defaults.tieEmbeddings, o);
  const qkvBias = k.qkvBias !== undefined ? optionalBool(cfg, k.qkvBias, a.flags.qkvBias, o) : a.flags.qkvBias;

  // --- tensors: names from the table, shapes from the sizes just read.
  const check = (name: string, shape: number[]): string => {
    checkTensor(ckpt, name, shape, file);
    return name;
  };
  const qRows = numHeads * headDim;
  const kvRows = numKvHeads * headDim;
  const at = (t: string, l: number) => t.replaceAll("{l}", String(l));
  const blocks: BlockWeights[] = [];
  for (let l = 0; l < numLayers; l++) {
    const n = a.names.block;
    const b: BlockWeights = {
      attnNorm: check(at(n.attnNorm, l), [hiddenSize]),
      q: check(at(n.q, l), [qRows, hiddenSize]),
      k: check(at(n.k, l), [kvRows, hiddenSize]),
      v: check(at(n.v, l), [kvRows, hiddenSize]),
      o: check(at(n.o, l), [hiddenSize, qRows]),
      mlpNorm: check(at(n.mlpNorm, l), [hiddenSize]),
      gate: check(at(n.gate, l), [intermediateSize, hiddenSize]),
      up: check(at(n.up, l), [intermediateSize, hiddenSize]),
      down: check(at(n.down, l), [hiddenSize, intermediateSize]),
    };
    if (qkvBias) {
      b.qBias = check(at(a.names.qkvBias.q, l), [qRows]);
      b.kBias = check(at(a.names.qkvBias.k, l), [kvRows]);
      b.vBias = check(at(a.names.qkvBias.v, l), [kvRows]);
    }
    blocks.push(b);
  }
  // A block beyond the configured count means config.json and the weights disagree.
  const extra = at(a.names.block.q, numLayers);
  if (ckpt.tensors.has(extra)) {
    throw new CheckpointError("Checkpoint has more blocks than config.json says", {
      file,
      field: k.numLayers,
      expected: `${numLayers} (as configured)`,
      found: `a tensor ${extra}`,
    });
  }
  const embed = check(a.names.embed, [vocabSize, hiddenSize]);
  const finalNorm = check(a.names.finalNorm, [hiddenSize]);
  const lmHead = tied ? embed : check(a.names.lmHead, [vocabSize, hiddenSize]);

  const ids = readSpecialIds(a, ckpt, file, vocabSize);
  return {
    family: a.family,
    architecture,
    vocabSize,
    hiddenSize,
    numLayers,
    numHeads,
    numKvHeads,
    headDim,
    intermediateSize,
    rmsNormEps,
    rope,
    maxPositionEmbeddings,
    causal: a.flags.causal,
    qkvBias,
    logitShift: a.flags.logitShift,
    ...ids,
    addsBos: addsBosFromFiles(ckpt.tokenizer, a.defaults.addsBos),
    weights: { embed, finalNorm, lmHead, blocks },
  };
}

function checkTensor(ckpt: Checkpoint, name: string, shape: number[], configFile: string): TensorInfo {
  const t = ckpt.tensors.get(name);
  if (t === undefined) {
    throw new CheckpointError("Checkpoint is missing a tensor", {
      file: ckpt.dir,
      field: name,
      expected: `a tensor of shape [${shape.join(", ")}]`,
      found: "missing",
      hint: `config.json (${configFile}) and the weights disagree, or the checkpoint is incomplete`,
    });
  }
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new CheckpointError("Tensor has the wrong shape for config.json", {
      file: t.file,
      field: name,
      expected: `[${shape.join(", ")}]`,
      found: `[${t.shape.join(", ")}]`,
    });
  }
  if (!FLOAT_DTYPES.has(t.dtype)) {
    throw new CheckpointError("Tensor has an unsupported dtype", {
      file: t.file,
      field: `${name}.dtype`,
      expected: "F32, F16 or BF16",
      found: t.dtype,
    });
  }
  return t;
}

function readRope(a: FamilyAdapter, cfg: JsonObject, file: string): RopeSettings {
  const theta = optionalNumber(cfg, a.keys.ropeTheta, a.defaults.ropeTheta, { file, above: 1, max: LIMITS.ropeTheta });
  if (a.keys.ropeScaling === undefined) return { theta };
  const s = optionalObject(cfg, a.keys.ropeScaling, { file });
  if (s === undefined) return { theta };
  const sf = { file };
  const type = optionalString(s, "rope_type", sf) ?? optionalString(s, "type", sf);
  if (type === "default") return { theta };
  if (type !== "llama3") {
    throw new CheckpointError("Unsupported RoPE scaling", {
      file,
      field: `${a.keys.ropeScaling}.rope_type`,
      expected: '"llama3", "default" or no rope_scaling',
      found: describeValue(type),
    });
  }
  const sub = `${file} (${a.keys.ropeScaling})`;
  const factor = (key: string, bounds: { min?: number; above?: number }) =>
    requireNumber(s, key, { file: sub, max: LIMITS.ropeFactor, ...bounds });
  const llama3 = {
    factor: factor("factor", { min: 1 }),
    lowFreqFactor: factor("low_freq_factor", { above: 0 }),
    highFreqFactor: factor("high_freq_factor", { above: 0 }),
    originalMaxPositionEmbeddings: requireInt(s, "original_max_position_embeddings", { file: sub, min: 1, max: LIMITS.positions }),
  };
  if (!(llama3.highFreqFactor > llama3.lowFreqFactor)) {
    throw new CheckpointError("RoPE scaling bands are inverted", {
      file,
      field: `${a.keys.ropeScaling}.high_freq_factor`,
      expected: `> low_freq_factor (${llama3.lowFreqFactor})`,
      found: String(llama3.highFreqFactor),
    });
  }
  return { theta, llama3 };
}

/**
 * BOS/EOS/PAD/mask ids: config.json first (generation_config.json adds EOS ids, as Llama-3-Instruct
 * lists `<|eot_id|>` there), then the tokenizer files' special-token strings. Every id must be a
 * row of the logits.
 */
function readSpecialIds(a: FamilyAdapter, ckpt: Checkpoint, file: string, vocabSize: number) {
  const cfg = ckpt.config;
  const o = { file, min: 0, max: vocabSize - 1 };
  const tok = ckpt.tokenizer;
  // Fallbacks from the tokenizer files only count when they are rows of the logits.
  const fromTok = (key: "bos_token" | "eos_token" | "pad_token") => {
    const id = tok ? configTokenId(tok, key) : undefined;
    return id !== undefined && id < vocabSize ? id : undefined;
  };
  const bosTokenId = optionalInt(cfg, "bos_token_id", fromTok("bos_token"), o);
  const padTokenId = optionalInt(cfg, "pad_token_id", fromTok("pad_token"), o);
  const eos = new Set(optionalIntList(cfg, "eos_token_id", o));
  if (ckpt.generationConfig) {
    const gf = path.join(ckpt.dir, "generation_config.json");
    for (const id of optionalIntList(ckpt.generationConfig, "eos_token_id", { ...o, file: gf })) eos.add(id);
  }
  const eosFallback = eos.size === 0 ? fromTok("eos_token") : undefined;
  if (eosFallback !== undefined) eos.add(eosFallback);
  let maskTokenId: number | undefined;
  if (a.flags.masked) {
    const key = a.keys.maskTokenId ?? "mask_token_id";
    const fromTok = tok && a.defaults.maskToken ? tokenIdInFiles(tok, a.defaults.maskToken) : undefined;
    maskTokenId = optionalInt(cfg, key, fromTok, o);
    if (maskTokenId === undefined) {
      throw new CheckpointError("Masked-diffusion checkpoint has no mask token id", {
        file,
        field: key,
        expected: `an integer id (or a ${a.defaults.maskToken ?? "mask"} token in tokenizer.json)`,
        found: "missing",
      });
    }
    if (maskTokenId > o.max) {
      throw new CheckpointError("Mask token id is outside the vocabulary", {
        file,
        field: key,
        expected: `< ${vocabSize}`,
        found: String(maskTokenId),
      });
    }
  }
  return { bosTokenId, eosTokenIds: [...eos], padTokenId, maskTokenId };
}
