/**
 * Which prompt and sampler settings a model gets by default.
 *
 * Paper models (LLaDA, Dream, Llama, Qwen checkpoints): the paper's prompt of the family and the
 * paper's QA sampler settings (samplers/config.ts defaults, docs/samplers.md: 32 new tokens;
 * LLaDA 32 steps, one block, τ 0, low-confidence; Dream 32 steps, τ 0.2, top-p 0.95, entropy,
 * seeded here; ARMs greedy).
 *
 * Embedded tiny models (`models/tiny-*`): the "tiny-world" prompt and the decoder of the training
 * framework's evaluation (training/evaluate.py), so engine and torch numbers are comparable:
 * ARM greedy, at most 6 new tokens, stop at EOS; LLaDA low-confidence remasking over 4 masks in
 * 4 steps, one block, τ 0; Dream entropy order over 4 masks in 4 steps, τ 0 (deterministic), the
 * transfer count floor(m·(1 − t_{s+1}/t_s)) and the rest at the last step. Answers are cut at the
 * first EOS ("up-to-eos"), as the torch evaluation does.
 *
 * A checkpoint folder may carry its own preset in `floatscope-preset.json` ({promptFormat, sampler,
 * extraction}): the decoder it was trained and evaluated with. The set-up writes one into the merged
 * SmolLM2 adaptations (models/smollm2-135m-*-world/floatscope-preset.json): the tiny-world user text
 * inside the base's chat template, 8 masks in 8 steps for the MDM, greedy up to `<|im_end|>` for the twin.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { DEFAULT_SAMPLER, PAPER_FORMAT_OF_FAMILY, type PaperPromptFormat } from "../families/index.js";
import type { ModelSpec } from "../graph/spec.js";
import type { TextTokenizer } from "../runtime/types.js";
import type { RunConfig } from "../samplers/config.js";
import { CheckpointError, FloatscopeError } from "../util/errors.js";
import { readFileBounded } from "../util/paths.js";

/**
 * The prompt formats qa/prompts.ts builds: the paper's two (per family, src/families/) and the tiny
 * models' training layout. Named here, with the preset that picks one, so opening a model needs no QA code.
 */
export type PromptFormat = PaperPromptFormat | "tiny-world";
export const PROMPT_FORMATS: readonly PromptFormat[] = ["paper-llada", "paper-chat", "tiny-world"];

/**
 * How the scored answer is cut from the response (qa/metrics.ts `extractAnswer`, qa/runner.ts):
 * - "none": the decoded response as is,
 * - "first-line": up to the first newline (after trimming leading whitespace),
 * - "up-to-eos": handled on token ids by the runner (generated ids cut at the first EOS before
 *   decoding); on a string it is the same as "none".
 */
export type AnswerExtraction = "none" | "first-line" | "up-to-eos";
export const ANSWER_EXTRACTIONS: readonly AnswerExtraction[] = ["none", "first-line", "up-to-eos"];

/** A tiny-world tokenizer has the chat role tokens and the prompt words of training/tokenizer.py. */
export function isTinyWorldTokenizer(tokenizer: TextTokenizer): boolean {
  return ["<|user|>", "<|assistant|>", "<|end|>", "Passage", "Question"].every((t) => tokenizer.tokenToId(t) !== undefined);
}

export function defaultPromptFormat(spec: ModelSpec, tokenizer: TextTokenizer): PromptFormat {
  return isTinyWorldTokenizer(tokenizer) ? "tiny-world" : PAPER_FORMAT_OF_FAMILY[spec.family];
}

export interface EvalPreset {
  promptFormat: PromptFormat;
  sampler: Partial<RunConfig>;
  extraction: AnswerExtraction;
}

/** The tiny models' decoder (as training/evaluate.py), by family. */
export function tinyPreset(spec: ModelSpec): EvalPreset {
  const kind = DEFAULT_SAMPLER[spec.family];
  const sampler: Partial<RunConfig> =
    kind === "arm"
      ? { sampler: "arm", alg: "greedy", genLength: 6, stopAtEos: true }
      : kind === "llada"
        ? { sampler: "llada", alg: "low_confidence", genLength: 4, steps: 4, blockLength: 4, temperature: 0 }
        : { sampler: "dream", alg: "entropy", genLength: 4, steps: 4, temperature: 0, topP: null, topK: null, algTemp: 0 };
  return { promptFormat: "tiny-world", sampler, extraction: "up-to-eos" };
}

/** The paper's settings for a family (the whole response is scored, no extraction). */
export function paperPreset(spec: ModelSpec): EvalPreset {
  return { promptFormat: PAPER_FORMAT_OF_FAMILY[spec.family], sampler: { sampler: DEFAULT_SAMPLER[spec.family] }, extraction: "none" };
}

/** The file name of a checkpoint folder's own preset. */
export const PRESET_FILE = "floatscope-preset.json";

/**
 * The preset a checkpoint folder names in `floatscope-preset.json`, or null without one (a GGUF file, or a
 * folder without it). A malformed file is a CheckpointError naming the field.
 */
export function checkpointPreset(checkpointPath: string): EvalPreset | null {
  const file = path.join(checkpointPath, PRESET_FILE);
  if (!fs.existsSync(file) || !fs.statSync(checkpointPath).isDirectory()) return null;
  let v: Partial<EvalPreset>;
  try {
    // Checked before it is opened: a FIFO named floatscope-preset.json would otherwise block every command.
    v = JSON.parse(
      readFileBounded(file, { what: "checkpoint preset", error: CheckpointError, maxBytes: 2 ** 20 }).toString("utf8"),
    ) as Partial<EvalPreset>;
  } catch (e) {
    if (e instanceof FloatscopeError) throw e;
    throw new CheckpointError("The checkpoint's preset is not JSON", {
      file,
      expected: "{promptFormat, sampler, extraction}",
      found: String(e),
    });
  }
  const bad = (field: string, expected: string, found: unknown) =>
    new CheckpointError("Bad checkpoint preset", { file, field, expected, found: JSON.stringify(found) });
  if (!PROMPT_FORMATS.includes(v.promptFormat as PromptFormat)) throw bad("promptFormat", PROMPT_FORMATS.join(", "), v.promptFormat);
  if (!ANSWER_EXTRACTIONS.includes(v.extraction as AnswerExtraction)) throw bad("extraction", ANSWER_EXTRACTIONS.join(", "), v.extraction);
  if (typeof v.sampler !== "object" || v.sampler === null || Array.isArray(v.sampler))
    throw bad("sampler", "an object of sampler settings", v.sampler);
  return { promptFormat: v.promptFormat!, sampler: v.sampler, extraction: v.extraction! };
}

/** The checkpoint's own preset when it names one (`checkpointPath`), else the tiny or the paper preset. */
export function defaultPreset(spec: ModelSpec, tokenizer: TextTokenizer, checkpointPath?: string): EvalPreset {
  const own = checkpointPath === undefined ? null : checkpointPreset(checkpointPath);
  if (own) return own;
  return isTinyWorldTokenizer(tokenizer) ? tinyPreset(spec) : paperPreset(spec);
}
