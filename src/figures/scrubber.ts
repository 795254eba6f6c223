/**
 * Trace → attention-step scrubber payload (`application/vnd.floatscope.scrubber.v1+json`), plus
 * its static fallbacks (a PNG of the temporal view rendered here, and a one-line text/plain).
 *
 * What the view needs from a trace, per run: the head-mean attention each key receives at every
 * step and layer (`blocks.{l}.attn.received`, [key]), optionally per head
 * (`received_heads`, [head, key]) and full maps (`pattern_mean`, [query, key]) for the layers that
 * recorded them; the step each position was unmasked; token strings; and the floating anchors of
 * every (step, layer), detected here by the shared detector (analysis/anchors.ts) on full-precision
 * values. Everything is quantised to uint8 and base64'd.
 *
 * Size cap (default 8 MiB of JSON): `received` gets up to three quarters of it (steps, then layers
 * are subsampled evenly when it does not fit), per-head received up to three quarters of what is left
 * (heads subsampled evenly), full maps half of the rest, per-head maps what remains (at evenly spaced
 * steps). Every reduction is listed in `subsampled`, which the view and the text/plain summary both
 * show in words. Maps of the steps that did not fit stay in the kernel, which serves them one
 * (step, layer) at a time while it runs (`payload.live`, the widget asks for them).
 *
 * @example
 *   show(scrubber([lladaTrace, llamaTrace], { title: "same prompt, MDM vs ARM" }));
 */
import type { Trace } from "../trace/types.js";
import { describeRule, detectAnchors, anchorContext, resolveRule, type AnchorOptions } from "../analysis/anchors.js";
import { DisplayError, SettingsError, ProbeMissingError } from "../util/errors.js";
import { parseProbeName, type ProbeTensor } from "../util/probes.js";
import {
  DEFAULT_PAYLOAD_CAP_BYTES,
  LIVE_BATCH_BYTES,
  LIVE_SLICE_GLOBAL,
  MIME_SCRUBBER,
  MIME_SCRUBBER_SLICE,
  describeOmitted,
  encodeArray,
  payloadSize,
  evenIndices,
  type ScrubberHeadMaps,
  type ScrubberMap,
  type ScrubberPayload,
  type ScrubberRun,
  type ScrubberSlice,
  type SubsampleNote,
} from "../protocol/payloads.js";
import { scrubberSvg } from "./scrubber-svg.js";

export interface ScrubberOptions {
  title?: string;
  /** One label per trace; default "<model name> (MDM|ARM)". */
  labels?: string[];
  /** Model layers to show (default: every layer with a `received` probe). */
  layers?: number[];
  /** Cap on the payload's JSON size in characters. Default DEFAULT_PAYLOAD_CAP_BYTES (8 MiB). */
  maxBytes?: number;
  /** Include per-head received attention when recorded (default true). */
  heads?: boolean;
  /** Include full maps when recorded (default true). */
  maps?: boolean;
  /** Include per-head maps (`pattern`) for the head view and the layers × heads grid when recorded (default true). */
  headMaps?: boolean;
  /** Anchor rule (analysis/anchors.ts); default μ + 3σ per step and layer, no fallback (paper §5). */
  anchors?: AnchorOptions;
  /** One tier per trace ("tiny", "real", "real-base") for the panel titles; default "tiny" for tiny-* models, else none. */
  tiers?: (string | undefined)[];
  /**
   * Serve every (step, layer)'s maps on demand from this kernel (default true): the widget asks the
   * kernel that built the payload for what was not embedded. The traces stay referenced by the
   * kernel (the last LIVE_KEEP payloads).
   */
  live?: boolean;
}

/** Base64 characters of `n` one-byte values, plus JSON framing. */
const b64Chars = (n: number) => Math.ceil(n / 3) * 4 + 64;

/** Layers with a probe of `kind` in a step's probe map. */
function layersOf(probes: Map<string, ProbeTensor>, kind: string): number[] {
  const out: number[] = [];
  for (const name of probes.keys()) {
    const p = parseProbeName(name);
    if (p && p.kind === kind) out.push(p.layer);
  }
  return out.sort((a, b) => a - b);
}

/** Drop a leading batch axis of 1 (traces store it removed, but be lenient). */
function dimsOf(t: ProbeTensor, rank: number): number[] {
  return t.dims.length === rank + 1 && t.dims[0] === 1 ? t.dims.slice(1) : t.dims;
}

interface RunPlan {
  index: number;
  trace: Trace;
  label: string;
  N: number;
  layers: number[];
  stepIdx: number[];
  heads: number[];
  mapLayers: number[];
  /** Layers with per-head maps (`pattern`), and the model heads they hold. */
  headMapLayers: number[];
  headMapHeads: number[];
}

function plan(trace: Trace, label: string, opts: ScrubberOptions, where: string): RunPlan {
  if (trace.steps.length === 0) {
    throw new SettingsError("trace has no steps to scrub", {
      file: where,
      field: "steps",
      expected: "at least one recorded step",
      found: "0",
    });
  }
  const first = trace.steps[0].probes;
  const recorded = layersOf(first, "received");
  if (recorded.length === 0) {
    throw new ProbeMissingError(`${where} has no blocks.{l}.attn.received at its steps`, {
      file: where,
      field: "blocks.0.attn.received",
      expected: "received attention per step",
      found: "no such probe",
      hint: "record it with probes: { received: true }",
    });
  }
  const layers = opts.layers ?? recorded;
  for (const l of layers) {
    if (!recorded.includes(l)) {
      throw new SettingsError("layer not recorded", {
        file: where,
        field: "layers",
        expected: `one of ${recorded.join(", ")}`,
        found: String(l),
      });
    }
  }
  const headsRecorded = opts.heads === false ? [] : layersOf(first, "received_heads");
  const numHeads = headsRecorded.length && layers.every((l) => headsRecorded.includes(l)) ? trace.model.numHeads : 0;
  const mapLayers = opts.maps === false ? [] : layersOf(first, "pattern_mean").filter((l) => layers.includes(l));
  const headMapLayers = opts.headMaps === false ? [] : layersOf(first, "pattern").filter((l) => layers.includes(l));
  const headMapHeads = trace.probes.pattern?.heads ?? Array.from({ length: trace.model.numHeads }, (_, h) => h);
  return {
    index: 0,
    trace,
    label,
    N: trace.tokens.length,
    layers,
    stepIdx: trace.steps.map((_, i) => i),
    heads: Array.from({ length: numHeads }, (_, h) => h),
    mapLayers,
    headMapLayers,
    headMapHeads,
  };
}

/** Read a [key] (or [head, key] row) probe into `out` at `o`, NaN-padding keys a step did not have (ARM). */
function copyKeys(src: ArrayLike<number>, srcOffset: number, len: number, out: Float32Array, o: number, N: number): void {
  const n = Math.min(len, N);
  for (let j = 0; j < n; j++) out[o + j] = src[srcOffset + j];
  for (let j = n; j < N; j++) out[o + j] = NaN;
}

function buildRun(p: RunPlan, opts: ScrubberOptions, where: string): ScrubberRun {
  const { trace, N, layers, stepIdx } = p;
  const S = stepIdx.length;
  const L = layers.length;
  const received = new Float32Array(S * L * N);
  const rule = resolveRule(opts.anchors ?? {}, "drift", trace.model.causal);
  const anchors: number[] = [];
  for (let s = 0; s < S; s++) {
    const step = trace.steps[stepIdx[s]];
    const ctx = anchorContext(trace, stepIdx[s]);
    for (let li = 0; li < L; li++) {
      const name = `blocks.${layers[li]}.attn.received`;
      const t = step.probes.get(name);
      if (!t)
        throw new ProbeMissingError(`${where} step ${step.step} has no ${name}`, {
          file: where,
          field: name,
          hint: "record it with probes: { received: true }",
        });
      const n = dimsOf(t, 1)[0];
      const o = (s * L + li) * N;
      copyKeys(t.data, 0, n, received, o, N);
      for (const j of detectAnchors(t.data.subarray(0, Math.min(n, N)), rule, ctx)) anchors.push(o + j);
    }
  }
  const run: ScrubberRun = {
    label: p.label,
    family: trace.model.family,
    causal: trace.model.causal,
    tokens: [...trace.tokens],
    promptLength: trace.prompt.promptLength,
    unmaskedAt: encodeArray(trace.unmaskedAt, [N], { dtype: "int32" }),
    steps: stepIdx.map((i) => trace.steps[i].step),
    layers: [...layers],
    numHeads: trace.model.numHeads,
    heads: [],
    received: encodeArray(received, [S, L, N]),
    anchors: encodeArray(anchors, [anchors.length], { dtype: "int32" }),
    anchorRule: describeRule(rule) + ", per step and layer, on head-mean received attention",
    maps: [],
    missing: missingViews(p),
    regions: trace.prompt.regions.map((r) => ({ name: r.name, tokens: [r.tokens[0], r.tokens[1]] as [number, number] })),
    model: trace.model.name,
    paradigm: trace.model.causal ? "ARM" : "MDM",
    numLayers: trace.model.numLayers,
  };
  const tier = opts.tiers?.[p.index] ?? (/^tiny-/.test(trace.model.name) ? "tiny" : undefined);
  if (tier) run.tier = tier;
  return run;
}

/** The setting that records everything the scrubber can show, named in every "not recorded" note. */
export const VIEW_PROBES_HINT = 'decodeQa(…, { viewProbes: "all" })';

/** What a view needs that the trace did not record, with the setting that records it. */
function missingViews(p: RunPlan): NonNullable<ScrubberRun["missing"]> {
  const L = `[${p.layers.join(", ")}]`;
  const out: NonNullable<ScrubberRun["missing"]> = [];
  if (p.heads.length === 0)
    out.push({ view: "heads", note: `per-head attention not recorded: ${VIEW_PROBES_HINT}, or probes: { receivedHeads: true }` });
  if (p.mapLayers.length === 0)
    out.push({ view: "maps", note: `full maps not recorded: ${VIEW_PROBES_HINT}, or probes: { patternMean: { layers: ${L} } }` });
  if (p.headMapLayers.length === 0)
    out.push({ view: "headMaps", note: `per-head maps not recorded: ${VIEW_PROBES_HINT}, or probes: { pattern: { layers: ${L} } }` });
  return out;
}

/**
 * Per-head maps [head, query, key] for the head view: every head-map layer at evenly spaced steps
 * (the last always among them), as many steps as fit `budget`.
 */
function addHeadMaps(run: ScrubberRun, p: RunPlan, budget: number, notes: SubsampleNote[], where: string): void {
  if (p.headMapLayers.length === 0) return;
  const { N } = p;
  const S = p.stepIdx.length;
  const H = p.headMapHeads.length;
  run.headMapHeads = [...p.headMapHeads]; // also when none fit: a live kernel serves them on demand
  const perStep = b64Chars(H * N * N) * p.headMapLayers.length;
  const fit = Math.floor(budget / perStep);
  if (fit < 1) {
    notes.push({ axis: "head-map step", kept: 0, of: S, how: `per-head maps dropped for ${p.label}; raise maxBytes to keep them` });
    return;
  }
  const keep = evenIndices(S, Math.min(S, fit));
  if (keep.length < S)
    notes.push({ axis: "head-map step", kept: keep.length, of: S, how: `per-head maps at evenly spaced steps, ${p.label}` });
  const out: ScrubberHeadMaps[] = [];
  for (const si of keep) {
    for (const layer of p.headMapLayers) {
      const m = headMapAt(p, si, layer, where);
      if (m) out.push({ stepIndex: si, layerIndex: p.layers.indexOf(layer), data: encodeArray(m, [H, N, N]) });
    }
  }
  run.headMaps = out;
  run.headMapHeads = [...p.headMapHeads];
}

/** Per-head received attention, [step, layer, head, key], keeping evenly spaced heads to fit `budget`. */
function addHeads(run: ScrubberRun, p: RunPlan, budget: number, notes: SubsampleNote[]): void {
  if (p.heads.length === 0) return;
  const { trace, N, layers, stepIdx } = p;
  const S = stepIdx.length;
  const L = layers.length;
  const per = S * L * N;
  const fit = Math.floor(budget / b64Chars(per));
  if (fit < 1) {
    notes.push({ axis: "head", kept: 0, of: p.heads.length, how: `per-head data dropped for ${p.label}; mean over heads only` });
    return;
  }
  const keep = evenIndices(p.heads.length, Math.min(p.heads.length, fit));
  if (keep.length < p.heads.length) notes.push({ axis: "head", kept: keep.length, of: p.heads.length, how: `evenly spaced, ${p.label}` });
  const H = keep.length;
  const rh = new Float32Array(S * L * H * N);
  for (let s = 0; s < S; s++) {
    const step = trace.steps[stepIdx[s]];
    for (let li = 0; li < L; li++) {
      const t = step.probes.get(`blocks.${layers[li]}.attn.received_heads`)!;
      const [, n] = dimsOf(t, 2);
      for (let hi = 0; hi < H; hi++) copyKeys(t.data, keep[hi] * n, n, rh, ((s * L + li) * H + hi) * N, N);
    }
  }
  run.heads = keep;
  run.receivedHeads = encodeArray(rh, [S, L, H, N]);
}

/**
 * The recorded `pattern_mean` of a (step, layer) as an [N, N] map, NaN past the recorded rows and
 * columns; null when that step has none. A map larger than the sequence is a `SettingsError`.
 */
function patternMeanAt(p: RunPlan, si: number, layer: number, where: string): Float32Array | null {
  const { trace, N } = p;
  const name = `blocks.${layer}.attn.pattern_mean`;
  const t = trace.steps[p.stepIdx[si]].probes.get(name);
  if (!t) return null;
  const [nq, nk] = dimsOf(t, 2);
  if (nq > N || nk > N)
    throw new SettingsError("map larger than the sequence", {
      file: where,
      field: name,
      expected: `≤ ${N} × ${N}`,
      found: `${nq} × ${nk}`,
    });
  const m = new Float32Array(N * N).fill(NaN);
  for (let i = 0; i < nq; i++) for (let j = 0; j < nk; j++) m[i * N + j] = t.data[i * nk + j];
  return m;
}

/** The head-mean map [N, N] of a (step, layer) from `pattern_mean`, else the mean of `pattern`; null when neither was recorded. */
function meanMapAt(p: RunPlan, si: number, layer: number, where: string): Float32Array | null {
  const { N } = p;
  const recorded = patternMeanAt(p, si, layer, where);
  if (recorded) return recorded;
  const m = new Float32Array(N * N).fill(NaN);
  const h = headMapAt(p, si, layer, where);
  if (!h) return null;
  const H = p.headMapHeads.length;
  for (let i = 0; i < N * N; i++) {
    let sum = 0;
    for (let hh = 0; hh < H; hh++) sum += h[hh * N * N + i];
    m[i] = sum / H;
  }
  return m;
}

/** Per-head maps [H, N, N] of a (step, layer) from `pattern`, or null. */
function headMapAt(p: RunPlan, si: number, layer: number, where: string): Float32Array | null {
  const { trace, N } = p;
  const H = p.headMapHeads.length;
  const step = trace.steps[p.stepIdx[si]];
  const name = `blocks.${layer}.attn.pattern`;
  const t = step.probes.get(name);
  if (!t) return null;
  const [h, nq, nk] = dimsOf(t, 3);
  if (h !== H || nq > N || nk > N)
    throw new SettingsError("per-head map does not match the trace", {
      file: where,
      field: name,
      expected: `${H} × ≤ ${N} × ≤ ${N}`,
      found: `${h} × ${nq} × ${nk}`,
    });
  const m = new Float32Array(H * N * N).fill(NaN);
  for (let hh = 0; hh < H; hh++)
    for (let i = 0; i < nq; i++) for (let j = 0; j < nk; j++) m[(hh * N + i) * N + j] = t.data[(hh * nq + i) * nk + j];
  return m;
}

/** One run's (step, layer) slice: its head-mean map and per-head maps, uint8-encoded. */
export function scrubberSlice(key: string, plans: RunPlan[], run: number, stepIndex: number, layerIndex: number): ScrubberSlice {
  const p = plans[run];
  const out: ScrubberSlice = { key, run, stepIndex, layerIndex };
  if (!p || stepIndex < 0 || stepIndex >= p.stepIdx.length || layerIndex < 0 || layerIndex >= p.layers.length) {
    out.error = `no run ${run} step ${stepIndex} layer ${layerIndex} in this scrubber`;
    return out;
  }
  const layer = p.layers[layerIndex];
  const where = `traces[${run}]`;
  const N = p.N;
  if (p.headMapLayers.includes(layer)) {
    const h = headMapAt(p, stepIndex, layer, where);
    if (h) out.headMaps = encodeArray(h, [p.headMapHeads.length, N, N]);
  }
  if (p.mapLayers.includes(layer) || p.headMapLayers.includes(layer)) {
    const m = meanMapAt(p, stepIndex, layer, where);
    if (m) out.map = encodeArray(m, [N, N]);
  }
  return out;
}

/**
 * The slice of (run, step, layer) with the following steps of the same layer in `more`, as many as fit
 * `maxChars` of JSON in all (at least the requested one): one kernel request then serves several steps.
 */
export function scrubberBatch(
  key: string,
  plans: RunPlan[],
  run: number,
  stepIndex: number,
  layerIndex: number,
  maxChars = LIVE_BATCH_BYTES,
): ScrubberSlice {
  const first = scrubberSlice(key, plans, run, stepIndex, layerIndex);
  if (first.error) return first;
  let size = JSON.stringify(first).length;
  const more: ScrubberSlice[] = [];
  for (let s = stepIndex + 1; s < plans[run].stepIdx.length; s++) {
    const next = scrubberSlice(key, plans, run, s, layerIndex);
    const n = JSON.stringify(next).length;
    if (next.error || size + n > maxChars) break;
    more.push(next);
    size += n;
  }
  if (more.length) first.more = more;
  return first;
}

/**
 * How a served slice reaches the widget: as a display through the kernel's sink. Figures may not import
 * the display layer (it imports figures), so display/sink.ts installs the emitter when it loads.
 */
type SliceEmitter = (data: Record<string, unknown>) => void;
let emitSlice: SliceEmitter | undefined;
export function setSliceEmitter(fn: SliceEmitter): void {
  emitSlice = fn;
}

/** How many payloads' traces the kernel keeps for on-demand slices (older ones answer "re-run the cell"). */
export const LIVE_KEEP = 24;

type LiveRegistry = { entries: Map<string, RunPlan[]>; serve: (key: string, run: number, s: number, l: number) => void };

/** The kernel-wide registry (on globalThis, so every copy of the library in the kernel shares it). */
function liveRegistry(): LiveRegistry {
  const sym = Symbol.for(LIVE_SLICE_GLOBAL);
  const g = globalThis as unknown as Record<symbol, unknown>;
  const fn = g[sym] as (LiveRegistry["serve"] & { registry?: LiveRegistry }) | undefined;
  if (fn?.registry) return fn.registry;
  const entries = new Map<string, RunPlan[]>();
  const registry: LiveRegistry = {
    entries,
    serve: (key, run, s, l) => {
      const plans = entries.get(key);
      const slice: ScrubberSlice = plans
        ? scrubberBatch(key, plans, run, s, l)
        : { key, run, stepIndex: s, layerIndex: l, error: "this kernel no longer holds the traces of this scrubber: run its cell again" };
      if (!emitSlice) {
        throw new DisplayError("scrubber slices need floatscope's display layer, which sends them to the widget", {
          hint: 'import the library from "floatscope" (or "floatscope/display") in the kernel',
        });
      }
      emitSlice({ [MIME_SCRUBBER_SLICE]: slice, "text/plain": "scrubber slice" });
    },
  };
  const serve = Object.assign((key: string, run: number, s: number, l: number) => registry.serve(key, run, s, l), { registry });
  g[sym] = serve;
  return registry;
}

function registerLive(plans: RunPlan[]): string {
  const reg = liveRegistry();
  const key = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  reg.entries.set(key, plans);
  while (reg.entries.size > LIVE_KEEP) reg.entries.delete(reg.entries.keys().next().value as string);
  return key;
}

/** Full head-mean maps at evenly spaced steps (always including the last) for the map layers. */
function buildMaps(p: RunPlan, budget: number, notes: SubsampleNote[], where: string): ScrubberMap[] {
  if (p.mapLayers.length === 0) return [];
  const { N } = p;
  const S = p.stepIdx.length;
  const perMap = b64Chars(N * N);
  const fit = Math.floor(budget / (perMap * p.mapLayers.length));
  if (fit < 1) {
    notes.push({ axis: "map step", kept: 0, of: S, how: `full maps dropped for ${p.label}; raise maxBytes to keep them` });
    return [];
  }
  const keep = evenIndices(S, Math.min(S, fit));
  if (keep.length < S) {
    notes.push({ axis: "map step", kept: keep.length, of: S, how: `full maps at evenly spaced steps, ${p.label}` });
  }
  const maps: ScrubberMap[] = [];
  for (const si of keep) {
    for (const layer of p.mapLayers) {
      const m = patternMeanAt(p, si, layer, where);
      if (!m) continue; // a layer may carry maps only at some steps
      maps.push({ stepIndex: si, layerIndex: p.layers.indexOf(layer), data: encodeArray(m, [N, N]) });
    }
  }
  return maps;
}

/** Fit `received` ([S, L, N] bytes per run) into `budget` by keeping evenly spaced steps, then layers. */
function fitReceived(plans: RunPlan[], budget: number, notes: SubsampleNote[]): void {
  for (const p of plans) {
    const S0 = p.stepIdx.length;
    const L0 = p.layers.length;
    const share = budget / plans.length;
    const perStep = b64Chars(L0 * p.N);
    if (S0 * perStep > share) {
      const keepS = Math.max(2, Math.floor(share / perStep));
      p.stepIdx = evenIndices(S0, keepS).map((i) => p.stepIdx[i]);
      notes.push({ axis: "step", kept: p.stepIdx.length, of: S0, how: `evenly spaced, ${p.label}` });
    }
    const perLayer = b64Chars(p.stepIdx.length * p.N);
    if (L0 * perLayer > share) {
      const keepL = Math.max(1, Math.floor(share / perLayer));
      p.layers = keptLayers(p, keepL);
      p.mapLayers = p.mapLayers.filter((l) => p.layers.includes(l));
      p.headMapLayers = p.headMapLayers.filter((l) => p.layers.includes(l));
      notes.push({ axis: "layer", kept: p.layers.length, of: L0, how: `evenly spaced, ${p.label}` });
    }
  }
}

/**
 * The layers a run keeps when the cap allows only `keep` of them: the layers whose full or per-head maps were
 * recorded first (an even spacing that skipped them would drop the maps the trace holds and leave the map
 * views empty), then evenly spaced ones from the rest; in layer order.
 */
function keptLayers(p: RunPlan, keep: number): number[] {
  const withMaps = p.layers.filter((l) => p.mapLayers.includes(l) || p.headMapLayers.includes(l));
  const first = withMaps.length > keep ? evenIndices(withMaps.length, keep).map((i) => withMaps[i]) : withMaps;
  const rest = p.layers.filter((l) => !first.includes(l));
  const room = Math.min(rest.length, keep - first.length);
  const more = room > 0 ? evenIndices(rest.length, room).map((i) => rest[i]) : [];
  return [...first, ...more].sort((a, b) => a - b);
}

/** Build the scrubber payload for one trace or several runs on the same prompt. */
export function scrubberPayload(traces: Trace | Trace[], opts: ScrubberOptions = {}): ScrubberPayload {
  const list = Array.isArray(traces) ? traces : [traces];
  if (list.length === 0) throw new SettingsError("no traces to show", { field: "traces", expected: "one or more traces", found: "[]" });
  const cap = opts.maxBytes ?? DEFAULT_PAYLOAD_CAP_BYTES;
  const notes: SubsampleNote[] = [];
  const plans = list.map((t, i) => {
    const label = opts.labels?.[i] ?? `${t.model.name} (${t.model.causal ? "ARM" : "MDM"})`;
    return { ...plan(t, label, opts, `traces[${i}]`), index: i };
  });
  // Fixed costs: tokens (JSON-escaped strings), unmaskedAt, prompt text.
  const fixed =
    list.reduce((a, t) => a + JSON.stringify(t.tokens).length + b64Chars(4 * t.tokens.length), 0) +
    2 * JSON.stringify(list[0].prompt.text).length;
  fitReceived(plans, 0.75 * (cap - fixed), notes);
  const runs = plans.map((p, i) => buildRun(p, opts, `traces[${i}]`));
  const payload: ScrubberPayload = {
    kind: "scrubber",
    version: 1,
    title: opts.title,
    prompt: list[0].prompt.text,
    runs,
    subsampled: notes,
  };
  // Sizes are measured, not estimated.
  // Per-head received first (every head's temporal view; a live kernel cannot serve it), then maps
  // and per-head maps (a live kernel serves the steps that do not fit).
  let left = cap - payloadSize(payload) - 1024;
  plans.forEach((p, i) =>
    addHeads(runs[i], p, Math.max(0, (p.mapLayers.length || p.headMapLayers.length ? (3 * left) / 4 : left) / plans.length), notes),
  );
  left = cap - payloadSize(payload) - 1024;
  plans.forEach((p, i) => (runs[i].maps = buildMaps(p, Math.max(0, left / 2 / plans.length), notes, `traces[${i}]`)));
  left = cap - payloadSize(payload) - 1024;
  plans.forEach((p, i) => addHeadMaps(runs[i], p, Math.max(0, left / plans.length), notes, `traces[${i}]`));
  // What did not fit stays in the kernel, served one (step, layer) at a time while it runs.
  const omitted = notes.some((n) => n.axis === "map step" || n.axis === "head-map step");
  if (opts.live !== false && omitted) payload.live = { key: registerLive(plans) };
  const warnings: string[] = [];
  for (const t of list)
    if (t.partial) warnings.push(`${t.model.name}: partial trace (interrupted run); only the steps written so far are shown`);
  if (warnings.length) payload.warnings = warnings;
  if (payloadSize(payload) > cap) {
    warnings.push(`payload is ${payloadSize(payload)} characters, over the cap of ${cap}: even one step per layer does not fit`);
    payload.warnings = warnings;
  }
  return payload;
}

/** One-line text/plain summary. */
export function describeScrubber(p: ScrubberPayload): string {
  const runs = p.runs.map((r) => `${r.label}: ${r.steps.length} steps × ${r.layers.length} layers × ${r.tokens.length} tokens`).join("; ");
  const sub = describeOmitted(p.subsampled, p.live !== undefined);
  return `Attention scrubber — ${runs}${sub ? `. ${sub}` : ""}`;
}

/** A displayable scrubber: `show()` sends the payload, a framed image of the temporal view and a text line. */
export class ScrubberFigure {
  constructor(readonly payload: ScrubberPayload) {}

  toMimeBundle(): { "text/plain": string; [mime: string]: unknown } {
    return {
      [MIME_SCRUBBER]: this.payload,
      "image/svg+xml": scrubberSvg(this.payload),
      "text/plain": describeScrubber(this.payload) + " — static image: last layer, mean over heads; open in JupyterLab to scrub",
    };
  }
}

/** Build a scrubber for one trace, or several runs on the same prompt (MDM and ARM side by side). */
export function scrubber(traces: Trace | Trace[], opts: ScrubberOptions = {}): ScrubberFigure {
  return new ScrubberFigure(scrubberPayload(traces, opts));
}
