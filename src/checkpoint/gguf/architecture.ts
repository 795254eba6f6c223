/**
 * GGUF metadata → the Hugging Face `config.json` our family adapters read, and GGUF tensor names
 * → Hugging Face tensor names, for the llama.cpp architectures the families name (`gguf` in each
 * adapter, src/families/). The config is written with the adapter's own keys and the values its
 * `requires` allows, so the checkpoint then goes through the same adapter tables (and the same
 * checks) as a safetensors folder.
 *
 * llama.cpp conventions undone here:
 * - dims are stored fastest-first, so a GGUF [in, out] matrix is HF's row-major [out, in];
 * - its converter permutes the rows of LLaMA-family (`llama`, `llada`) q and k projections so that
 *   each head's rotary pairs are adjacent (its "normal" RoPE); HF rotates half-head pairs. Row
 *   h·d + 2i + s of the file is row h·d + s·d/2 + i of the HF weight (d = head size, s ∈ {0, 1});
 *   qwen2 and dream are converted unpermuted (llama.cpp runs them with "neox" RoPE = HF's);
 * - no `output.weight` means the head is tied to the embedding.
 */
import { GGUF_FAMILIES, type GgufFamily } from "../../families/index.js";
import { CheckpointError } from "../../util/errors.js";
import type { GgufMetadata } from "./metadata.js";
import type { GgufTensorEntry } from "./reader.js";

/** llama.cpp's `general.architecture` of a family we read (the families' `gguf.architecture`). */
export type GgufArchitecture = string;
/** The architectures we read, in registry order. */
export const GGUF_ARCHITECTURES: readonly GgufArchitecture[] = [...GGUF_FAMILIES.keys()];

export interface TensorMapping {
  /** Hugging Face name. */
  name: string;
  /** Undo llama.cpp's rotary row permutation with this many heads. */
  unpermuteHeads?: number;
}

export interface ArchitectureMapping {
  architecture: GgufArchitecture;
  config: Record<string, unknown>;
  /** GGUF tensor name → HF name; GGUF tensors not listed keep their name. */
  tensors: Map<string, TensorMapping>;
}

/** HF names by role: the Llama module layout (llama, qwen2, dream) and LLaDA's OLMo layout. */
const HF_NAMES = {
  hf: {
    token_embd: "model.embed_tokens.weight",
    output_norm: "model.norm.weight",
    output: "lm_head.weight",
    block: (l: number) => `model.layers.${l}`,
    parts: {
      attn_norm: "input_layernorm",
      attn_q: "self_attn.q_proj",
      attn_k: "self_attn.k_proj",
      attn_v: "self_attn.v_proj",
      attn_output: "self_attn.o_proj",
      ffn_norm: "post_attention_layernorm",
      ffn_gate: "mlp.gate_proj",
      ffn_up: "mlp.up_proj",
      ffn_down: "mlp.down_proj",
    } as Record<string, string>,
  },
  olmo: {
    token_embd: "model.transformer.wte.weight",
    output_norm: "model.transformer.ln_f.weight",
    output: "model.transformer.ff_out.weight",
    block: (l: number) => `model.transformer.blocks.${l}`,
    parts: {
      attn_norm: "attn_norm",
      attn_q: "q_proj",
      attn_k: "k_proj",
      attn_v: "v_proj",
      attn_output: "attn_out",
      ffn_norm: "ff_norm",
      ffn_gate: "ff_proj",
      ffn_up: "up_proj",
      ffn_down: "ff_out",
    } as Record<string, string>,
  },
};

/** The family `general.architecture` names, refusing an architecture no family reads and per-layer head counts. */
function familyOf(meta: GgufMetadata): { architecture: string; adapter: GgufFamily["adapter"]; gguf: GgufFamily["gguf"] } {
  const arch = meta.string("general.architecture");
  if (arch === undefined) {
    throw new CheckpointError("GGUF file has no architecture", {
      file: meta.file,
      field: "general.architecture",
      expected: GGUF_ARCHITECTURES.join(", "),
      found: "missing",
    });
  }
  const family = GGUF_FAMILIES.get(arch);
  if (family === undefined) {
    throw new CheckpointError("Unsupported GGUF architecture", {
      file: meta.file,
      field: "general.architecture",
      expected: `one of ${GGUF_ARCHITECTURES.join(", ")}`,
      found: JSON.stringify(arch),
    });
  }
  const k = (s: string) => `${arch}.${s}`;
  for (const key of [k("attention.head_count"), k("attention.head_count_kv")]) {
    if (meta.entries.get(key)?.type === 9) {
      throw new CheckpointError("Per-layer head counts are not supported", {
        file: meta.file,
        field: key,
        expected: "one integer for all layers",
        found: "an array",
      });
    }
  }
  return { architecture: arch, adapter: family.adapter, gguf: family.gguf };
}

/**
 * The family's config.json, in its own keys: sizes from the metadata, and each variant key the adapter
 * checks set to the first value it accepts (llama.cpp only converts that variant).
 */
function hfConfig(
  adapter: GgufFamily["adapter"],
  s: {
    hidden: number;
    layers: number;
    heads: number;
    kvHeads: number;
    ff: number;
    vocab: number;
    ctx: number;
    tied: boolean;
    headDim: number;
    eps: number;
    theta: number | undefined;
  },
  ids: ReturnType<typeof specialIds>,
  qkvBias: boolean,
): Record<string, unknown> {
  const { hidden, layers, heads, kvHeads, ff, vocab, ctx, tied, headDim, eps, theta } = s;
  const keys = adapter.keys;
  const config: Record<string, unknown> = { architectures: [adapter.architectures[0]], model_type: adapter.modelTypes[0] };
  Object.assign(config, {
    [keys.hiddenSize]: hidden,
    [keys.numLayers]: layers,
    [keys.numHeads]: heads,
    [keys.numKvHeads]: kvHeads,
    [keys.intermediateSize]: ff,
    ...Object.fromEntries(keys.vocabSize.map((key) => [key, vocab])),
    [keys.maxPositionEmbeddings]: ctx,
    [keys.tieEmbeddings]: tied,
  });
  for (const r of adapter.requires) config[r.key] = r.allowed[0];
  if (keys.headDim !== undefined) config[keys.headDim] = headDim;
  if (keys.qkvBias !== undefined) config[keys.qkvBias] = qkvBias;
  config[keys.rmsNormEps] = eps;
  if (theta !== undefined) config[keys.ropeTheta] = theta;
  if (ids.bos !== undefined) config.bos_token_id = ids.bos;
  // Chat models end a turn with EOT (Llama-3's <|eot_id|>): HF lists it among the EOS ids.
  const eos = [...new Set([ids.eos, ids.eot].filter((x): x is number => x !== undefined))];
  if (eos.length > 0) config.eos_token_id = eos.length === 1 ? eos[0] : eos;
  if (ids.pad !== undefined) config.pad_token_id = ids.pad;
  if (ids.mask !== undefined) config.mask_token_id = ids.mask;
  return config;
}

/** GGUF tensor name → HF name in the family's layout, undoing llama.cpp's q/k row permutation where it applied one. */
function tensorMap(tensors: GgufTensorEntry[], gguf: GgufFamily["gguf"], heads: number, kvHeads: number): Map<string, TensorMapping> {
  const names = HF_NAMES[gguf.layout];
  const map = new Map<string, TensorMapping>();
  for (const t of tensors) {
    const top = (
      { "token_embd.weight": names.token_embd, "output_norm.weight": names.output_norm, "output.weight": names.output } as Record<
        string,
        string
      >
    )[t.name];
    if (top !== undefined) {
      map.set(t.name, { name: top });
      continue;
    }
    const m = /^blk\.(\d+)\.([a-z_]+)\.(weight|bias)$/.exec(t.name);
    const part = m ? names.parts[m[2]] : undefined;
    if (!m || part === undefined) continue;
    const l = Number(m[1]);
    const mapping: TensorMapping = { name: `${names.block(l)}.${part}.${m[3]}` };
    if (gguf.permuted && (m[2] === "attn_q" || m[2] === "attn_k")) mapping.unpermuteHeads = m[2] === "attn_q" ? heads : kvHeads;
    map.set(t.name, mapping);
  }
  return map;
}

export function mapArchitecture(meta: GgufMetadata, tensors: GgufTensorEntry[]): ArchitectureMapping {
  const { architecture: a, adapter, gguf } = familyOf(meta);
  const k = (s: string) => `${a}.${s}`;
  const byName = new Map(tensors.map((t) => [t.name, t]));
  const embd = byName.get("token_embd.weight");
  if (embd === undefined || embd.dims.length !== 2) {
    throw new CheckpointError("GGUF file has no 2-D token embedding", {
      file: meta.file,
      field: "token_embd.weight",
      expected: "a [hidden, vocab] tensor",
      found: embd ? `dims [${embd.dims}]` : "missing",
    });
  }
  // The keys llama.cpp's load_hparams reads without a default, in its order: context_length,
  // embedding_length, block_count for every architecture, the RMS epsilon for these four. It reads
  // head_count and feed_forward_length as optional, but no transformer here can be built without them.
  const ctx = meta.requireInt(k("context_length"), { min: 1 });
  const hidden = meta.requireInt(k("embedding_length"), { min: 1 });
  const layers = meta.requireInt(k("block_count"), { min: 1 });
  const ff = meta.requireInt(k("feed_forward_length"), { min: 1 });
  const heads = meta.requireInt(k("attention.head_count"), { min: 1 });
  const eps = meta.requireFloat(k("attention.layer_norm_rms_epsilon"), { min: 0, max: 1 });
  const kvHeads = meta.int(k("attention.head_count_kv"), { min: 1, max: heads }) ?? heads;
  // The embedding's row length is the one size stored twice: check it first, as the head size
  // (embedding_length / head_count) depends on it.
  if (embd.dims[0] !== hidden) {
    throw new CheckpointError("GGUF embedding length disagrees with the token embedding", {
      file: meta.file,
      field: k("embedding_length"),
      expected: `${embd.dims[0]} (the length of each row of token_embd.weight)`,
      found: `${hidden}; token_embd.weight is [${embd.dims}] (ggml order: length, rows)`,
    });
  }
  const keyLength = meta.int(k("attention.key_length"), { min: 2 });
  if (keyLength === undefined && hidden % heads !== 0) {
    throw new CheckpointError("GGUF head count does not divide the embedding length", {
      file: meta.file,
      field: k("attention.head_count"),
      expected: `a divisor of ${k("embedding_length")} ${hidden} (the head size is embedding_length / head_count without ${k("attention.key_length")})`,
      found: String(heads),
    });
  }
  const headDim = keyLength ?? hidden / heads;
  const valueDim = meta.int(k("attention.value_length"), { min: 2 });
  if (valueDim !== undefined && valueDim !== headDim) {
    throw new CheckpointError("Different key and value head sizes are not supported", {
      file: meta.file,
      field: k("attention.value_length"),
      expected: `${headDim} (= key_length)`,
      found: String(valueDim),
    });
  }
  const vocab = embd.dims[1];
  const vocabSize = meta.int(k("vocab_size"), { min: 1 });
  if (vocabSize !== undefined && vocabSize !== vocab) {
    throw new CheckpointError("GGUF vocabulary size disagrees with the token embedding", {
      file: meta.file,
      field: k("vocab_size"),
      expected: `${vocab} (the rows of token_embd.weight [${embd.dims}])`,
      found: String(vocabSize),
    });
  }
  // llama.cpp sizes token_embd by the token count: a token past the last row has no embedding.
  const tokens = meta.stringArray("tokenizer.ggml.tokens");
  if (tokens !== undefined && tokens.length > vocab) {
    throw new CheckpointError("GGUF vocabulary has more tokens than the embedding has rows", {
      file: meta.file,
      field: "tokenizer.ggml.tokens",
      expected: `≤ ${vocab} tokens (the rows of token_embd.weight [${embd.dims}])`,
      found: `${tokens.length} tokens`,
    });
  }
  const headText =
    keyLength !== undefined
      ? `head size ${headDim} (${k("attention.key_length")})`
      : `head size ${headDim} (= embedding_length ${hidden} / head_count ${heads})`;
  const kvText = meta.has(k("attention.head_count_kv")) ? `head_count_kv ${kvHeads}` : `head_count_kv ${kvHeads} (= head_count, no key)`;
  if (byName.has("rope_freqs.weight")) {
    throw new CheckpointError("Per-frequency RoPE factors are not supported", {
      file: meta.file,
      field: "rope_freqs.weight",
      expected: "no rope_freqs tensor (plain RoPE)",
      found: "a rope_freqs tensor (Llama-3.1-style scaling)",
      hint: "convert the Hugging Face checkpoint to safetensors instead: its rope_scaling is supported there",
    });
  }
  checkTensors(meta.file, a, tensors, {
    layers,
    E: [hidden, `embedding_length ${hidden}`],
    V: [vocab, `the ${vocab} rows of token_embd.weight`],
    Q: [heads * headDim, `head_count ${heads} × ${headText}`],
    KV: [kvHeads * headDim, `${kvText} × ${headText}`],
    F: [ff, `feed_forward_length ${ff}`],
  });
  const ropeDims = meta.int(k("rope.dimension_count"));
  if (ropeDims !== undefined && ropeDims !== headDim) {
    // The tensors agree with head_count, so the file really rotates part of each head (or both the
    // head count and the shapes are wrong in the same way).
    throw new CheckpointError("GGUF rotary dimension count differs from the head size (partial rotary embeddings are not supported)", {
      file: meta.file,
      field: k("rope.dimension_count"),
      expected: `${headDim}: the ${headText}`,
      found: String(ropeDims),
    });
  }
  const scaling = meta.string(k("rope.scaling.type"));
  if (scaling !== undefined && scaling !== "none") {
    throw new CheckpointError("RoPE scaling from GGUF is not supported", {
      file: meta.file,
      field: k("rope.scaling.type"),
      expected: '"none" or absent',
      found: JSON.stringify(scaling),
    });
  }
  const tied = !byName.has("output.weight");
  const theta = meta.float(k("rope.freq_base"), { min: Number.MIN_VALUE });
  const ids = specialIds(meta, vocab);
  const causal = meta.bool(k("attention.causal"));
  const expectCausal = adapter.flags.causal;
  if (causal !== undefined && causal !== expectCausal) {
    throw new CheckpointError("GGUF attention mode contradicts the architecture", {
      file: meta.file,
      field: k("attention.causal"),
      expected: `${expectCausal} for ${a}`,
      found: String(causal),
    });
  }

  const config = hfConfig(
    adapter,
    { hidden, layers, heads, kvHeads, ff, vocab, ctx, tied, headDim, eps, theta },
    ids,
    byName.has("blk.0.attn_q.bias"),
  );

  return { architecture: a, config, tensors: tensorMap(tensors, gguf, heads, kvHeads) };
}

/** A size the metadata implies, with the words that say where it comes from. */
type Size = [number, string];

/** The parts of a block and, for projections, whether a bias may follow (llama.cpp's optional biases). */
const BLOCK_PARTS: Record<string, { dims: (s: Record<"E" | "Q" | "KV" | "F", Size>) => Size[]; bias: boolean }> = {
  attn_norm: { dims: (s) => [s.E], bias: false },
  ffn_norm: { dims: (s) => [s.E], bias: false },
  attn_q: { dims: (s) => [s.E, s.Q], bias: true },
  attn_k: { dims: (s) => [s.E, s.KV], bias: true },
  attn_v: { dims: (s) => [s.E, s.KV], bias: true },
  attn_output: { dims: (s) => [s.Q, s.E], bias: true },
  ffn_gate: { dims: (s) => [s.E, s.F], bias: true },
  ffn_up: { dims: (s) => [s.E, s.F], bias: true },
  ffn_down: { dims: (s) => [s.F, s.E], bias: true },
};

/**
 * Every tensor is one llama.cpp creates for these architectures, in a block < block_count, with the
 * shape it creates it with (ggml order: input length first). llama.cpp refuses a file with other
 * tensors ("wrong number of tensors") or other shapes ("wrong shape"); the error names the tensor
 * and the metadata fields its expected shape comes from. Weights are checked before biases, so a
 * wrong head count is reported on the projection it sizes.
 */
function checkTensors(
  file: string,
  arch: GgufArchitecture,
  tensors: GgufTensorEntry[],
  s: { layers: number; E: Size; V: Size; Q: Size; KV: Size; F: Size },
): void {
  const expected = (t: GgufTensorEntry): Size[] => {
    if (t.name === "token_embd.weight") return [s.E, [t.dims[1], "its rows"]];
    if (t.name === "output.weight") return [s.E, s.V];
    if (t.name === "output_norm.weight") return [s.E];
    const m = /^blk\.(0|[1-9]\d*)\.([a-z_]+)\.(weight|bias)$/.exec(t.name);
    const part = m ? BLOCK_PARTS[m[2]] : undefined;
    if (!m || part === undefined || (m[3] === "bias" && !part.bias)) {
      throw new CheckpointError(`GGUF tensor is not part of a ${arch} model`, {
        file,
        field: t.name,
        expected: `token_embd.weight, output_norm.weight, output.weight or blk.<i>.<${Object.keys(BLOCK_PARTS).join("|")}>.weight (projections may have a .bias)`,
        found: JSON.stringify(t.name),
        hint: "llama.cpp refuses a file with tensors its model does not create",
      });
    }
    const l = Number(m[1]);
    if (l >= s.layers) {
      throw new CheckpointError("GGUF tensor lies beyond the model's blocks", {
        file,
        field: t.name,
        expected: `a block index < ${arch}.block_count = ${s.layers}`,
        found: `block ${l}`,
      });
    }
    const dims = part.dims(s);
    return m[3] === "bias" ? [dims[dims.length - 1]] : dims;
  };
  const ordered = [...tensors.filter((t) => !t.name.endsWith(".bias")), ...tensors.filter((t) => t.name.endsWith(".bias"))];
  for (const t of ordered) {
    const want = expected(t);
    if (want.length !== t.dims.length || want.some(([n], i) => n !== t.dims[i])) {
      throw new CheckpointError("GGUF tensor shape disagrees with the metadata", {
        file,
        field: t.name,
        expected: `[${want.map(([n, why]) => `${n}: ${why}`).join(", ")}] (ggml order)`,
        found: `[${t.dims.join(", ")}]`,
      });
    }
  }
}

function specialIds(meta: GgufMetadata, vocab: number) {
  const id = (key: string) => meta.int(`tokenizer.ggml.${key}`, { min: 0, max: Math.max(vocab, 1 << 24) });
  return {
    bos: id("bos_token_id"),
    eos: id("eos_token_id"),
    eot: id("eot_token_id"),
    pad: id("padding_token_id"),
    mask: id("mask_token_id"),
  };
}
