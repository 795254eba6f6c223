/**
 * Dream (HF `DreamModel`, Dream-org/Dream-v0-Instruct-7B): a Qwen2.5 body with q/k/v biases, run
 * bidirectionally. Dream was adapted from an AR model, so its logits are shifted: the
 * distribution for position i comes from output row i−1 (`logitShift: 1`). Mask id from
 * `mask_token_id` (151666, `<|mask|>`).
 */
import type { FamilyAdapter } from "./types.js";
import { qwen2 } from "./qwen2.js";

export const dream: FamilyAdapter<"dream"> = {
  family: "dream",
  architectures: ["DreamModel"],
  modelTypes: ["dream"],
  keys: { ...qwen2.keys, maskTokenId: "mask_token_id" },
  defaults: { ropeTheta: 10000, rmsNormEps: 1e-6, tieEmbeddings: false, addsBos: false, maskToken: "<|mask|>" },
  requires: qwen2.requires,
  names: qwen2.names,
  flags: { causal: false, qkvBias: true, logitShift: 1, masked: true },
  paper: { sampler: "dream", promptFormat: "paper-chat" },
  tinyModel: "tiny-dream",
  gguf: { architecture: "dream", layout: "hf", permuted: false },
};
