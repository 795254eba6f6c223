/**
 * The prompt registry: one builder per prompt format, with the exact strings, returning the text AND
 * the character spans of its regions, so analyses map regions to tokens through the tokenizer's
 * offsets (checkpoint/spans.ts) instead of re-tokenising pieces.
 *
 * Formats
 *   "paper-llada"  the LLaDA evaluation prompt of the paper (evaluate_llada.py), docs/qa-harness.md;
 *   "paper-chat"   the Dream / Llama / Qwen prompt (one shared builder upstream, with three few-shot
 *                  examples). Upstream's README calls it a "unified template"; the code differs;
 *   "tiny-world"   the layout the embedded tiny models are trained on (training/tokenizer.py
 *                  `user_content` + `Tokenizer.chat`): "Passage 1 : <p1>\n…\nQuestion : <q>".
 * Every format is wrapped as one user turn of the checkpoint's OWN chat template
 * (`TextTokenizer.applyChatTemplate`, generation prompt on), as upstream does for all four models.
 *
 * Closed-book: the paper formats keep their template with the single dummy passage
 * "No relevant context available." (upstream's `max_passages = 0` path; that this produced the
 * "w/o RAG" rows is our inference from the code). "tiny-world" drops the passages ("Question : <q>"), as training does.
 *
 * Regions (character spans [start, end) in the final text):
 *   "instruction"  the instruction text before the first passage (paper formats),
 *   "doc i"        passage i (1-based) including its "Passage i:" label,
 *   "gold"         the same span as the gold passage's "doc i" (absent without a gold passage),
 *   "examples"     the few-shot block ("paper-chat"),
 *   "question"     the question line including its "Question:" label,
 *   "answer"       the empty span at the end of the text: the generated tokens go there.
 * Template tokens (BOS, role headers) belong to no region.
 *
 * Double BOS: Llama-3's template starts with `<|begin_of_text|>` and its tokenizer adds another
 * (an upstream bug). `addSpecialTokens` in the result says how to encode the text so that exactly
 * the template's special tokens are present; `reproduceDoubleBos` restores the upstream behaviour.
 */
import { PROMPT_FORMATS, type PromptFormat } from "../model/presets.js";
import type { CharSpan, TextTokenizer } from "../runtime/types.js";
import type { Region } from "../trace/types.js";
import { charSpanToTokenSpan } from "../checkpoint/spans.js";
import { SettingsError, keyword } from "../util/errors.js";
import type { QaPassage } from "./datasets.js";

export const NO_CONTEXT_PASSAGE = "No relevant context available.";

/** evaluate_llada.py. Note the trailing space after "helpful,". */
export const LLADA_HEADER =
  "Use the following passages as context if they are helpful, \n" +
  "but provide a SHORT and DIRECT answer.\n\n" +
  "RULES:\n" +
  "- First, check the context passages for the answer\n" +
  "- If the context contains the answer, use it\n" +
  "- If not, use your general knowledge\n" +
  "- Answer must be 1-10 words maximum\n" +
  "- Do NOT include any explanations or extra text\n" +
  "- Do NOT repeat or summarize the passages\n\n" +
  "Context:\n";

/** evaluate_{dream,llama,qwen}.py. Note the trailing space after "questions.". */
export const CHAT_HEADER =
  "You are a helpful assistant that answers questions. \n\n" +
  "INSTRUCTIONS:\n" +
  "1. First, check if the answer is in the provided context passages\n" +
  "2. If the answer is in the context, use it\n" +
  "3. If the context doesn't contain the answer, use your general knowledge\n" +
  "4. Always provide a direct, concise answer (typically 1-10 words)\n" +
  '5. Do NOT include explanations, reasoning, or phrases like "based on" or "according to"\n' +
  '6. Never say "no answer found" - always attempt to answer using available information\n\n' +
  "Context:\n";

/** The few-shot block: starts with "\n", ends with "format:\n". Its passages are on one line ("Passage 1: text"), unlike the real context. */
export const CHAT_EXAMPLES =
  "\nHere are examples showing the expected answer format:\n\n" +
  "Example 1:\nContext:\nPassage 1: The Eiffel Tower is located in Paris, France. It was completed in 1889.\n\n" +
  "Question: Where is the Eiffel Tower located?\nAnswer: Paris, France\n\n" +
  "Example 2:\nContext:\nPassage 1: Albert Einstein was born on March 14, 1879 in Ulm, Germany.\n\n" +
  "Question: When was Albert Einstein born?\nAnswer: March 14, 1879\n\n" +
  "Example 3:\nContext:\nPassage 1: The Great Wall of China stretches over 13,000 miles.\n\n" +
  "Question: What is the capital of Japan?\nAnswer: Tokyo\n" +
  "(Note: This answer uses general knowledge since the context doesn't contain it)\n\n" +
  "---\n\n" +
  "Now answer the following question in the same concise format:\n";

export interface PromptRegion {
  name: string;
  chars: CharSpan;
}

export interface QaPromptInput {
  question: string;
  passages: readonly QaPassage[];
  /** Index of the gold passage in `passages`, or null. */
  goldIndex: number | null;
}

export interface QaPrompt {
  format: PromptFormat;
  /** The exact text to tokenize (after the chat template). */
  text: string;
  /** The user message before templating. */
  user: string;
  regions: PromptRegion[];
  /** Pass to `encode` (and to the sampler's `addSpecialTokens`): false when the template already has the tokenizer's BOS. */
  addSpecialTokens: boolean;
}

export interface BuildPromptOptions {
  /** Apply the checkpoint's chat template (default true; false gives the bare user text, encoded with the tokenizer's own special tokens). */
  chatTemplate?: boolean;
  /** Encode as upstream did even when that doubles the BOS (default false). */
  reproduceDoubleBos?: boolean;
}

/** Builds user text piece by piece, remembering where each named piece landed. */
class SpanText {
  text = "";
  readonly regions: PromptRegion[] = [];
  add(s: string, name?: string): CharSpan {
    const span: CharSpan = [this.text.length, this.text.length + s.length];
    this.text += s;
    if (name) this.regions.push({ name, chars: span });
    return span;
  }
}

function userContent(format: PromptFormat, input: QaPromptInput): SpanText {
  const b = new SpanText();
  const passages = input.passages.map((p) => p.text);
  const gold = input.goldIndex;
  const doc = (i: number, s: string) => {
    const span = b.add(s, `doc ${i + 1}`);
    if (gold === i) b.regions.push({ name: "gold", chars: span });
  };
  if (format === "tiny-world") {
    passages.forEach((p, i) => {
      doc(i, `Passage ${i + 1} : ${p}`);
      b.add("\n");
    });
    b.add(`Question : ${input.question}`, "question");
    return b;
  }
  b.add(format === "paper-llada" ? LLADA_HEADER : CHAT_HEADER, "instruction");
  if (passages.length === 0) {
    b.add(`Passage 1:\n${NO_CONTEXT_PASSAGE}`, "dummy passage");
  } else {
    passages.forEach((p, i) => {
      if (i > 0) b.add("\n\n");
      doc(i, `Passage ${i + 1}:\n${p}`);
    });
  }
  if (format === "paper-llada") {
    b.add("\n\n");
    b.add(`Question: ${input.question}`, "question");
    b.add("\n\nShort Answer:");
  } else {
    b.add("\n");
    b.add(CHAT_EXAMPLES, "examples");
    b.add("\n");
    b.add(`Question: ${input.question}`, "question");
    b.add("\nAnswer:");
  }
  return b;
}

/**
 * Build one QA prompt.
 * @example
 *   const p = buildQaPrompt("paper-llada", { question, passages, goldIndex: 0 }, tokenizer);
 *   const enc = tokenizer.encode(p.text, { addSpecialTokens: p.addSpecialTokens });
 *   const regions = promptRegionsToTokens(p, enc.offsets, genLength);
 */
export function buildQaPrompt(
  format: PromptFormat,
  input: QaPromptInput,
  tokenizer: TextTokenizer,
  options: BuildPromptOptions = {},
): QaPrompt {
  keyword(format, PROMPT_FORMATS, { file: "settings", field: "promptFormat" });
  if (input.goldIndex !== null && !(Number.isInteger(input.goldIndex) && input.goldIndex >= 0 && input.goldIndex < input.passages.length)) {
    throw new SettingsError("Gold index out of range", {
      file: "settings",
      field: "goldIndex",
      expected: `null or 0..${input.passages.length - 1}`,
      found: String(input.goldIndex),
    });
  }
  const u = userContent(format, input);
  let text = u.text;
  let shift = 0;
  if (options.chatTemplate ?? true) {
    text = tokenizer.applyChatTemplate([{ role: "user", content: u.text }], { addGenerationPrompt: true });
    shift = locate(text, u.text);
  }
  const regions = u.regions.map((r) => ({ name: r.name, chars: clip([r.chars[0] + shift, r.chars[1] + shift], shift, u.text, text) }));
  regions.push({ name: "answer", chars: [text.length, text.length] });
  return {
    format,
    text,
    user: u.text,
    regions,
    addSpecialTokens: decideSpecialTokens(text, tokenizer, options.reproduceDoubleBos ?? false),
  };
}

/** Where the user text sits in the templated text. Templates may `trim` the content (Llama-3). */
function locate(text: string, user: string): number {
  const i = text.indexOf(user);
  if (i >= 0) return i;
  const trimmed = user.trim();
  const j = trimmed ? text.indexOf(trimmed) : -1;
  if (j < 0) {
    throw new SettingsError("The chat template changed the prompt text beyond trimming", {
      file: "tokenizer_config.json",
      field: "chat_template",
      expected: "the user message to appear verbatim (or trimmed) in the rendered text",
      hint: "build the prompt with { chatTemplate: false }",
    });
  }
  return j - (user.length - user.trimStart().length);
}

function clip(span: CharSpan, shift: number, user: string, text: string): CharSpan {
  // With a trimming template the first/last characters of `user` may be missing from `text`.
  const lo = shift + (user.length - user.trimStart().length);
  const hi = Math.min(text.length, shift + user.trimEnd().length);
  const s = Math.min(Math.max(span[0], lo), hi);
  return [s, Math.max(s, Math.min(span[1], hi))];
}

function decideSpecialTokens(text: string, tokenizer: TextTokenizer, reproduce: boolean): boolean {
  if (reproduce) return true;
  const withSpecials = tokenizer.encode(text, { addSpecialTokens: true }).ids;
  const without = tokenizer.encode(text, { addSpecialTokens: false }).ids;
  // The tokenizer would prepend a token the text already starts with (a second BOS): skip its specials.
  if (withSpecials.length > without.length && without.length > 0 && withSpecials[0] === without[0] && withSpecials[1] === without[0])
    return false;
  return true;
}

/**
 * Token spans of the prompt regions (for `generate`'s `regions`, region_sum probes, rollout).
 * "answer" becomes [promptLength, promptLength + genLength). Regions that no token overlaps are dropped.
 */
export function promptRegionsToTokens(prompt: QaPrompt, offsets: readonly CharSpan[], genLength = 0): Region[] {
  const out: Region[] = [];
  for (const r of prompt.regions) {
    if (r.name === "answer") {
      out.push({ name: "answer", tokens: [offsets.length, offsets.length + genLength], chars: r.chars });
      continue;
    }
    const t = charSpanToTokenSpan(offsets, r.chars);
    if (t) out.push({ name: r.name, tokens: t, chars: r.chars });
  }
  return out;
}
