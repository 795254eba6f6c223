/**
 * The family registry: one line per supported model family. Adding a family is its adapter file
 * (./<family>.ts, a `FamilyAdapter` table) plus one line here; every family list and map in src/
 * (index.ts, and through it the trace reader, samplers, prompts, GGUF reader, notebooks' model
 * lookup and the findings' paradigms) is derived from this object, and `Family` is its key union,
 * so a `Record<Family, …>` anywhere fails to compile until it covers the new family.
 */
import { dream } from "./dream.js";
import { llada } from "./llada.js";
import { llama } from "./llama.js";
import { qwen2 } from "./qwen2.js";

export const FAMILY_REGISTRY = {
  llama,
  qwen2,
  llada,
  dream,
} as const;

/** A supported model family: the family word of specs, traces and findings. */
export type Family = keyof typeof FAMILY_REGISTRY;
