/**
 * Every family list and map, derived from the registry (registry.ts): nothing here names a family.
 * Consumers import these instead of writing their own `{ llama: …, qwen2: …, … }`, so the lists
 * cannot disagree (two paradigm maps once did, on the alias `qwen`) and a new family reaches all
 * of them through its registry line.
 */
import { FAMILY_REGISTRY, type Family } from "./registry.js";
import type { FamilyAdapter, PaperPromptFormat, Paradigm, SamplerKind } from "./types.js";

export { FAMILY_REGISTRY, type Family } from "./registry.js";
export type { BlockNames, BlockWeights, FamilyAdapter, GgufLayout, PaperPromptFormat, Paradigm, SamplerKind } from "./types.js";

/** The adapter of each family, in registry order. */
export const ADAPTERS: Readonly<Record<Family, FamilyAdapter<Family>>> = FAMILY_REGISTRY;

/** The supported families, in registry order. */
export const FAMILIES: readonly Family[] = Object.keys(FAMILY_REGISTRY) as Family[];

function byFamily<T>(of: (a: FamilyAdapter<Family>) => T): Readonly<Record<Family, T>> {
  return Object.fromEntries(FAMILIES.map((f) => [f, of(ADAPTERS[f])])) as Record<Family, T>;
}

/** Masked-diffusion families are MDMs, the rest autoregressive (the paper's two paradigms). */
export const PARADIGM_OF_FAMILY: Readonly<Record<Family, Paradigm>> = byFamily((a) => (a.flags.masked ? "MDM" : "ARM"));

/** Which sampler a family runs by default — data, not a branch in the sampler. */
export const DEFAULT_SAMPLER: Readonly<Record<Family, SamplerKind>> = byFamily((a) => a.paper.sampler);

/** The paper's prompt per model family (LLaDA's differs from the other three). */
export const PAPER_FORMAT_OF_FAMILY: Readonly<Record<Family, PaperPromptFormat>> = byFamily((a) => a.paper.promptFormat);

/** Folder names of the embedded tiny models, per family (the notebooks' defaults). */
export const TINY_MODEL_NAMES: Readonly<Record<Family, string>> = byFamily((a) => a.tinyModel ?? `tiny-${a.family}`);

/**
 * Other words users write for a family (in `FLOATSCOPE_MODEL_NAMES`, a notebook's family list, a findings
 * file): `qwen` for `qwen2`, the family word of specs and traces. Accepted at the edges; everything after
 * speaks the family word.
 */
export const FAMILY_ALIASES: Readonly<Record<string, Family>> = Object.fromEntries(
  FAMILIES.flatMap((f) => (ADAPTERS[f].aliases ?? []).map((alias) => [alias, f])),
);

/** Whether `word` is a family word (not an alias). */
export function isFamily(word: string): word is Family {
  return Object.prototype.hasOwnProperty.call(FAMILY_REGISTRY, word);
}

/** The family word for `word` (an alias resolved; other words unchanged). */
export function canonicalFamily(word: string): string {
  return Object.prototype.hasOwnProperty.call(FAMILY_ALIASES, word) ? FAMILY_ALIASES[word] : word;
}

/** The paradigm of a family word or alias; undefined for a word that is neither. */
export function paradigmOf(word: string): Paradigm | undefined {
  const f = canonicalFamily(word);
  return isFamily(f) ? PARADIGM_OF_FAMILY[f] : undefined;
}

/** A family's GGUF reading, keyed by llama.cpp's `general.architecture`. */
export interface GgufFamily {
  family: Family;
  adapter: FamilyAdapter<Family>;
  gguf: NonNullable<FamilyAdapter["gguf"]>;
}

/** llama.cpp architectures we read, in registry order, with their family. */
export const GGUF_FAMILIES: ReadonlyMap<string, GgufFamily> = new Map(
  FAMILIES.flatMap((f) => {
    const gguf = ADAPTERS[f].gguf;
    return gguf ? [[gguf.architecture, { family: f, adapter: ADAPTERS[f], gguf }] as const] : [];
  }),
);
