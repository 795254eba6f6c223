/**
 * The grid measures of the two remaining attention claims (measures.ts lists every measure; this module holds
 * what these two record per question and how they pool):
 *
 * - `qk` (claim `angle-vs-norm`; src/analysis/qk-decomposition.ts, as notebook 03): on the final pass, at
 *   notebook 03's three layers (`qkLayers`: the paper's layers 1, 11 and 28 of LLaDA's 32, scaled to the
 *   model's depth), with notebook 03's options (score-mean over heads, post-RoPE, scaled, the last 128
 *   positions), the anchors' score advantage and its exact split into the angle term and the norm term, and
 *   how much larger cos θ and ‖q‖‖k‖ are at the anchor columns than elsewhere. Per question the claim reads
 *   the angle share: Σ angle terms / Σ advantages over the three layers, in percent (notebook 03's `share`).
 * - `retrieval` (claim `retrieval-heads-deep`; src/analysis/retrieval-heads.ts, as notebook 04): with notebook
 *   04's options (query rows of the unmasking step, the ROUGE-1 filter, raw scores) and its evidence (the first
 *   gold answer found in the gold passage, else the whole gold passage), per layer the question's retrieval
 *   score averaged over the heads, whether the filter keeps the question, and its copy events. Per question the
 *   claim reads the mean score of the deep half of the layers minus that of the shallow half (notebook 04's
 *   `gap`: a mean over (layer, head) cells, which with every layer's heads is the mean of the layers' head
 *   means); a model none of whose questions the filter keeps is scored on all of them, as notebook 04 does.
 *   A prompt without a gold passage (closed-book) records no retrieval measure.
 *
 * Numbers are rounded to 1e-6 as measures.ts does: their last bits depend on the batch a question ran in.
 */
import { qkDecomposition } from "../analysis/qk-decomposition.js";
import { retrievalHeads, type Evidence } from "../analysis/retrieval-heads.js";
import type { Trace } from "../trace/types.js";
import { GridError } from "../util/errors.js";
import type { ProbeRequest } from "../util/probes.js";

/** Notebook 03's layers, as fractions of the depth: the paper's layers 1, 11 and 28 of LLaDA-8B's 32. */
export const QK_LAYER_FRACTIONS = [1 / 31, 11 / 31, 28 / 31] as const;
/** Notebook 03's token window: the last 128 positions (question and answer) of longer sequences. */
export const QK_WINDOW = 128;

/** The layers the qk measure decomposes in a model of `numLayers` layers (distinct, in order, never layer 0). */
export function qkLayers(numLayers: number): number[] {
  return [...new Set(QK_LAYER_FRACTIONS.map((f) => Math.min(numLayers - 1, Math.max(1, Math.round(f * (numLayers - 1))))))];
}

/** The probes of the two measures, for a model of `numLayers` layers. */
export function qkProbes(numLayers: number): ProbeRequest {
  return { received: true, qk: { layers: qkLayers(numLayers) } };
}
export const RETRIEVAL_PROBES: ProbeRequest = { received: true, argmax: true };

/** Notebook 04's scoring options. */
export const RETRIEVAL_OPTIONS = { rows: "unmask-step", filter: "rouge1", normalize: "none" } as const;

/** One question's QK decomposition at the layers `layers` (one entry per layer in each other array). */
export interface QkMeasure {
  layers: number[];
  /** The anchors' mean score minus the other keys' (per head, mean over heads). */
  advantage: number[];
  /** The part of `advantage` carried by cos θ, and the part carried by ‖q‖‖k‖ (they sum to it). */
  angleTerm: number[];
  normTerm: number[];
  /** cos θ at the anchor columns minus elsewhere; ‖q‖‖k‖ likewise. */
  cos: number[];
  norm: number[];
}

/** One question's retrieval scores: per layer (index = layer) the mean over heads. */
export interface RetrievalMeasure {
  /** Whether notebook 04's ROUGE-1 filter keeps the question (the answer recalls over half the evidence's words). */
  kept: boolean;
  score: number[];
  /** Copy events (generated tokens copied by a head's top-1 key from the evidence), over layers and heads. */
  events: number;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** The QK decomposition of one decode's final pass (its trace needs `received` and q/k at `qkLayers`). */
export function qkMeasure(trace: Trace): QkMeasure {
  const T = trace.final.sequence.length;
  const rows = qkDecomposition(trace, {
    layers: qkLayers(trace.model.numLayers),
    heads: "score-mean",
    upstream: false,
    window: [Math.max(0, T - QK_WINDOW), T],
  }).summary.objects();
  return {
    layers: rows.map((r) => r.layer),
    advantage: rows.map((r) => round6(r.advantage)),
    angleTerm: rows.map((r) => round6(r.angleTerm)),
    normTerm: rows.map((r) => round6(r.normTerm)),
    cos: rows.map((r) => round6(r.cosFloating - r.cosOther)),
    norm: rows.map((r) => round6(r.normFloating - r.normOther)),
  };
}

/**
 * The evidence notebook 04 scores a question against (decodeQa's choice): the first of its answers that the
 * gold passage contains, inside that passage; else the whole gold passage. Undefined without a gold passage.
 */
export function goldEvidence(trace: Trace, answers: readonly string[]): Evidence | undefined {
  const gold = trace.prompt.regions.find((r) => r.name === "gold");
  if (!gold) return undefined;
  const text = trace.prompt.text.slice(gold.chars[0], gold.chars[1]);
  const answer = answers.find((a) => a !== "" && text.includes(a));
  return answer ? { text: answer, within: "gold" } : { region: "gold" };
}

/** The retrieval scores of one decode (its trace needs `argmax` at every step); undefined without a gold passage. */
export function retrievalMeasure(trace: Trace, answers: readonly string[]): RetrievalMeasure | undefined {
  const evidence = goldEvidence(trace, answers);
  if (!evidence) return undefined;
  const r = retrievalHeads(trace, { evidence, ...RETRIEVAL_OPTIONS });
  const L = trace.model.numLayers;
  const sum = new Array<number>(L).fill(0);
  const heads = new Array<number>(L).fill(0);
  let kept = false;
  for (const c of r.table.objects()) {
    sum[c.layer] += c.value;
    heads[c.layer]++;
    kept = c.kept;
  }
  heads.forEach((h, layer) => {
    if (h === 0)
      throw new GridError("Retrieval measure needs every layer's argmax probe", {
        field: `layer ${layer}`,
        expected: "argmax_key at every layer and step",
        found: "none",
      });
  });
  return { kept, score: sum.map((s, l) => round6(s / heads[l])), events: r.events.numRows() };
}

/** The mean retrieval score of the deep half of the layers (l ≥ L/2) minus that of the shallow half (notebook 04). */
export function deepMinusShallow(score: readonly number[]): number {
  const L = score.length;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return mean(score.filter((_, l) => l >= L / 2)) - mean(score.filter((_, l) => l < L / 2));
}

/** The angle share of one question's advantage over its layers, in percent (notebook 03): 100 · Σ angle / Σ advantage. */
export function angleShare(m: Pick<QkMeasure, "angleTerm" | "advantage">): number {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return (100 * sum(m.angleTerm)) / sum(m.advantage);
}

/** Pooled qk numbers: per (model, layer) the means over questions; per (model, sample) the angle share. */
export interface QkAggregate {
  layers: { model: string; layer: number; advantage: number; angleTerm: number; normTerm: number; cos: number; norm: number; n: number }[];
  /** Per (model, sample): the angle share (%), and per layer of `layers` cos θ and ‖q‖‖k‖ at the anchors minus elsewhere. */
  samples: { model: string; sample: string; angleShare: number; layers: number[]; cos: number[]; norm: number[] }[];
}

/** Pooled retrieval numbers: per (model, layer) the mean score over the questions read; per sample the deep-minus-shallow gap. */
export interface RetrievalAggregate {
  layers: { model: string; layer: number; score: number; n: number }[];
  samples: { model: string; sample: string; kept: boolean; gap: number; events: number }[];
  /** Per model: questions the filter kept, of how many; `read` says which the model's numbers read ("kept", or "all" when none was kept). */
  models: { model: string; kept: number; total: number; read: "kept" | "all" }[];
}

type Row<M> = { model: string; sample: string; m: M };
const meanOf = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Pool qk rows per model (rows already in the aggregate's fixed order). */
export function poolQk(rows: readonly Row<QkMeasure>[], models: readonly string[]): QkAggregate {
  const out: QkAggregate = { layers: [], samples: [] };
  for (const model of models) {
    const mine = rows.filter((r) => r.model === model);
    if (mine.length === 0) continue;
    const layers = [...new Set(mine.flatMap((r) => r.m.layers))].sort((a, b) => a - b);
    for (const layer of layers) {
      const at = mine
        .map((r) => r.m.layers.indexOf(layer))
        .map((i, j) => ({ i, m: mine[j].m }))
        .filter((x) => x.i >= 0);
      const avg = (k: "advantage" | "angleTerm" | "normTerm" | "cos" | "norm") => meanOf(at.map((x) => x.m[k][x.i]));
      out.layers.push({
        model,
        layer,
        advantage: avg("advantage"),
        angleTerm: avg("angleTerm"),
        normTerm: avg("normTerm"),
        cos: avg("cos"),
        norm: avg("norm"),
        n: at.length,
      });
    }
    for (const r of mine)
      out.samples.push({ model, sample: r.sample, angleShare: angleShare(r.m), layers: r.m.layers, cos: r.m.cos, norm: r.m.norm });
  }
  return out;
}

/** Pool retrieval rows per model: the kept questions (all of them when none was kept, as notebook 04 falls back). */
export function poolRetrieval(rows: readonly Row<RetrievalMeasure>[], models: readonly string[]): RetrievalAggregate {
  const out: RetrievalAggregate = { layers: [], samples: [], models: [] };
  for (const model of models) {
    const mine = rows.filter((r) => r.model === model);
    if (mine.length === 0) continue;
    const kept = mine.filter((r) => r.m.kept);
    const read = kept.length > 0 ? kept : mine;
    out.models.push({ model, kept: kept.length, total: mine.length, read: kept.length > 0 ? "kept" : "all" });
    const L = Math.max(...read.map((r) => r.m.score.length));
    for (let layer = 0; layer < L; layer++) {
      const xs = read.filter((r) => layer < r.m.score.length).map((r) => r.m.score[layer]);
      out.layers.push({ model, layer, score: meanOf(xs), n: xs.length });
    }
    for (const r of mine)
      out.samples.push({ model, sample: r.sample, kept: r.m.kept, gap: deepMinusShallow(r.m.score), events: r.m.events });
  }
  return out;
}
