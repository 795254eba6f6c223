/**
 * LLaDA (HF `LLaDAModelLM`, GSAI-ML/LLaDA-8B-Instruct): OLMo-style names inside the HF wrapper,
 * bidirectional, no biases, no logit shift. `ff_proj` is the SiLU-gated branch, `up_proj` the
 * linear one, `ff_out` (inside a block) the down projection; the LM head is
 * `model.transformer.ff_out` unless `weight_tying`. The vocabulary may be padded:
 * `embedding_size` (rows of wte and of the head) ≥ `vocab_size`, and the logits are that wide.
 */
import type { FamilyAdapter } from "./types.js";

const B = "model.transformer.blocks.{l}";

export const llada: FamilyAdapter<"llada"> = {
  family: "llada",
  architectures: ["LLaDAModelLM"],
  modelTypes: ["llada"],
  keys: {
    hiddenSize: "d_model",
    numLayers: "n_layers",
    numHeads: "n_heads",
    numKvHeads: "n_kv_heads",
    intermediateSize: "mlp_hidden_size",
    vocabSize: ["embedding_size", "vocab_size"],
    rmsNormEps: "rms_norm_eps",
    ropeTheta: "rope_theta",
    maxPositionEmbeddings: "max_sequence_length",
    tieEmbeddings: "weight_tying",
    maskTokenId: "mask_token_id",
    qkvBias: "include_qkv_bias",
  },
  // OLMo defaults: rope_theta 10000, rms_norm_eps 1e-5.
  defaults: { ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false, addsBos: false, maskToken: "<|mdm_mask|>" },
  requires: [
    { key: "block_type", allowed: ["llama"], why: "only the Llama-style block (separate q/k/v, SwiGLU) is implemented" },
    { key: "activation_type", allowed: ["silu", "swiglu"], why: "the graph implements SiLU-gated MLPs" },
    { key: "layer_norm_type", allowed: ["rms"], why: "the graph implements RMSNorm" },
    { key: "rope", allowed: [true], why: "positions come from RoPE" },
    { key: "alibi", allowed: [false], why: "ALiBi is not implemented" },
    { key: "multi_query_attention", allowed: [null, false], why: "use n_kv_heads for grouped-query attention instead" },
    { key: "include_bias", allowed: [false], why: "biases on every linear layer are not implemented" },
    { key: "attention_layer_norm", allowed: [false], why: "q/k norms are not implemented" },
    { key: "input_emb_norm", allowed: [false], why: "embedding scaling is not implemented" },
    { key: "scale_logits", allowed: [false], why: "logit scaling is not implemented" },
    { key: "layer_norm_with_affine", allowed: [true], why: "RMSNorm weights are read from the checkpoint" },
  ],
  names: {
    embed: "model.transformer.wte.weight",
    finalNorm: "model.transformer.ln_f.weight",
    lmHead: "model.transformer.ff_out.weight",
    block: {
      attnNorm: `${B}.attn_norm.weight`,
      q: `${B}.q_proj.weight`,
      k: `${B}.k_proj.weight`,
      v: `${B}.v_proj.weight`,
      o: `${B}.attn_out.weight`,
      mlpNorm: `${B}.ff_norm.weight`,
      gate: `${B}.ff_proj.weight`,
      up: `${B}.up_proj.weight`,
      down: `${B}.ff_out.weight`,
    },
    qkvBias: { q: `${B}.q_proj.bias`, k: `${B}.k_proj.bias`, v: `${B}.v_proj.bias` },
  },
  flags: { causal: false, qkvBias: false, logitShift: 0, masked: true },
  paper: { sampler: "llada", promptFormat: "paper-llada" },
  tinyModel: "tiny-llada",
  gguf: { architecture: "llada", layout: "olmo", permuted: true },
};
