/**
 * Retrieval-head scores — paper §8 / Fig. 5 (README §4; the paper ships no code), after Wu et al. 2024,
 * "Retrieval Head Mechanistically Explains Long-Context Factuality", adapted to diffusion decoding.
 *
 * Definition: for each generated token w at position p, take the query row that produced it — row
 * `producingRow` of the forward pass at the denoising step where p was unmasked (LLaDA: p; Dream and
 * ARMs: p − 1) — and for every (layer, head) its top-1 key j*; the head makes a copy event when
 * ns ≤ j* < ne (inside the evidence span) and token[j*] = w. A sample's score of a head is
 * (copy events) / (ne − ns); the head's score is the mean over the samples the filter keeps (default:
 * ROUGE-1 recall of the evidence words in the answer > 0.5, as Wu et al.).
 *
 * Details of the adaptation: several tokens may be unmasked in one step, and each is its own event (a
 * head counts at most once per generated token, as in Wu et al. one token per decode step); the evidence
 * span comes from character offsets of the actual prompt (tokens whose offsets overlap it), not from a
 * re-tokenised needle. `rows: "final"` uses rows of the final-sequence pass instead (row p − shift);
 * `rows: "final-unshifted"` is what the paper's Dream extractor did (row p, ignoring the logit shift).
 * Scores are raw by default (`normalize: "max"` divides by the largest, one reading of the paper's figure).
 */
import type { RetrievalSpec } from "./figure-data.js";
import type { Trace } from "../trace/types.js";
import { SettingsError, keyword } from "../util/errors.js";
import { type PassRef, getProbe, partialWarnings, requireSteps, resolveLayers } from "./probes-access.js";
import { type Column, type ColumnTable, longTable, sampleLabel, type RowOf, type Rows } from "./tables.js";

/** A token span [start, end) of the prompt. */
export type TokenSpan = [number, number];

/** Where the evidence is: exact text (first occurrence, optionally inside a region), a region, characters or tokens. */
export type Evidence = { text: string; within?: string } | { region: string } | { chars: [number, number] } | { tokens: TokenSpan };

/**
 * Tokens whose character offsets overlap [a, b) (zero-length offsets never do), among the first `limit` tokens.
 * @param offsets [seq] character span of each token.
 */
export function charsToTokens(offsets: ArrayLike<[number, number]>, chars: [number, number], limit = offsets.length): TokenSpan {
  let lo = -1,
    hi = -1;
  for (let t = 0; t < limit; t++) {
    const [s, e] = offsets[t];
    if (e > s && s < chars[1] && e > chars[0]) {
      if (lo < 0) lo = t;
      hi = t + 1;
    }
  }
  if (lo < 0)
    throw new SettingsError("evidence covers no prompt token", {
      field: "evidence",
      expected: "a character span overlapping prompt tokens",
      found: `[${chars}]`,
    });
  return [lo, hi];
}

/** The one normaliser of the `evidence` option: token span [ns, ne) and the evidence text. */
export function evidenceSpan(trace: Trace, ev: Evidence | undefined): { tokens: TokenSpan; text: string } {
  const P = trace.prompt.promptLength;
  const text = trace.prompt.text;
  const region = (name: string) => {
    const r = trace.prompt.regions.find((x) => x.name === name);
    if (!r)
      throw new SettingsError(`no region named ${JSON.stringify(name)}`, {
        field: "evidence",
        expected: `one of ${trace.prompt.regions.map((x) => JSON.stringify(x.name)).join(", ") || "(none recorded)"}`,
      });
    return r;
  };
  if (ev === undefined) {
    if (trace.prompt.regions.some((r) => r.name === "evidence")) ev = { region: "evidence" };
    else
      throw new SettingsError("retrieval scores need an evidence span", {
        field: "evidence",
        expected: '{ text }, { region }, { chars } or { tokens }, or a prompt region named "evidence"',
      });
  }
  if ("tokens" in ev) {
    const [s, e] = ev.tokens;
    if (!(Number.isInteger(s) && Number.isInteger(e) && 0 <= s && s < e && e <= P))
      throw new SettingsError("bad evidence token span", {
        field: "evidence.tokens",
        expected: `0 ≤ start < end ≤ ${P}`,
        found: `[${ev.tokens}]`,
      });
    const chars: [number, number] = [trace.offsets[s][0], trace.offsets[e - 1][1]];
    return { tokens: [s, e], text: text.slice(chars[0], chars[1]) };
  }
  if ("region" in ev) {
    const r = region(ev.region);
    return { tokens: r.tokens, text: text.slice(r.chars[0], r.chars[1]) };
  }
  let chars: [number, number];
  if ("chars" in ev) chars = ev.chars;
  else {
    const from = ev.within !== undefined ? region(ev.within).chars[0] : 0;
    const at = text.indexOf(ev.text, from);
    if (at < 0 || (ev.within !== undefined && at + ev.text.length > region(ev.within).chars[1])) {
      throw new SettingsError("evidence text not found in the prompt", {
        field: "evidence.text",
        expected: ev.within ? `text inside region ${ev.within}` : "text of the prompt",
        found: JSON.stringify(ev.text.slice(0, 60)),
      });
    }
    chars = [at, at + ev.text.length];
  }
  return { tokens: charsToTokens(trace.offsets, chars, P), text: text.slice(chars[0], chars[1]) };
}

/**
 * Copy events of one generated token: 1 for each head whose top-1 key j* lies in the span and holds the token.
 * @param argmaxKey [head, query] of one layer.  @param ids [key] token ids the pass saw.
 * @returns [head] 0/1.
 */
export function copyHits(
  argmaxKey: ArrayLike<number>,
  numHeads: number,
  numQuery: number,
  row: number,
  token: number,
  ids: ArrayLike<number>,
  span: TokenSpan,
): Uint8Array {
  const hits = new Uint8Array(numHeads);
  for (let h = 0; h < numHeads; h++) {
    const j = argmaxKey[h * numQuery + row];
    if (j >= span[0] && j < span[1] && ids[j] === token) hits[h] = 1;
  }
  return hits;
}

/** SQuAD-style words: lowercase, ASCII punctuation removed, articles dropped, split on whitespace. */
export function words(s: string): string[] {
  const noPunct = s.toLowerCase().replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, "");
  return noPunct
    .replace(/\b(a|an|the)\b/g, " ")
    .split(/\s+/)
    .filter(Boolean);
}

/** ROUGE-1 recall: clipped word overlap / number of reference words. */
export function rouge1Recall(candidate: string, reference: string): number {
  const ref = words(reference);
  if (ref.length === 0) return 0;
  const count = new Map<string, number>();
  for (const w of words(candidate)) count.set(w, (count.get(w) ?? 0) + 1);
  let hit = 0;
  for (const w of ref) {
    const c = count.get(w) ?? 0;
    if (c > 0) {
      hit += 1;
      count.set(w, c - 1);
    }
  }
  return hit / ref.length;
}

export interface RetrievalOptions {
  /** Evidence per trace (one for all, or one per trace). Default: the prompt region named "evidence". */
  evidence?: Evidence | Evidence[];
  /** Which query rows: "unmask-step" (default), "final", or "final-unshifted" (the paper's Dream extractor). */
  rows?: "unmask-step" | "final" | "final-unshifted";
  /** Sample filter: "rouge1" (default; recall of evidence words in the answer > threshold), "contains", "none". */
  filter?: "rouge1" | "contains" | "none";
  threshold?: number;
  normalize?: "none" | "max";
  layers?: number[] | "all";
  models?: string[];
  samples?: string[];
}

export interface RetrievalResult {
  /** One row per (model, layer, head): score (mean over kept samples). */
  scores: Rows<{ model: string; layer: number; head: number; score: number }>;
  /** One row per (model, sample, layer, head): value (that sample's score), kept. */
  table: Rows<{ model: string; sample: string; layer: number; head: number; value: number; kept: boolean }>;
  /** One row per copy event: model, sample, step, position, token, layer, head, key. */
  events: ColumnTable;
  spec: RetrievalSpec;
}

/** A long table of collected columns, the named number columns stored as Int32 and Float64 arrays. */
function typedTable<C extends Record<string, unknown[]>>(
  cols: C,
  ints: (keyof C & string)[],
  floats: (keyof C & string)[],
): Rows<RowOf<C>> {
  const typed: Record<string, Column> = { ...(cols as Record<string, Column>) };
  for (const k of ints) typed[k] = Int32Array.from(cols[k] as number[]);
  for (const k of floats) typed[k] = Float64Array.from(cols[k] as number[]);
  // Number arrays became typed arrays: each row still has the element types of `cols`.
  return longTable(typed) as Rows<RowOf<C>>;
}

/**
 * Retrieval-head scores over traces of one model (or several: grouped by model label).
 * @example
 * const { scores, spec } = retrievalHeads(traces, { evidence: traces.map((t, i) => ({ text: gold[i], within: "gold" })) });
 */
export function retrievalHeads(traces: Trace | Trace[], opts: RetrievalOptions = {}): RetrievalResult {
  const list = Array.isArray(traces) ? traces : [traces];
  const rows = keyword(opts.rows ?? "unmask-step", ["unmask-step", "final", "final-unshifted"] as const, { field: "rows" });
  const filter = keyword(opts.filter ?? "rouge1", ["rouge1", "contains", "none"] as const, { field: "filter" });
  const normalize = keyword(opts.normalize ?? "none", ["none", "max"] as const, { field: "normalize" });
  const threshold = opts.threshold ?? 0.5;
  const per = {
    model: [] as string[],
    sample: [] as string[],
    layer: [] as number[],
    head: [] as number[],
    value: [] as number[],
    kept: [] as boolean[],
  };
  const ev = {
    model: [] as string[],
    sample: [] as string[],
    step: [] as number[],
    position: [] as number[],
    token: [] as number[],
    layer: [] as number[],
    head: [] as number[],
    key: [] as number[],
  };
  const acc = new Map<string, { sum: Float64Array; layers: number[]; H: number; kept: number; total: number }>();
  list.forEach((trace, i) => {
    const model = opts.models?.[i] ?? trace.model.name;
    const sample = sampleLabel(trace.settings, i, opts.samples);
    const evidence = Array.isArray(opts.evidence) ? opts.evidence[i] : opts.evidence;
    const { tokens: span, text } = evidenceSpan(trace, evidence);
    const H = trace.model.numHeads;
    if (rows === "unmask-step")
      requireSteps(trace, model, "argmax_key", 'record the run with a sampler and probes: { argmax: true }, or use rows: "final"');
    const firstPass: PassRef = rows === "unmask-step" ? 0 : "final";
    const layers = resolveLayers(trace, firstPass, "argmax_key", opts.layers, model);
    const sum = new Float64Array(layers.length * H);
    const shift = rows === "final" ? (trace.model.causal ? 1 : trace.model.logitShift) : 0;
    const score = (pass: PassRef, ids: ArrayLike<number>, row: number, token: number, step: number, position: number) => {
      layers.forEach((layer, li) => {
        const t = getProbe(trace, pass, "argmax_key", layer, model);
        const [, Q] = t.dims;
        const r = row - (ids.length - Q); // a pass with fewer query rows holds the last Q rows (ARM with a KV cache)
        if (r < 0 || r >= Q) return;
        const hits = copyHits(t.data, H, Q, r, token, ids, span);
        hits.forEach((hit, h) => {
          if (!hit) return;
          sum[li * H + h] += 1 / (span[1] - span[0]);
          ev.model.push(model);
          ev.sample.push(sample);
          ev.step.push(step);
          ev.position.push(position);
          ev.token.push(token);
          ev.layer.push(layer);
          ev.head.push(h);
          ev.key.push(t.data[h * Q + r]);
        });
      });
    };
    if (rows === "unmask-step") {
      trace.steps.forEach((st, s) => {
        st.transferred.forEach((p, k) => {
          if (p >= trace.prompt.promptLength) score(s, st.canvas, st.producingRow[k], st.tokens[k], st.step, p);
        });
      });
    } else {
      // Final-pass rows need no step records: every generated position, its final token and unmask step.
      const seq = trace.final.sequence;
      for (let p = trace.prompt.promptLength; p < seq.length; p++) score("final", seq, p - shift, seq[p], trace.unmaskedAt[p], p);
    }
    const keep =
      filter === "none" ||
      (filter === "contains"
        ? words(trace.answer).join(" ").includes(words(text).join(" "))
        : rouge1Recall(trace.answer, text) > threshold);
    layers.forEach((layer, li) => {
      for (let h = 0; h < H; h++) {
        per.model.push(model);
        per.sample.push(sample);
        per.layer.push(layer);
        per.head.push(h);
        per.value.push(sum[li * H + h]);
        per.kept.push(keep);
      }
    });
    let a = acc.get(model);
    if (!a) acc.set(model, (a = { sum: new Float64Array(layers.length * H), layers, H, kept: 0, total: 0 }));
    if (a.layers.join() !== layers.join() || a.H !== H)
      throw new SettingsError("traces of one model disagree on layers/heads", {
        field: "layers",
        found: `${model}: [${layers}] vs [${a.layers}]`,
      });
    a.total++;
    if (keep) {
      a.kept++;
      for (let x = 0; x < sum.length; x++) a.sum[x] += sum[x];
    }
  });
  const sc = { model: [] as string[], layer: [] as number[], head: [] as number[], score: [] as number[] };
  const models: RetrievalSpec["models"] = [];
  const kept: RetrievalSpec["kept"] = [];
  const warnings: string[] = partialWarnings(list);
  for (const [model, a] of acc) {
    const mean = a.sum.map((v) => (a.kept ? v / a.kept : NaN));
    const max = mean.reduce((m, v) => Math.max(m, v), 0);
    const out = normalize === "max" && max > 0 ? mean.map((v) => v / max) : mean;
    if (a.kept === 0) warnings.push(`${model}: the ${filter} filter kept no sample; scores are NaN`);
    a.layers.forEach((layer, li) => {
      for (let h = 0; h < a.H; h++) {
        sc.model.push(model);
        sc.layer.push(layer);
        sc.head.push(h);
        sc.score.push(out[li * a.H + h]);
      }
    });
    models.push({
      model,
      layers: [...a.layers],
      scores: { shape: [a.layers.length, a.H], values: Float64Array.from(out) },
      samples: a.kept,
    });
    kept.push({ model, kept: a.kept, total: a.total });
  }
  return {
    scores: typedTable(sc, ["layer", "head"], ["score"]),
    table: typedTable(per, ["layer", "head"], ["value"]),
    events: typedTable(ev, ["step", "position", "token", "layer", "head", "key"], []),
    spec: {
      kind: "retrieval",
      warnings,
      models,
      normalisation: normalize === "max" ? "max-normalised" : "raw",
      kept,
    },
  };
}
