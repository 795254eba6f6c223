/**
 * Dream's `diffusion_generate` (docs/samplers.md): the canvas is prompt + G masks; at step i
 * with t = t_i, s = t_{i+1} from linspace(1, eps, steps+1), every masked position gets a token
 * and a confidence from `sample_tokens`, and floor(m·(1 − s/t)) of them are written (all at the
 * last step), chosen by top-n confidence or, with alg_temp > 0, sampled from softmax(conf/alg_temp).
 * `origin` instead unmasks each masked position independently with probability 1 − s/t.
 *
 * The engine has already shifted Dream's logits (row i comes from hidden state i−1); the query
 * row recorded as producing position i is i − logitShift.
 * m is counted per row; upstream divides the batch's mask count by the batch size, which is the
 * same number because every row transfers the same count each step.
 */
import type { ModelSpec } from "../graph/spec.js";
import type { LogitsView } from "./batch.js";
import type { RunConfig } from "./config.js";
import { maskedCanvas, maskedPositions, topPositions } from "./llada.js";
import type { RowState, Strategy, Transfer } from "./loop.js";
import { dreamSampleToken, type DreamConfidence } from "./sampling.js";
import { dreamOriginProbability, dreamTimesteps, dreamTransferCount } from "./schedule.js";

export function dreamStrategy(cfg: RunConfig, spec: ModelSpec): Strategy {
  const mask = spec.maskTokenId!;
  const timesteps = dreamTimesteps(cfg.steps, cfg.eps);
  const sampling = { temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK };
  // τ 0 without top-p/top-k: probs = softmax(logits), token = argmax, and each confidence variant
  // is one of the engine's row summaries (float64).
  const summariesSuffice =
    cfg.temperature === 0 &&
    (cfg.topP === null || cfg.topP === undefined || cfg.topP >= 1) &&
    (cfg.topK === null || cfg.topK === undefined);
  const choose = (logits: LogitsView, p: number, variant: DreamConfidence, rng: RowState["rng"]) => {
    const s = summariesSuffice ? logits.summary?.(p) : undefined;
    if (!s) return dreamSampleToken(logits.row(p), sampling, variant, rng);
    const confidence = variant === "maskgit_plus" ? s.maxProb : variant === "topk_margin" ? s.margin : s.negEntropy;
    return { token: s.argmax, confidence };
  };
  return {
    summariesSuffice,
    rowsNeeded: (_step, row) => maskedPositions(row.canvas, mask),
    maxSteps: cfg.steps,
    initCanvas: (prompt) => maskedCanvas(prompt, cfg.genLength, mask),
    blockOf: () => 0,
    decide(step: number, row: RowState, logits: LogitsView): Transfer {
      const masked = maskedPositions(row.canvas, mask);
      const out: Transfer = { positions: [], tokens: [], confidence: [], producingRow: [] };
      const push = (p: number, token: number, confidence: number) => {
        out.positions.push(p);
        out.tokens.push(token);
        out.confidence.push(confidence);
        out.producingRow.push(p - spec.logitShift);
      };
      if (cfg.alg === "origin") {
        const prob = dreamOriginProbability(step, timesteps);
        // As upstream: one uniform per masked position first, then tokens for the chosen ones.
        const chosen = masked.filter(() => row.rng.uniform() < prob);
        for (const p of chosen) {
          const c = choose(logits, p, "maskgit_plus", row.rng);
          push(p, c.token, c.confidence);
        }
        return out;
      }
      const tok: number[] = [];
      const conf: number[] = [];
      for (const p of masked) {
        const c = choose(logits, p, cfg.alg as DreamConfidence, row.rng);
        tok.push(c.token);
        conf.push(c.confidence);
      }
      const n = dreamTransferCount(masked.length, step, timesteps);
      if (n <= 0) return out;
      let chosen: number[];
      if (cfg.algTemp === 0) {
        chosen = topPositions(conf, n);
      } else {
        let max = -Infinity;
        for (const c of conf) max = Math.max(max, c / cfg.algTemp);
        const w = conf.map((c) => Math.exp(c / cfg.algTemp - max));
        chosen = row.rng.multinomialWithoutReplacement(w, n);
      }
      chosen.sort((a, b) => masked[a] - masked[b]);
      for (const j of chosen) push(masked[j], tok[j], conf[j]);
      return out;
    },
  };
}
