/**
 * Autoregressive decoding for LLaMA/Qwen (docs/samplers.md): the last row's logits give the next
 * token (greedy argmax, or sampled with temperature / top-k / top-p), which is appended. The
 * strategy only appends (`appendsOnly`), so on an engine with a key/value cache (probe-free,
 * no interventions) the loop runs the prompt once and then one single-row forward per token
 * (cached-passes.ts); otherwise, or with `kvCache: false`, the whole prefix is re-run every step. A row stops on one of the model's
 * EOS ids (the EOS token is kept, as upstream's extractor records it).
 *
 * ARM logits are not shifted (logitShift 0): output row i predicts token i + 1, so the token
 * appended at position T was produced by query row T − 1.
 */
import type { ModelSpec } from "../graph/spec.js";
import type { LogitsView } from "./batch.js";
import type { RunConfig } from "./config.js";
import type { RowState, Strategy, Transfer } from "./loop.js";
import { armChoose } from "./sampling.js";

export function armStrategy(cfg: RunConfig, spec: ModelSpec): Strategy {
  const eos = new Set(spec.eosTokenIds);
  const sampling = cfg.alg === "greedy" ? null : { temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK };
  return {
    // greedy: argmax and its softmax probability are the engine's row summary
    summariesSuffice: sampling === null,
    appendsOnly: true,
    rowsNeeded: (_step, row) => [row.canvas.length - 1],
    maxSteps: cfg.genLength,
    initCanvas: (prompt) => Int32Array.from(prompt),
    blockOf: () => 0,
    decide(_step: number, row: RowState, logits: LogitsView): Transfer {
      const last = row.canvas.length - 1;
      const s = sampling === null ? logits.summary?.(last) : undefined;
      const c = s ? { token: s.argmax, confidence: s.maxProb } : armChoose(logits.row(last), sampling, row.rng);
      if (cfg.stopAtEos && eos.has(c.token)) row.done = true;
      return { positions: [last + 1], tokens: [c.token], confidence: [c.confidence], producingRow: [last] };
    },
  };
}
