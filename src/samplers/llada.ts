/**
 * LLaDA's sampler (docs/samplers.md): block-wise semi-autoregressive denoising with
 * low-confidence (or random) remasking. The canvas is prompt + G masks; G splits into blocks of
 * B; each block gets S / (G/B) steps and unmasks its masks on the floor-plus-remainder schedule.
 * At each step only masked positions before the end of the current block compete (later blocks
 * get −inf confidence), and the k most confident are written.
 */
import type { ModelSpec } from "../graph/spec.js";
import type { RunConfig } from "./config.js";
import type { LogitsView } from "./batch.js";
import type { RowState, Strategy, Transfer } from "./loop.js";
import { lladaChoose } from "./sampling.js";
import { lladaTransferCounts } from "./schedule.js";

/** Indices of the k largest confidences; ties go to the earlier position. */
export function topPositions(conf: number[], k: number): number[] {
  const order = conf.map((_, i) => i).sort((a, b) => conf[b] - conf[a] || a - b);
  return order.slice(0, Math.min(k, order.length));
}

/** Positions in [0, end) that still hold the mask token, ascending. */
export function maskedPositions(canvas: Int32Array, mask: number, end = canvas.length): number[] {
  const out: number[] = [];
  for (let p = 0; p < end; p++) if (canvas[p] === mask) out.push(p);
  return out;
}

/** The MDM starting canvas: the prompt, then `genLength` mask tokens. */
export function maskedCanvas(prompt: Int32Array, genLength: number, mask: number): Int32Array {
  const c = new Int32Array(prompt.length + genLength).fill(mask);
  c.set(prompt);
  return c;
}

export function lladaStrategy(cfg: RunConfig, spec: ModelSpec): Strategy {
  const mask = spec.maskTokenId!;
  const blocks = cfg.genLength / cfg.blockLength;
  const stepsPerBlock = cfg.steps / blocks;
  const remasking = cfg.alg as "low_confidence" | "random";
  /** Per row: the current block's transfer counts. */
  const counts = new Map<number, Int32Array>();
  const blockEndOf = (step: number, row: RowState) => row.promptLength + (Math.floor(step / stepsPerBlock) + 1) * cfg.blockLength;
  // τ 0: token = argmax and confidence = its softmax probability (or a fresh uniform), both of
  // which the engine's row summary holds exactly (float64, first maximum).
  const summariesSuffice = cfg.temperature === 0;
  return {
    summariesSuffice,
    rowsNeeded: (step, row) => maskedPositions(row.canvas, mask, blockEndOf(step, row)),
    maxSteps: cfg.steps,
    initCanvas: (prompt) => maskedCanvas(prompt, cfg.genLength, mask),
    blockOf: (step) => Math.floor(step / stepsPerBlock),
    decide(step: number, row: RowState, logits: LogitsView): Transfer {
      const block = Math.floor(step / stepsPerBlock);
      const i = step % stepsPerBlock;
      const blockStart = row.promptLength + block * cfg.blockLength;
      const blockEnd = blockStart + cfg.blockLength;
      if (i === 0) {
        let m = 0;
        for (let p = blockStart; p < blockEnd; p++) if (row.canvas[p] === mask) m++;
        counts.set(row.index, lladaTransferCounts(m, stepsPerBlock));
      }
      const k = counts.get(row.index)![i];
      // Candidates: every masked position before the block's end (upstream sets −inf only beyond it).
      const cand: number[] = [];
      const tok: number[] = [];
      const conf: number[] = [];
      for (let p = 0; p < blockEnd; p++) {
        if (row.canvas[p] !== mask) continue;
        const s = summariesSuffice ? logits.summary?.(p) : undefined;
        const c = s
          ? { token: s.argmax, confidence: remasking === "low_confidence" ? s.maxProb : row.rng.uniform() }
          : lladaChoose(logits.row(p), cfg.temperature, remasking, row.rng);
        cand.push(p);
        tok.push(c.token);
        conf.push(c.confidence);
      }
      const chosen = topPositions(conf, k).sort((a, b) => cand[a] - cand[b]);
      return {
        positions: chosen.map((j) => cand[j]),
        tokens: chosen.map((j) => tok[j]),
        confidence: chosen.map((j) => conf[j]),
        producingRow: chosen.map((j) => cand[j] - spec.logitShift),
      };
    },
  };
}
