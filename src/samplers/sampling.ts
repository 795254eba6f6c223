/**
 * Token choice for one canvas position from one row of logits: LLaDA's Gumbel-max with
 * temperature, Dream's `sample_tokens` with top-p / top-k and its three
 * confidence variants (§3.2), ARM greedy or sampled decoding (§3.3).
 *
 * Everything is computed in float64 from float32 logits. Random draws happen in a fixed order
 * (vocabulary ascending) so a seed reproduces a run exactly.
 */
import type { Rng } from "../util/rng.js";

export interface Choice {
  token: number;
  /** The sampler's confidence for this position (meaning depends on the algorithm). */
  confidence: number;
}

/** Index of the first maximum (torch.argmax's tie rule). */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  let bestV = -Infinity;
  for (let i = 0; i < values.length; i++) {
    if (values[i] > bestV) {
      bestV = values[i];
      best = i;
    }
  }
  return best;
}

/** Row softmax in float64. −Infinity entries get probability 0. @param logits [vocab] */
export function softmax(logits: ArrayLike<number>): Float64Array {
  const n = logits.length;
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (logits[i] > max) max = logits[i];
  const out = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    // Filtered (−Infinity) entries are exactly 0: skip the exp.
    const e = logits[i] === -Infinity ? 0 : Math.exp(logits[i] - max);
    out[i] = e;
    sum += e;
  }
  for (let i = 0; i < n; i++) out[i] /= sum;
  return out;
}

/** softmax(logits)[index] without materialising the whole distribution. */
export function softmaxAt(logits: ArrayLike<number>, index: number): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  return Math.exp(logits[index] - max) / sum;
}

/**
 * LLaDA's token choice at one position. τ = 0: argmax of the logits. τ > 0: Gumbel-max in
 * float64, `argmax exp(l)/(−log U)^τ`, evaluated in log space as `argmax l − τ·log(−log U)` (the
 * same ordering without exp overflow); one uniform per vocabulary entry. That is an exact sample
 * from softmax(l/τ).
 * Confidence: `low_confidence` → the un-noised softmax probability of the chosen token;
 * `random` → a fresh U(0,1) drawn after the token.
 * @param logits [vocab]
 */
export function lladaChoose(logits: ArrayLike<number>, temperature: number, remasking: "low_confidence" | "random", rng: Rng): Choice {
  let token: number;
  if (temperature === 0) {
    token = argmax(logits);
    if (remasking === "low_confidence") {
      // The argmax is the max: one exp pass gives its softmax probability.
      const max = logits[token];
      let sum = 0;
      for (let v = 0; v < logits.length; v++) sum += Math.exp(logits[v] - max);
      return { token, confidence: 1 / sum };
    }
  } else {
    let best = 0;
    let bestV = -Infinity;
    for (let v = 0; v < logits.length; v++) {
      const score = logits[v] - temperature * Math.log(-Math.log(rng.uniform()));
      if (score > bestV) {
        bestV = score;
        best = v;
      }
    }
    token = best;
  }
  const confidence = remasking === "low_confidence" ? softmaxAt(logits, token) : rng.uniform();
  return { token, confidence };
}

/**
 * Dream's `top_p_logits`, in place: sort descending, drop tokens whose cumulative probability
 * exceeds `topP`, shifted right by one so the first token over the threshold is kept (the top
 * token always survives). Dropped logits become −Infinity (torch uses the dtype minimum; both
 * give probability 0).
 *
 * Only tokens with p ≥ (1 − topP)/V can survive (all larger tokens together already hold more
 * than topP otherwise), so only their logits are sorted (natively); the cut is then a logit
 * threshold.
 * @param logits [vocab] float64, modified
 */
export function filterTopP(logits: Float64Array, topP: number): void {
  const V = logits.length;
  let max = -Infinity;
  for (let i = 0; i < V; i++) if (logits[i] > max) max = logits[i];
  const e = new Float64Array(V);
  let sum = 0;
  for (let i = 0; i < V; i++) {
    const x = logits[i] === -Infinity ? 0 : Math.exp(logits[i] - max);
    e[i] = x;
    sum += x;
  }
  const bound = ((1 - topP) / V) * 0.5 * sum; // half the exact bound (in unnormalised mass): rounding-safe
  let n = 0;
  for (let i = 0; i < V; i++) if (e[i] >= bound) n++;
  const cand = new Float64Array(n);
  for (let i = 0, j = 0; i < V; i++) if (e[i] >= bound) cand[j++] = logits[i];
  cand.sort(); // native numeric sort, ascending; walk it from the top
  let cum = 0;
  let threshold = cand[n - 1];
  for (let j = n - 1; j >= 0; j--) {
    if (cum > topP) break; // the mass above already exceeds topP: this token and all below are dropped
    threshold = cand[j];
    cum += Math.exp(cand[j] - max) / sum;
  }
  // Keep every token at or above the last kept logit (exact ties at the cut are all kept; torch's
  // sort order among exact ties is unspecified anyway).
  for (let i = 0; i < V; i++) if (logits[i] < threshold) logits[i] = -Infinity;
}

/**
 * `top_k_logits`, in place: keep tokens ≥ the k-th largest logit (ties at the threshold survive).
 * @param logits [vocab] float64, modified
 */
export function filterTopK(logits: Float64Array, topK: number): void {
  const k = Math.min(topK, logits.length);
  const sorted = Float64Array.from(logits).sort();
  const threshold = sorted[logits.length - k];
  for (let i = 0; i < logits.length; i++) if (logits[i] < threshold) logits[i] = -Infinity;
}

export type DreamConfidence = "maskgit_plus" | "topk_margin" | "entropy";

export interface TokenSampling {
  temperature: number;
  topP?: number | null;
  topK?: number | null;
}

/**
 * Dream's `sample_tokens` for one position. Logits are divided by τ (τ > 0), then top-p, then
 * top-k filtered; probs = softmax. τ > 0 samples the token from probs, else takes the max.
 * Confidence: `maskgit_plus` p(token); `topk_margin` p(top1) − p(top2); `entropy`
 * Σ p·log(p + 1e-10) (negative entropy: higher is more certain). The token is sampled the same
 * way for every variant; only the ordering signal differs.
 * @param logits [vocab]
 */
export function dreamSampleToken(logits: ArrayLike<number>, sampling: TokenSampling, variant: DreamConfidence, rng: Rng): Choice {
  const probs = filteredProbs(logits, sampling, "dream");
  let token: number;
  if (sampling.temperature > 0) {
    token = rng.categorical(probs);
    if (token < 0) token = argmax(probs); // upstream falls back to argmax when sampling fails
  } else {
    token = argmax(probs);
  }
  let confidence = probs[token];
  if (variant === "topk_margin") {
    let top1 = 0;
    let top2 = 0;
    for (let i = 0; i < probs.length; i++) {
      const p = probs[i];
      if (p > top1) {
        top2 = top1;
        top1 = p;
      } else if (p > top2) top2 = p;
    }
    confidence = top1 - top2;
  } else if (variant === "entropy") {
    let s = 0;
    // Zero probabilities add exactly 0 (top-p leaves most of the vocabulary at 0): skip their log.
    for (let i = 0; i < probs.length; i++) if (probs[i] > 0) s += probs[i] * Math.log(probs[i] + 1e-10);
    confidence = s;
  }
  return { token, confidence };
}

/**
 * ARM next-token choice. Greedy: argmax. Sampled: HF's processor order — temperature, top-k,
 * top-p — then one categorical draw. Confidence: the un-tempered softmax probability of the token.
 * @param logits [vocab]
 */
export function armChoose(logits: ArrayLike<number>, sampling: TokenSampling | null, rng: Rng): Choice {
  if (sampling === null) {
    const token = argmax(logits);
    return { token, confidence: softmaxAt(logits, token) };
  }
  const probs = filteredProbs(logits, sampling, "hf");
  let token = rng.categorical(probs);
  if (token < 0) token = argmax(probs);
  return { token, confidence: softmaxAt(logits, token) };
}

/** Temperature, then top-p/top-k in the order of the named convention, then softmax. */
function filteredProbs(logits: ArrayLike<number>, s: TokenSampling, order: "dream" | "hf"): Float64Array {
  const l = Float64Array.from(logits as ArrayLike<number>);
  if (s.temperature > 0) for (let i = 0; i < l.length; i++) l[i] /= s.temperature;
  const topP = s.topP !== undefined && s.topP !== null && s.topP < 1 ? s.topP : undefined;
  const topK = s.topK !== undefined && s.topK !== null ? s.topK : undefined;
  if (order === "dream") {
    if (topP !== undefined) filterTopP(l, topP);
    if (topK !== undefined) filterTopK(l, topK);
  } else {
    if (topK !== undefined) filterTopK(l, topK);
    if (topP !== undefined) filterTopP(l, topP);
  }
  return softmax(l);
}
