/**
 * The paper's temporal setting for the figure notebooks' real-base panels: its Fig. 2 decodes about
 * 32 new tokens in 32 steps, one per step, where our 8-slot default leaves anchors little room to move. Each
 * short question is decoded at 32 in 32 under both unmasking orders the paper's models use (LLaDA's low-confidence
 * remasking, Dream's entropy order), and long-answer questions (3–5 facts over 1–3 gold passages) at 64 in 64, so
 * there is more than one fact to fetch. Causal models decode left to right whatever the order, so they are
 * decoded once per token budget and their setting says "greedy".
 */
import * as path from "node:path";
import { paradigmOf } from "../families/index.js";
import { decodeQa, loadQaSet, type DecodedModel, type DecodeQaOptions, type NotebookSettings, type QaContext } from "./notebook.js";

/** The unmasking orders of the paper's two MDM families (notebook 11 uses the same two). */
export const PAPER_ORDERS = {
  "LLaDA low-confidence order": { sampler: "llada", alg: "low_confidence" },
  "Dream entropy order": { sampler: "dream", alg: "entropy" },
} as const;

/** Short answers: the paper's 32 tokens in 32 steps. Long answers: 64 in 64 (their answers run 23–63 tokens). */
export const PAPER_TOKENS = { short: 32, long: 64 } as const;

export interface PaperSettingRun {
  /** What a table or figure title says: tokens, steps, the order (or "greedy"), and the questions. */
  setting: string;
  tokens: number;
  long: boolean;
  run: DecodedModel;
}

export interface PaperSettingOptions {
  probes: DecodeQaOptions["probes"];
  /** The short questions' context (the notebook's own); the long ones always get every gold passage. */
  context: QaContext;
  /** Long-answer questions to decode (default 1: 64 forward passes each on the MDM); 0 skips them. */
  longSamples?: number;
  /** The long-answer file (default: beside the tier's data file, `eval-heldout-long.jsonl.gz`). */
  longFile?: string;
  viewProbes?: DecodeQaOptions["viewProbes"];
}

/**
 * Decode a tier's models at the paper's setting: every short question of `T` (its `samples`) at 32 in 32 under
 * each order of `PAPER_ORDERS`, then `longSamples` long-answer questions at 64 in 64 under the Dream order. One
 * entry per (setting, model), in that order.
 */
export async function decodePaperSettings(T: NotebookSettings, o: PaperSettingOptions): Promise<PaperSettingRun[]> {
  const out: PaperSettingRun[] = [];
  const families = Object.keys(T.names);
  // The paradigm is fixed by the family (llama, qwen2: autoregressive; llada, dream: masked diffusion).
  const arms = families.filter((f) => paradigmOf(f) === "ARM");
  const mdms = families.filter((f) => !arms.includes(f));
  const short = await loadQaSet(T, { distractors: typeof o.context === "object" ? o.context.distractors : 0 });
  const base = { probes: o.probes, context: o.context, viewProbes: o.viewProbes ?? ("none" as const) };
  const n = short.records.length;
  const add = (decoded: Record<string, DecodedModel>, tokens: number, long: boolean, setting: (run: DecodedModel) => string) => {
    for (const run of Object.values(decoded)) out.push({ setting: setting(run), tokens, long, run });
  };
  for (const [label, order] of Object.entries(PAPER_ORDERS)) {
    const decoded = await decodeQa(T, short, { ...base, tokens: PAPER_TOKENS.short, order, families: mdms });
    add(
      decoded,
      PAPER_TOKENS.short,
      false,
      () => `${PAPER_TOKENS.short} tokens in ${PAPER_TOKENS.short} steps, ${label}, ${n} question(s)`,
    );
  }
  if (arms.length > 0) {
    const decoded = await decodeQa(T, short, { ...base, tokens: PAPER_TOKENS.short, families: arms });
    add(decoded, PAPER_TOKENS.short, false, () => `up to ${PAPER_TOKENS.short} tokens, greedy (causal), ${n} question(s)`);
  }
  const longN = o.longSamples ?? 1;
  if (longN > 0) {
    const file = o.longFile ?? path.join(path.dirname(T.data), "eval-heldout-long.jsonl.gz");
    const long = await loadQaSet(T, { file, limit: longN });
    const m = long.records.length;
    const decoded = await decodeQa(T, long, {
      ...base,
      context: "all-golds",
      tokens: PAPER_TOKENS.long,
      order: PAPER_ORDERS["Dream entropy order"],
    });
    add(decoded, PAPER_TOKENS.long, true, (run) =>
      run.causal
        ? `long answers, up to ${PAPER_TOKENS.long} tokens, greedy (causal), ${m} question(s)`
        : `long answers, ${PAPER_TOKENS.long} tokens in ${PAPER_TOKENS.long} steps, Dream entropy order, ${m} question(s)`,
    );
  }
  return out;
}
