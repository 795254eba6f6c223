/**
 * The seedable random source: `Rng` for every sampler (LLaDA Gumbel noise and random remasking, Dream
 * token sampling, `origin` transfers and `alg_temp` selection, ARM sampling), the QA harness's
 * distractor draws, and any new code.
 *
 * Generator: xoshiro128** (Blackman & Vigna) on four uint32 words, seeded through SplitMix32 from
 * (seed, stream). Pure 32-bit integer arithmetic (`Math.imul`), so the sequence is identical on every
 * platform and Node version: the same seed and inputs give byte-identical traces.
 *
 * `stream` separates independent sequences under one seed: a batch of prompts uses stream = row
 * index, so prompt i of an evaluation draws its own numbers whatever else is in the batch.
 *
 * Upstream (torch) random numbers cannot be reproduced; only the distributions are the same.
 */
import { SettingsError } from "./errors.js";

const TWO_POW_53 = 9007199254740992;
const TWO_POW_26 = 67108864;
const TWO_POW_32 = 4294967296;

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** SplitMix32 finaliser: a bijective avalanche of one 32-bit word. */
function mix32(z: number): number {
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  /** The seed and stream this generator was created from (recorded in traces). */
  readonly seed: number;
  readonly stream: number;

  /**
   * @param seed non-negative safe integer (0 … 2^53−1)
   * @param stream non-negative integer < 2^32 selecting an independent sequence (default 0)
   */
  constructor(seed: number, stream = 0) {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw new SettingsError("Invalid seed", { file: "settings", field: "seed", expected: "an integer 0 … 2^53−1", found: String(seed) });
    }
    if (!Number.isInteger(stream) || stream < 0 || stream >= TWO_POW_32) {
      throw new SettingsError("Invalid RNG stream", {
        file: "settings",
        field: "stream",
        expected: "an integer 0 … 2^32−1",
        found: String(stream),
      });
    }
    this.seed = seed;
    this.stream = stream;
    const lo = seed % TWO_POW_32;
    const hi = Math.floor(seed / TWO_POW_32);
    // SplitMix32 sequence started from a mix of all three inputs; each output word is distinct.
    let a = mix32(lo ^ mix32(hi ^ 0x6a09e667) ^ mix32(stream ^ 0xbb67ae85));
    const next = () => {
      a = (a + 0x9e3779b9) | 0;
      return mix32(a);
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1; // all-zero is the one forbidden state
  }

  /** A generator with an explicit xoshiro128** state (tests against published sequences). */
  static fromState(state: [number, number, number, number]): Rng {
    const r = new Rng(0);
    [r.s0, r.s1, r.s2, r.s3] = state.map((x) => x | 0);
    return r;
  }

  /** Next raw 32-bit output, as an unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform float64 strictly inside (0, 1): 53 random bits, centred in their cell so 0 never occurs. */
  uniform(): number {
    const a = this.nextUint32() >>> 5; // 27 bits
    const b = this.nextUint32() >>> 6; // 26 bits
    return (a * TWO_POW_26 + b + 0.5) / TWO_POW_53;
  }

  /** Standard Gumbel sample g = −log(−log U). */
  gumbel(): number {
    return -Math.log(-Math.log(this.uniform()));
  }

  /**
   * Sample an index with probability weights[i] / Σ weights (inverse CDF, one uniform draw).
   * Non-positive and non-finite weights never win. Returns −1 when no weight is positive.
   * @param weights [n]
   */
  categorical(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i];
      if (w > 0 && Number.isFinite(w)) total += w;
    }
    if (!(total > 0)) return -1;
    const target = this.uniform() * total;
    let acc = 0;
    let last = -1;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i];
      if (!(w > 0 && Number.isFinite(w))) continue;
      acc += w;
      last = i;
      if (target < acc) return i;
    }
    return last; // rounding put target at the very end: the last positive weight
  }

  /**
   * `count` distinct indices drawn one after another, each proportional to the remaining weights
   * (what `torch.multinomial(p, count, replacement=False)` samples). Fewer positive weights than
   * `count` returns only the positive ones.
   * @param weights [n] (not modified)
   */
  multinomialWithoutReplacement(weights: ArrayLike<number>, count: number): number[] {
    const w = Float64Array.from(weights as ArrayLike<number>);
    const picked: number[] = [];
    for (let k = 0; k < count; k++) {
      const i = this.categorical(w);
      if (i < 0) break;
      picked.push(i);
      w[i] = 0;
    }
    return picked;
  }
}

/**
 * mulberry32, uniform in [0, 1): the stream the bootstrap intervals resample with (util/stats.ts). Not
 * for new code (use `Rng`): it stays because every interval the notebooks, findings and claims record
 * was drawn from it, and replacing it would change those numbers.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
