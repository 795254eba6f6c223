/**
 * The step loop's forward passes through a key/value cache (runtime `KvDecoder`), for strategies
 * that only append (ARM): step 0 runs the left-padded prompts, as the full path does; every later
 * step runs only each row's newly appended token, after the keys and values the decoder holds.
 * The logits are the same rows the full path computes (up to float rounding), so the same tokens
 * come out; each step costs one single-row forward instead of a forward over the whole prefix.
 *
 * Batches: rows keep the left padding of step 0 (padding columns stay masked keys) and leave the
 * batch when they stop (`KvDecoder.retain`), as they drop out of the full path's batches.
 */
import type { Engine, ForwardInput, ForwardOutput, KvDecoder } from "../runtime/types.js";
import { logitRowsInput, logitsView, padBatch, type LogitsView } from "./batch.js";
import type { LoopOptions, RowState, Strategy } from "./loop.js";

export interface CachedPass {
  out: ForwardOutput;
  /** Each active row's logits, in its unpadded canvas coordinates. */
  views: LogitsView[];
}

export interface CachedPasses {
  /** The forward of one step over `active` (the rows not done, in the loop's order). */
  pass(step: number, active: RowState[]): Promise<CachedPass>;
}

/**
 * Cached passes when they give what the full path gives: the strategy only appends, the engine has a
 * decoder (a causal model without probes or interventions), and the run has no classifier-free
 * guidance, no intervention policy and no region probe. Undefined otherwise (the full path runs).
 */
export function cachedPasses(engine: Engine, strategy: Strategy, opts: LoopOptions): CachedPasses | undefined {
  if (opts.kvCache === false || !engine.decoder || !strategy.appendsOnly) return undefined;
  if (opts.guidance || opts.intervener || opts.regions) return undefined;
  return new DecoderPasses(engine.decoder(), strategy, opts);
}

class DecoderPasses implements CachedPasses {
  /** Prompt index of each row the decoder holds, in its batch order. */
  private held: number[] = [];
  /** Canvas length each held row has run (its keys and values are cached). */
  private fed = new Map<number, number>();

  constructor(
    private readonly decoder: KvDecoder,
    private readonly strategy: Strategy,
    private readonly opts: LoopOptions,
  ) {}

  async pass(step: number, active: RowState[]): Promise<CachedPass> {
    return this.held.length === 0 ? this.prefill(step, active) : this.next(step, active);
  }

  /** The prompts, left-padded into one batch: an ordinary forward that fills the cache. */
  private async prefill(step: number, active: RowState[]): Promise<CachedPass> {
    const { input, pads } = padBatch(
      active.map((r) => r.canvas),
      this.opts.padId,
    );
    this.select(step, active, input, pads);
    const out = await this.decoder.step(input);
    this.held = active.map((r) => r.index);
    for (const r of active) this.fed.set(r.index, r.canvas.length);
    return { out, views: active.map((_, b) => logitsView(out, input.seq, b, pads[b], undefined, input.batch)) };
  }

  /** Each row's tokens appended since its last pass (one per step for ARM), after the cached ones. */
  private async next(step: number, active: RowState[]): Promise<CachedPass> {
    const keep = active.map((r) => this.held.indexOf(r.index));
    if (keep.some((k, i) => k < 0 || (i > 0 && k <= keep[i - 1])))
      throw new Error("internal: a cached decode's rows can only leave the batch, in order");
    if (keep.length < this.held.length) {
      this.decoder.retain(keep);
      this.held = active.map((r) => r.index);
    }
    const fed = active.map((r) => this.fed.get(r.index)!);
    const n = active[0].canvas.length - fed[0];
    if (n < 1 || active.some((r, b) => r.canvas.length - fed[b] !== n))
      throw new Error("internal: a cached decode needs the same number of new tokens in every row");
    const ids = new Int32Array(active.length * n);
    active.forEach((r, b) => ids.set(r.canvas.subarray(fed[b]), b * n));
    const input: ForwardInput = { ids, batch: active.length, seq: n };
    // positions among the new tokens: canvas position p is new column p − fed (a negative "padding")
    const offsets = fed.map((f) => -f);
    this.select(step, active, input, offsets);
    const out = await this.decoder.step(input);
    for (const r of active) this.fed.set(r.index, r.canvas.length);
    return { out, views: active.map((_, b) => logitsView(out, n, b, offsets[b], undefined, input.batch)) };
  }

  /** The rows `decide` reads (as the full path asks for them), shifted into the pass's columns. */
  private select(step: number, active: RowState[], input: ForwardInput, offsets: number[]): void {
    const { strategy, opts } = this;
    if (!strategy.rowsNeeded || opts.selectRows === false) return;
    input.logitRows = logitRowsInput(
      active.map((r) => strategy.rowsNeeded!(step, r)),
      offsets,
    );
    if (strategy.summariesSuffice) {
      input.summaries = true;
      input.returnLogits = false;
    }
  }
}
