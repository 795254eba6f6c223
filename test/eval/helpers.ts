/** Shared loaders for the eval tests: the tiny models' tokenizer fixture and the parity checkpoints' tokenizers. */
import * as path from "node:path";
import { readTokenizerFiles, openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { loadTokenizer, type LoadedTokenizer } from "../../src/checkpoint/tokenizer.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";

export const FIXTURES = path.join(__dirname, "fixtures");
export const ROOT = path.resolve(__dirname, "..", "..");
export const HELDOUT = path.join(ROOT, "models", "world", "eval-heldout.jsonl.gz");
export const PARITY = path.join(ROOT, "test", "fixtures", "parity");

export function worldTokenizer(): LoadedTokenizer {
  const files = readTokenizerFiles(path.join(FIXTURES, "world-tokenizer"));
  if (!files) throw new Error("world tokenizer fixture missing");
  return loadTokenizer(files, { bosTokenId: 1, eosTokenIds: [2] });
}

export function parityTokenizer(variant: string): { tok: LoadedTokenizer; bos?: number } {
  const ckpt = openCheckpoint(path.join(PARITY, variant, "model"));
  const spec = resolveModelSpec(ckpt);
  return { tok: loadTokenizer(ckpt.tokenizer!, { bosTokenId: spec.bosTokenId, eosTokenIds: spec.eosTokenIds }), bos: spec.bosTokenId };
}
