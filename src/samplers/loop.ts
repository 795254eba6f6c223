/**
 * The step loop every sampler shares: pad the active rows into one batch (plus the unconditional
 * copies when classifier-free guidance is on), call `engine.forward` once (an appending strategy on
 * an engine with a key/value cache instead runs only each row's new token: cached-passes.ts), let the algorithm
 * (`Strategy`) pick each row's transfers, apply them, and hand each row's step to `onStep`. After
 * the last step, one more forward pass over the final sequences with the same probes.
 *
 * Nothing here knows which family or algorithm runs: the strategy decides, the spec supplies the
 * mask and padding ids.
 */
import type { Engine, ForwardInput, ForwardOutput } from "../runtime/types.js";
import type { ProbeTensor } from "../util/probes.js";
import type { PassIntervention, TraceStep } from "../trace/types.js";
import { logitRowsInput, logitsView, padBatch, sliceProbes, type LogitsView } from "./batch.js";
import { batchIntervention, type Intervener } from "./interventions.js";
import { cachedPasses } from "./cached-passes.js";
import { probeOutputs } from "../graph/probes.js";
import type { Rng } from "../util/rng.js";

/** One prompt's state while sampling. Positions are unpadded (the prompt starts at 0). */
export interface RowState {
  /** Index in the caller's prompt list. */
  index: number;
  promptLength: number;
  /** The current canvas (prompt + generation so far). */
  canvas: Int32Array;
  rng: Rng;
  /** Set by the strategy when this row needs no more steps (ARM: EOS). */
  done: boolean;
  /** Step at which each position was written (−1: prompt or not yet), grows with the canvas. */
  unmaskedAt: Int32Array;
}

export interface Transfer {
  /** Positions to write (ascending); a position equal to the canvas length appends. */
  positions: number[];
  tokens: number[];
  confidence: number[];
  /** Query row whose output produced each token. */
  producingRow: number[];
}

/** An algorithm's decisions; the loop does everything else. */
export interface Strategy {
  /** Steps to run at most. */
  readonly maxSteps: number;
  /** The first canvas of a prompt (MDMs: prompt + masks; ARM: the prompt). */
  initCanvas(prompt: Int32Array): Int32Array;
  /** Block index of a step (0 without blocks). */
  blockOf(step: number): number;
  /** Pick this row's transfers from its logits. May set `row.done`. */
  decide(step: number, row: RowState, logits: LogitsView): Transfer;
  /**
   * The positions whose logits `decide` will read at this step (called just before the forward,
   * with the same canvas). When given, the engine computes only those rows.
   */
  rowsNeeded?(step: number, row: RowState): number[];
  /** `decide` needs only the per-row summaries (`LogitsView.summary`) of those rows, not the logits. */
  readonly summariesSuffice?: boolean;
  /**
   * Every step only appends tokens at the end of each row, and nothing earlier changes (ARM): the loop
   * may then run rows through the engine's key/value cache, feeding only the new tokens
   * (cached-passes.ts).
   */
  readonly appendsOnly?: boolean;
}

export interface LoopOptions {
  /** Token for padding columns (never attended to). */
  padId: number;
  /** Classifier-free guidance: scale c and the mask id that hides the prompt in the unconditional copy. */
  guidance?: { scale: number; maskId: number };
  /** Token spans per prompt for the `region_sum` probe. */
  regions?: { count: number; rows: [number, number][][] };
  /** Called for every row at every step, after the transfer is chosen. */
  onStep?: (row: RowState, step: TraceStep) => void;
  /** Checked before each step: when aborted, the loop stops and reports `interrupted`. */
  signal?: AbortSignal;
  /** Ask the engine for only the rows the strategy reads (default true; false: full logits). */
  selectRows?: boolean;
  /** An attention-intervention policy evaluated at every pass (interventions.ts). */
  intervener?: Intervener;
  /**
   * Use the engine's key/value cache where it gives the same tokens (default true; cached-passes.ts:
   * an appending strategy, an engine with a decoder, no guidance, policy or region probe). false:
   * every step re-runs the whole canvas.
   */
  kvCache?: boolean;
}

export interface LoopResult {
  steps: number;
  interrupted: boolean;
}

/** Run the denoising/decoding steps over all rows. Mutates the row states. */
export async function runSteps(engine: Engine, strategy: Strategy, rows: RowState[], opts: LoopOptions): Promise<LoopResult> {
  const cached = cachedPasses(engine, strategy, opts);
  let step = 0;
  for (; step < strategy.maxSteps; step++) {
    if (opts.signal?.aborted) return { steps: step, interrupted: true };
    const active = rows.filter((r) => !r.done);
    if (active.length === 0) break;
    const { out, views, pads, plans } = cached
      ? { ...(await cached.pass(step, active)), pads: active.map(() => 0), plans: undefined }
      : await fullPass(engine, strategy, step, active, opts);
    const block = strategy.blockOf(step);
    active.forEach((row, b) => {
      const fed = row.canvas;
      const t = strategy.decide(step, row, views[b]);
      apply(row, t, step);
      const probes = sliceProbes(out.probes, b, pads[b]);
      const record: TraceStep = {
        step,
        block,
        canvas: fed,
        transferred: Int32Array.from(t.positions),
        tokens: Int32Array.from(t.tokens),
        confidence: Float32Array.from(t.confidence),
        producingRow: Int32Array.from(t.producingRow),
        probes,
      };
      if (plans) {
        record.intervention = plans[b];
        opts.intervener!.observe(row, plans[b], probes);
      }
      opts.onStep?.(row, record);
    });
  }
  return { steps: step, interrupted: false };
}

/**
 * One step's forward over the whole canvases of the active rows (padded into one batch, with the
 * unconditional copies under guidance), and each row's logits.
 */
async function fullPass(
  engine: Engine,
  strategy: Strategy,
  step: number,
  active: RowState[],
  opts: LoopOptions,
): Promise<{ out: ForwardOutput; views: LogitsView[]; pads: number[]; plans?: PassIntervention[] }> {
  const canvases = active.map((r) => r.canvas);
  const regionRows = opts.regions ? active.map((r) => opts.regions!.rows[r.index]) : undefined;
  let uncondStart = -1;
  if (opts.guidance) {
    uncondStart = canvases.length;
    for (const r of active) canvases.push(unconditional(r, opts.guidance.maskId));
    regionRows?.push(...active.map((r) => opts.regions!.rows[r.index]));
  }
  const { input, pads } = padBatch(canvases, opts.padId, regionRows, opts.regions?.count);
  if (strategy.rowsNeeded && opts.selectRows !== false) {
    // Only the rows decide() reads (the unconditional copies need the same rows, for mixing).
    const needed = active.map((r) => strategy.rowsNeeded!(step, r));
    if (opts.guidance) needed.push(...needed);
    input.logitRows = logitRowsInput(needed, pads);
    if (strategy.summariesSuffice && !opts.guidance) {
      input.summaries = true;
      input.returnLogits = false;
    }
  }
  const { out, plans } = await intervenedForward(engine, input, active, pads, opts.intervener);
  const views = active.map((_, b) =>
    logitsView(
      out,
      input.seq,
      b,
      pads[b],
      opts.guidance && {
        uncondRow: uncondStart + b,
        uncondPad: pads[uncondStart + b],
        scale: opts.guidance.scale,
      },
      input.batch,
    ),
  );
  return { out, views, pads, plans };
}

/**
 * One forward pass, intervened when a policy is given: an un-intervened first pass when the policy
 * needs one (its probes only), then each row's plan, placed at its padding (the unconditional CFG
 * copies, rows `active.length…`, get the same plan as their conditional row).
 */
async function intervenedForward(
  engine: Engine,
  input: ForwardInput,
  active: RowState[],
  pads: number[],
  intervener?: Intervener,
): Promise<{ out: ForwardOutput; plans?: PassIntervention[] }> {
  if (!intervener) return { out: await engine.forward(input) };
  let first: Map<string, ProbeTensor>[] | undefined;
  if (intervener.needsFirstPass(active)) {
    // Only its probes are read: one logits row per batch row, summaries instead of logits.
    const probeOnly: ForwardInput = {
      ids: input.ids,
      batch: input.batch,
      seq: input.seq,
      attentionMask: input.attentionMask,
      regionOneHot: input.regionOneHot,
    };
    if (engine.logitRows)
      Object.assign(probeOnly, { logitRows: new Int32Array(input.batch).fill(input.seq - 1), summaries: true, returnLogits: false });
    const out1 = await engine.forward(probeOnly);
    first = active.map((_, b) => sliceProbes(out1.probes, b, pads[b]));
  }
  const plans = active.map((r, b) => intervener.plan(r, r.canvas, first?.[b]));
  const all = [...plans, ...plans].slice(0, input.batch);
  const out = await engine.forward({ ...input, intervention: batchIntervention(all, pads, input.seq, engine.spec) });
  return { out, plans };
}

/** The canvas with every prompt position hidden (set to mask), as LLaDA's CFG builds it. */
function unconditional(row: RowState, maskId: number): Int32Array {
  const u = Int32Array.from(row.canvas);
  u.fill(maskId, 0, row.promptLength);
  return u;
}

/** Write a transfer into the row (copy-on-write: the canvas handed to `onStep` stays as fed). */
function apply(row: RowState, t: Transfer, step: number): void {
  let len = row.canvas.length;
  for (const p of t.positions) len = Math.max(len, p + 1);
  const next = new Int32Array(len);
  next.set(row.canvas);
  if (len > row.unmaskedAt.length) {
    const u = new Int32Array(len).fill(-1);
    u.set(row.unmaskedAt);
    row.unmaskedAt = u;
  }
  t.positions.forEach((p, j) => {
    next[p] = t.tokens[j];
    row.unmaskedAt[p] = step;
  });
  row.canvas = next;
}

/** The final pass of one row: its probes and, in an intervened run, what the policy did. */
export interface FinalPass {
  probes: Map<string, ProbeTensor>;
  intervention?: PassIntervention;
}

/**
 * One forward pass over the rows' final sequences with the same probes (batched, padded); an
 * intervention policy is evaluated for it as for one more step. An engine that records no probe,
 * without a policy, would only return empty maps: no forward then (for a probe-free ARM run it
 * would cost as much as the whole cached decode).
 */
export async function finalPass(
  engine: Engine,
  rows: RowState[],
  opts: Pick<LoopOptions, "padId" | "regions" | "intervener">,
): Promise<FinalPass[]> {
  if (rows.length === 0) return [];
  if (!opts.intervener && probeOutputs(engine.spec, engine.probes).length === 0) return rows.map(() => ({ probes: new Map() }));
  const regionRows = opts.regions ? rows.map((r) => opts.regions!.rows[r.index]) : undefined;
  const { input, pads } = padBatch(
    rows.map((r) => r.canvas),
    opts.padId,
    regionRows,
    opts.regions?.count,
  );
  // Only the probes are used: one logits row per batch row keeps the LM head off the other rows.
  input.logitRows = new Int32Array(input.batch).fill(input.seq - 1);
  const { out, plans } = await intervenedForward(engine, input, rows, pads, opts.intervener);
  return rows.map((_, b) => {
    const f: FinalPass = { probes: sliceProbes(out.probes, b, pads[b]) };
    if (plans) f.intervention = plans[b];
    return f;
  });
}
