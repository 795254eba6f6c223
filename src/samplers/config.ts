/**
 * `RunConfig`: every setting of a sampler run, parsed and validated once (from CLI flags or a
 * notebook object) before any compute, and written verbatim into the trace, so a trace says how
 * it was made. Defaults reproduce the paper's settings (docs/samplers.md).
 */
import { DEFAULT_SAMPLER, type SamplerKind } from "../families/index.js";
import type { ModelSpec } from "../graph/spec.js";
import { SettingsError, keyword } from "../util/errors.js";
import { DEFAULT_PROBES, type ProbeRequest } from "../util/probes.js";

export const SAMPLERS: readonly SamplerKind[] = ["llada", "dream", "arm"];

/** The ordering/remasking algorithm, named as upstream names it, per sampler. */
export const ALGS: Record<SamplerKind, readonly string[]> = {
  llada: ["low_confidence", "random"],
  dream: ["entropy", "maskgit_plus", "topk_margin", "origin"],
  arm: ["greedy", "sample"],
};

export interface RunConfig {
  sampler: SamplerKind;
  /** llada: low_confidence | random; dream: entropy | maskgit_plus | topk_margin | origin; arm: greedy | sample. */
  alg: string;
  /** Tokens to generate (LLaDA `gen_length`, Dream `max_new_tokens`, ARM max new tokens). */
  genLength: number;
  /** Denoising steps over the whole generation (ARM: = genLength, one token per step). */
  steps: number;
  /** LLaDA block length (must divide genLength; blocks must divide steps). Others: = genLength. */
  blockLength: number;
  /** τ. LLaDA: Gumbel temperature; Dream/ARM: logits are divided by τ before sampling. */
  temperature: number;
  /** Dream / ARM(sample) nucleus; null = off. */
  topP: number | null;
  /** Dream / ARM(sample) top-k; null = off. */
  topK: number | null;
  /** Classifier-free guidance scale c (masked-diffusion samplers); 0 = off. */
  cfgScale: number;
  /** Dream's final timestep ε in linspace(1, ε, steps+1). */
  eps: number;
  /** Dream's alg_temp: 0 = top-n positions, > 0 = sample positions from softmax(conf/alg_temp). */
  algTemp: number;
  /** ARM: stop a row when it emits one of the model's EOS ids. */
  stopAtEos: boolean;
  /** Seed of the one RNG (row i of a batch uses stream i). */
  seed: number;
  /** Probes recorded at every step and in the final pass. */
  probes: ProbeRequest;
  /** Refuse runs whose trace would exceed this many bytes (estimated up front). */
  maxTraceBytes: number;
  /** Let the tokenizer add its special tokens (BOS for LLaMA) when encoding prompt text. */
  addSpecialTokens: boolean;
}

/**
 * The paper's settings differ between samplers only in the decoding algorithm, temperature, top-p
 * and whether to stop at EOS; one literal keeps the shared fields (and their key order) in one place.
 */
function paperDefaults(alg: string, temperature: number, topP: number | null, stopAtEos: boolean): Omit<RunConfig, "sampler"> {
  return {
    alg,
    genLength: 32,
    steps: 32,
    blockLength: 32,
    temperature,
    topP,
    topK: null,
    cfgScale: 0,
    eps: 1e-3,
    algTemp: 0,
    stopAtEos,
    seed: 0,
    probes: DEFAULT_PROBES,
    maxTraceBytes: 4 * 1024 ** 3,
    addSpecialTokens: true,
  };
}

/** Paper defaults per sampler (the paper's QA-evaluation settings, docs/samplers.md). */
export const SAMPLER_DEFAULTS: Record<SamplerKind, Omit<RunConfig, "sampler">> = {
  llada: paperDefaults("low_confidence", 0, null, false),
  dream: paperDefaults("entropy", 0.2, 0.95, false),
  arm: paperDefaults("greedy", 0, null, true),
};

const KEYS = new Set<string>(["sampler", ...Object.keys(SAMPLER_DEFAULTS.llada)]);

const where = (field: string) => ({ file: "settings", field });

function int(v: unknown, field: string, min: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) {
    throw new SettingsError(`Invalid ${field}`, { ...where(field), expected: `an integer ≥ ${min}`, found: JSON.stringify(v) });
  }
  return v;
}

function num(v: unknown, field: string, ok: (x: number) => boolean, expected: string): number {
  if (typeof v !== "number" || !Number.isFinite(v) || !ok(v)) {
    throw new SettingsError(`Invalid ${field}`, { ...where(field), expected, found: JSON.stringify(v) });
  }
  return v;
}

/**
 * Resolve a partial config against the model: fill defaults for the sampler (default: the
 * family's), check every field, and check the combinations the algorithms require. Throws
 * `SettingsError` naming the field; nothing runs before this passes.
 */
export function resolveRunConfig(input: Partial<RunConfig> & Record<string, unknown>, spec: ModelSpec): RunConfig {
  for (const k of Object.keys(input)) {
    if (!KEYS.has(k)) {
      throw new SettingsError("Unknown setting", { ...where(k), expected: `one of ${[...KEYS].join(", ")}` });
    }
  }
  const sampler = keyword(input.sampler ?? DEFAULT_SAMPLER[spec.family], SAMPLERS, where("sampler"));
  const d = SAMPLER_DEFAULTS[sampler];
  const pick = <K extends keyof RunConfig>(k: K): unknown => (input[k] === undefined ? d[k as Exclude<K, "sampler">] : input[k]);

  const alg = keyword(pick("alg"), ALGS[sampler], where("alg"));
  const genLength = int(pick("genLength"), "genLength", 1);
  // Paper settings use one step per token and one block (G = S = B): both default to genLength.
  const steps = int(input.steps ?? genLength, "steps", 1);
  const blockLength = int(input.blockLength ?? genLength, "blockLength", 1);
  const cfg: RunConfig = {
    sampler,
    alg,
    genLength,
    steps,
    blockLength,
    temperature: num(pick("temperature"), "temperature", (x) => x >= 0, "a number ≥ 0"),
    topP: pick("topP") === null ? null : num(pick("topP"), "topP", (x) => x > 0 && x <= 1, "a number in (0, 1], or null"),
    topK: pick("topK") === null ? null : int(pick("topK"), "topK", 1),
    cfgScale: num(pick("cfgScale"), "cfgScale", (x) => x >= 0, "a number ≥ 0"),
    eps: num(pick("eps"), "eps", (x) => x > 0 && x < 1, "a number in (0, 1)"),
    algTemp: num(pick("algTemp"), "algTemp", (x) => x >= 0, "a number ≥ 0"),
    stopAtEos: bool(pick("stopAtEos"), "stopAtEos"),
    seed: int(pick("seed"), "seed", 0),
    probes: probesOf(pick("probes")),
    maxTraceBytes: num(pick("maxTraceBytes"), "maxTraceBytes", (x) => x > 0, "a positive number of bytes"),
    addSpecialTokens: bool(pick("addSpecialTokens"), "addSpecialTokens"),
  };

  if (sampler === "llada") {
    if (genLength % blockLength !== 0) {
      throw new SettingsError("genLength must be a multiple of blockLength", {
        ...where("blockLength"),
        expected: `a divisor of genLength ${genLength}`,
        found: String(blockLength),
      });
    }
    const blocks = genLength / blockLength;
    if (steps % blocks !== 0) {
      throw new SettingsError("steps must be divisible by the number of blocks", {
        ...where("steps"),
        expected: `a multiple of ${blocks} (genLength ${genLength} / blockLength ${blockLength})`,
        found: String(steps),
      });
    }
  } else if (blockLength !== genLength) {
    throw new SettingsError(`The ${sampler} sampler has no blocks`, {
      ...where("blockLength"),
      expected: `omitted or = genLength ${genLength}`,
      found: String(blockLength),
    });
  }
  if (sampler === "arm" && steps !== genLength) {
    throw new SettingsError("ARM decoding makes one token per step", {
      ...where("steps"),
      expected: `omitted or = genLength ${genLength}`,
      found: String(steps),
    });
  }
  if (sampler !== "arm" && spec.maskTokenId === undefined) {
    throw new SettingsError(`The ${sampler} sampler needs a masked-diffusion model`, {
      ...where("sampler"),
      expected: `"arm" for ${spec.architecture} (no mask token)`,
      found: JSON.stringify(sampler),
    });
  }
  // ARM decoding reads the next token at the last position: on a bidirectional (masked-diffusion)
  // model that row predicts nothing in particular, and the answer came back empty.
  if (sampler === "arm" && !spec.causal) {
    throw new SettingsError("The arm sampler needs a causal model", {
      ...where("sampler"),
      expected: `${JSON.stringify(DEFAULT_SAMPLER[spec.family])} for ${spec.architecture} (a masked-diffusion model)`,
      found: JSON.stringify(sampler),
    });
  }
  if (cfg.cfgScale > 0 && sampler === "arm") {
    throw new SettingsError("Classifier-free guidance needs a masked-diffusion sampler", {
      ...where("cfgScale"),
      expected: "0 for arm",
      found: String(cfg.cfgScale),
    });
  }
  if (sampler === "arm" && alg === "sample" && cfg.temperature === 0) {
    throw new SettingsError("Sampled ARM decoding needs a temperature", {
      ...where("temperature"),
      expected: '> 0 with alg "sample" (or alg "greedy")',
      found: "0",
    });
  }
  return cfg;
}

function bool(v: unknown, field: string): boolean {
  if (typeof v !== "boolean")
    throw new SettingsError(`Invalid ${field}`, { ...where(field), expected: "true or false", found: JSON.stringify(v) });
  return v;
}

function probesOf(v: unknown): ProbeRequest {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new SettingsError("Invalid probes", {
      ...where("probes"),
      expected: "a ProbeRequest object such as {received: true}",
      found: JSON.stringify(v),
    });
  }
  return v as ProbeRequest;
}
