/**
 * Qwen2 / Qwen2.5 (HF `Qwen2ForCausalLM`): the Llama block plus q/k/v biases; causal; no BOS
 * added by the tokenizer. Sliding-window attention is not implemented (Qwen2.5 ships it off).
 */
import type { FamilyAdapter } from "./types.js";
import { llama } from "./llama.js";

export const qwen2: FamilyAdapter<"qwen2"> = {
  family: "qwen2",
  aliases: ["qwen"],
  architectures: ["Qwen2ForCausalLM"],
  modelTypes: ["qwen2"],
  keys: { ...llama.keys, headDim: undefined, ropeScaling: undefined },
  defaults: { ropeTheta: 10000, rmsNormEps: 1e-6, tieEmbeddings: false, addsBos: false },
  requires: [
    { key: "hidden_act", allowed: ["silu"], why: "the graph implements SwiGLU with SiLU" },
    { key: "use_sliding_window", allowed: [false], why: "sliding-window attention is not implemented" },
    { key: "rope_scaling", allowed: [null], why: "RoPE scaling (YaRN etc.) is not implemented for qwen2" },
  ],
  // Same tensor names as LLaMA (Qwen2 reuses the HF Llama module layout).
  names: llama.names,
  flags: { causal: true, qkvBias: true, logitShift: 0, masked: false },
  paper: { sampler: "arm", promptFormat: "paper-chat" },
  tinyModel: "tiny-qwen",
  gguf: { architecture: "qwen2", layout: "hf", permuted: false },
};
