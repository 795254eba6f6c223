/**
 * Decoded scrubber data for one run: typed arrays with their shapes, plus the derived views the
 * canvas needs (the steps × positions heat of one layer and head, token states at a step).
 * Decoding happens once per render; derived arrays are cached by (layer, head).
 */
import {
  decodeArray,
  decodeInt32,
  displayTokens,
  PayloadError,
  type ScrubberPayload,
  type ScrubberRun,
  type ScrubberSlice,
} from "../protocol.js";
import type { Extent } from "./state.js";

export type TokenState = "prompt" | "masked" | "unmasked";

export interface DecodedMap {
  /** Side length (query = key = n). */
  n: number;
  /** [query, key]. */
  data: Float32Array;
}

/** Per-head maps of one (step, layer): [head, query, key], heads = `heads` (model indices). */
export interface DecodedHeadMaps {
  n: number;
  heads: number[];
  data: Float32Array;
}

export class RunData {
  readonly run: ScrubberRun;
  /** Kept steps S, kept layers L, kept heads H (0 when only the mean exists), positions N. */
  readonly S: number;
  readonly L: number;
  readonly H: number;
  readonly N: number;
  /** [step, layer, key]. */
  readonly received: Float32Array;
  /** [step, layer, head, key], or null. */
  readonly receivedHeads: Float32Array | null;
  /** [step, layer, key], 1 = floating anchor. */
  readonly anchors: Uint8Array;
  /** [key]. */
  readonly unmaskedAt: Int32Array;
  /** Token text as readers see it (byte-level BPE / SentencePiece markers → visible spaces and newlines): every label, tooltip and head view. */
  readonly tokens: string[];
  private readonly maps = new Map<string, { encoded: ScrubberRun["maps"][number]; decoded?: DecodedMap }>();
  private readonly heatCache = new Map<string, { heat: Float32Array; min: number; max: number }>();
  private readonly headMaps = new Map<string, { encoded: NonNullable<ScrubberRun["headMaps"]>[number]; decoded?: DecodedHeadMaps }>();

  constructor(run: ScrubberRun, index = 0) {
    const where = `runs[${index}]`;
    this.run = run;
    if (!Array.isArray(run.tokens)) throw new PayloadError("expected a list of token strings", `${where}.tokens`);
    this.tokens = displayTokens(run.tokens);
    this.S = run.steps.length;
    this.L = run.layers.length;
    this.N = run.tokens.length;
    const shape = run.received.shape;
    if (shape.length !== 3 || shape[0] !== this.S || shape[1] !== this.L || shape[2] !== this.N) {
      throw new PayloadError(
        `shape [${shape.join(", ")}] does not match [steps ${this.S}, layers ${this.L}, tokens ${this.N}]`,
        `${where}.received`,
      );
    }
    this.received = decodeArray(run.received, `${where}.received`);
    if (run.receivedHeads) {
      const hs = run.receivedHeads.shape;
      if (hs.length !== 4 || hs[0] !== this.S || hs[1] !== this.L || hs[3] !== this.N || hs[2] !== run.heads.length) {
        throw new PayloadError(`shape [${hs.join(", ")}] does not match [step, layer, head, key]`, `${where}.receivedHeads`);
      }
      this.receivedHeads = decodeArray(run.receivedHeads, `${where}.receivedHeads`);
      this.H = run.heads.length;
    } else {
      this.receivedHeads = null;
      this.H = 0;
    }
    this.anchors = new Uint8Array(this.S * this.L * this.N);
    for (const flat of decodeInt32(run.anchors, `${where}.anchors`)) {
      if (flat < 0 || flat >= this.anchors.length) {
        throw new PayloadError(`anchor index ${flat} outside [step, layer, key] = [${this.S}, ${this.L}, ${this.N}]`, `${where}.anchors`);
      }
      this.anchors[flat] = 1;
    }
    this.unmaskedAt = decodeInt32(run.unmaskedAt, `${where}.unmaskedAt`);
    if (this.unmaskedAt.length !== this.N) throw new PayloadError("must have one entry per token", `${where}.unmaskedAt`);
    for (const m of run.maps) this.maps.set(mapKey(m.stepIndex, m.layerIndex, m.head), { encoded: m });
    for (const m of run.headMaps ?? []) {
      const sh = m.data.shape;
      if (sh.length !== 3 || sh[0] !== (run.headMapHeads ?? []).length || sh[1] !== this.N || sh[2] !== this.N)
        throw new PayloadError(
          `shape [${sh.join(", ")}] does not match [heads ${(run.headMapHeads ?? []).length}, ${this.N}, ${this.N}]`,
          `${where}.headMaps`,
        );
      this.headMaps.set(mapKey(m.stepIndex, m.layerIndex, undefined), { encoded: m });
    }
  }

  /** Whether any per-head maps (head view, layers × heads grid) were sent, or can be fetched (`live`). */
  get hasHeadMaps(): boolean {
    return this.headMaps.size > 0 || this.liveHeadMaps;
  }

  /** Set by the view when the payload's kernel can serve per-head maps on demand. */
  liveHeadMaps = false;

  /** (step, layer) pairs fetched from the kernel (or refused, with the reason). */
  private readonly fetched = new Map<string, string | null>();

  /** Whether (step, layer) was already fetched; its error text when the kernel refused. */
  fetchState(step: number, layer: number): { done: boolean; error: string | null } {
    const k = mapKey(this.clampStep(step), this.clampLayer(layer), undefined);
    return { done: this.fetched.has(k), error: this.fetched.get(k) ?? null };
  }

  /** Whether the embedded data lacks the full map or the per-head maps of (step, layer). */
  lacks(step: number, layer: number): boolean {
    const k = mapKey(this.clampStep(step), this.clampLayer(layer), undefined);
    return !this.maps.has(k) || !this.headMaps.has(k);
  }

  /** Add a slice the kernel sent: its map and per-head maps become part of this run's data. */
  addSlice(slice: ScrubberSlice): void {
    const k = mapKey(slice.stepIndex, slice.layerIndex, undefined);
    this.fetched.set(k, slice.error ?? null);
    if (slice.map && !this.maps.has(k))
      this.maps.set(k, { encoded: { stepIndex: slice.stepIndex, layerIndex: slice.layerIndex, data: slice.map } });
    if (slice.headMaps && !this.headMaps.has(k)) {
      const sh = slice.headMaps.shape;
      if (sh.length === 3 && sh[1] === this.N && sh[2] === this.N)
        this.headMaps.set(k, { encoded: { stepIndex: slice.stepIndex, layerIndex: slice.layerIndex, data: slice.headMaps } });
    }
  }

  /** What the trace did not record for `view`, naming the setting that records it (or null). */
  missing(view: "maps" | "heads" | "headMaps"): string | null {
    return this.run.missing?.find((m) => m.view === view)?.note ?? null;
  }

  /** Per-head maps at (step, layer), decoded once, or null. */
  headMapsAt(step: number, layer: number): DecodedHeadMaps | null {
    const entry = this.headMaps.get(mapKey(this.clampStep(step), this.clampLayer(layer), undefined));
    if (!entry) return null;
    if (!entry.decoded)
      entry.decoded = { n: this.N, heads: this.run.headMapHeads ?? [], data: decodeArray(entry.encoded.data, "headMaps") };
    return entry.decoded;
  }

  /** Kept steps (indices) with per-head maps for this layer. */
  headMapSteps(layer: number): number[] {
    const l = this.clampLayer(layer);
    return [...new Set([...this.headMaps.values()].filter((m) => m.encoded.layerIndex === l).map((m) => m.encoded.stepIndex))].sort(
      (a, b) => a - b,
    );
  }

  get extent(): Extent {
    return { steps: this.S, layers: this.L, heads: this.H, positions: this.N };
  }

  /** Clamp shared slider indices to this run. */
  clampStep(step: number): number {
    return Math.max(0, Math.min(this.S - 1, step));
  }
  clampLayer(layer: number): number {
    return Math.max(0, Math.min(this.L - 1, layer));
  }
  /** Head index valid for this run, or "mean". */
  clampHead(head: number | "mean"): number | "mean" {
    if (head === "mean" || this.H === 0) return "mean";
    return Math.max(0, Math.min(this.H - 1, head));
  }

  /** Received attention at (step, layer, head|mean) for every key, [key] (a view, not a copy). */
  receivedRow(step: number, layer: number, head: number | "mean"): Float32Array {
    const s = this.clampStep(step);
    const l = this.clampLayer(layer);
    const h = this.clampHead(head);
    if (h === "mean" || !this.receivedHeads) {
      const o = (s * this.L + l) * this.N;
      return this.received.subarray(o, o + this.N);
    }
    const o = ((s * this.L + l) * this.H + h) * this.N;
    return this.receivedHeads.subarray(o, o + this.N);
  }

  /** The temporal heat of one layer and head: [step, key], with its finite min and max. */
  temporal(layer: number, head: number | "mean"): { heat: Float32Array; min: number; max: number } {
    const l = this.clampLayer(layer);
    const h = this.clampHead(head);
    const key = `${l}:${h}`;
    const hit = this.heatCache.get(key);
    if (hit) return hit;
    const heat = new Float32Array(this.S * this.N);
    let min = Infinity;
    let max = -Infinity;
    for (let s = 0; s < this.S; s++) {
      const row = this.receivedRow(s, l, h);
      heat.set(row, s * this.N);
      for (let j = 0; j < this.N; j++) {
        const v = row[j];
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
    if (!(min <= max)) [min, max] = [0, 0];
    const out = { heat, min, max };
    this.heatCache.set(key, out);
    return out;
  }

  /** 1 where key j is a floating anchor at (step, layer), [key] (a view). */
  anchorRow(step: number, layer: number): Uint8Array {
    const o = (this.clampStep(step) * this.L + this.clampLayer(layer)) * this.N;
    return this.anchors.subarray(o, o + this.N);
  }

  /**
   * State of position j in the canvas fed to the model at kept step `step`: prompt, still masked
   * (it is unmasked at this step or later), or already unmasked.
   */
  tokenState(step: number, j: number): TokenState {
    const at = this.unmaskedAt[j];
    if (at < 0) return "prompt";
    return at >= this.run.steps[this.clampStep(step)] ? "masked" : "unmasked";
  }

  /** Does a full map exist for (step, layer, head)? Falls back to the head mean when the head has none. */
  map(step: number, layer: number, head: number | "mean"): DecodedMap | null {
    const s = this.clampStep(step);
    const l = this.clampLayer(layer);
    const h = this.clampHead(head);
    if (h !== "mean") {
      const own = this.headSlice(s, l, this.run.heads[h]);
      if (own) return own;
    }
    const entry = (h !== "mean" ? this.maps.get(mapKey(s, l, this.run.heads[h])) : undefined) ?? this.maps.get(mapKey(s, l, undefined));
    if (!entry) return null;
    if (!entry.decoded) {
      const shape = entry.encoded.data.shape;
      if (shape.length !== 2 || shape[0] !== shape[1]) {
        throw new PayloadError(`map shape [${shape.join(", ")}] is not square [query, key]`, "maps");
      }
      entry.decoded = { n: shape[0], data: decodeArray(entry.encoded.data, "maps") };
    }
    return entry.decoded;
  }

  private readonly sliceCache = new Map<string, DecodedMap>();

  /** One model head's [query, key] map out of the per-head maps at (step, layer), or null. */
  headSlice(step: number, layer: number, modelHead: number): DecodedMap | null {
    const key = `${step}:${layer}:${modelHead}`;
    const hit = this.sliceCache.get(key);
    if (hit) return hit;
    const hm = this.headMapsAt(step, layer);
    const hi = hm ? hm.heads.indexOf(modelHead) : -1;
    if (!hm || hi < 0) return null;
    const nn = hm.n * hm.n;
    const out = { n: hm.n, data: hm.data.subarray(hi * nn, (hi + 1) * nn) };
    if (this.sliceCache.size > 256) this.sliceCache.clear();
    this.sliceCache.set(key, out);
    return out;
  }

  /** Kept steps (indices) that have a map for this layer: shown as ticks on the step slider. */
  mapSteps(layer: number): number[] {
    const l = this.clampLayer(layer);
    const out = new Set<number>();
    for (const m of this.maps.values()) if (m.encoded.layerIndex === l && m.encoded.head === undefined) out.add(m.encoded.stepIndex);
    return [...out].sort((a, b) => a - b);
  }
}

function mapKey(step: number, layer: number, head: number | undefined): string {
  return `${step}:${layer}:${head ?? "mean"}`;
}

/** Validate the envelope and decode every run. Throws PayloadError naming the field. */
export function decodeScrubber(payload: ScrubberPayload): RunData[] {
  if (!payload || payload.kind !== "scrubber") throw new PayloadError('expected kind "scrubber"', "kind");
  if (!Array.isArray(payload.runs) || payload.runs.length === 0) throw new PayloadError("expected at least one run", "runs");
  return payload.runs.map((r, i) => new RunData(r, i));
}
