/**
 * What samplers and prompt builders need from a tokenizer. Lives in the checkpoint layer (the
 * tokenizer is read from checkpoint files) so that `checkpoint/` depends on nothing but `util/`;
 * `runtime/types.ts` re-exports these names.
 */

/** Character span [start, end) in the text a token came from; [0,0] for special tokens added by the template. */
export type CharSpan = [number, number];

export interface Encoding {
  ids: number[];
  tokens: string[];
  offsets: CharSpan[];
  /**
   * The pieces of the text that are not in the vocabulary and became the unknown token, in order
   * (absent or empty when every piece was known). A word-level vocabulary turns any new word into
   * `<unk>`, so a prompt can silently lose its content words: callers warn with these.
   */
  unknown?: string[];
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** What samplers and prompt builders need from a tokenizer. */
export interface TextTokenizer {
  encode(text: string, options?: { addSpecialTokens?: boolean }): Encoding;
  decode(ids: number[], options?: { skipSpecialTokens?: boolean }): string;
  /** Render the checkpoint's own Jinja chat template. */
  applyChatTemplate(messages: ChatMessage[], options?: { addGenerationPrompt?: boolean }): string;
  /** Token string for one id (for labels). */
  idToToken(id: number): string | undefined;
  tokenToId(token: string): number | undefined;
}
