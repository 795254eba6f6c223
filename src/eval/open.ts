/** Open a checkpoint folder for evaluation: engine (no probes unless asked), tokenizer, spec, label. */
import * as path from "node:path";
import { openCheckpoint } from "../checkpoint/checkpoint.js";
import { loadTokenizer, type LoadedTokenizer } from "../checkpoint/tokenizer.js";
import { resolveModelSpec } from "../graph/adapters/index.js";
import type { ModelSpec } from "../graph/spec.js";
import { createEngine, type EngineOptions, type OnnxEngine } from "../runtime/engine.js";
import { CheckpointError } from "../util/errors.js";

export interface EvalModel {
  name: string;
  spec: ModelSpec;
  engine: OnnxEngine;
  tokenizer: LoadedTokenizer;
}

/** Probes cost time and memory; scoring needs none, so the default engine computes none. */
export async function openEvalModel(dir: string, options: EngineOptions = {}): Promise<EvalModel> {
  const ckpt = openCheckpoint(dir);
  const spec = resolveModelSpec(ckpt);
  if (!ckpt.tokenizer) {
    throw new CheckpointError("Evaluation needs the checkpoint's tokenizer", { file: path.join(ckpt.dir, "tokenizer.json"), expected: "tokenizer.json (and tokenizer_config.json with a chat template)" });
  }
  const tokenizer = loadTokenizer(ckpt.tokenizer, { bosTokenId: spec.bosTokenId, eosTokenIds: spec.eosTokenIds });
  const engine = await createEngine({ spec, tensors: ckpt.tensors }, { probes: {}, ...options });
  return { name: path.basename(ckpt.dir), spec, engine, tokenizer };
}
