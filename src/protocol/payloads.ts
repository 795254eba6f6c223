/**
 * The kernel ↔ widget contract: MIME types, the scrubber payload and the compact array encoding
 * it uses (every other figure travels as a plain-JSON `FigureDescription`, protocol/figure.ts).
 *
 * This file is shared verbatim by two builds: the library (`src/`, Node, compiled by tsc) and the
 * JupyterLab extension (`widgets/`, browser, bundled by rspack). So it is a leaf: no imports, no
 * Node or DOM APIs (base64 and float16 are written out here), and its exported types stay
 * compatible with TypeScript 5.0 (tslab compiles notebook cells with it).
 *
 * Why base64 inside JSON: display_data carries no binary buffers (only comms do, and tslab has no
 * comms), and nbformat accepts a JSON object only under an `application/…+json` key. Tensors are
 * therefore quantised (uint8/uint16 with scale + offset) or stored as float16/float32, little-endian,
 * and base64-encoded. Each payload also carries a `subsampled` list saying what was dropped to keep
 * the output under a size cap, so a view can say so instead of silently showing less.
 */

// ------------------------------------------------------------------------------------------------
// MIME types. The major version is part of the name (like Vega's `v5`): a breaking payload change
// gets a new type, and old notebooks keep rendering with the old renderer.

export const MIME_SCRUBBER = "application/vnd.floatscope.scrubber.v1+json";
/** Every other figure: a `FigureDescription` (protocol/figure.ts) that the widget draws with protocol/draw.ts. */
export const MIME_FIGURE = "application/vnd.floatscope.figure.v1+json";

/**
 * A slice of a scrubber's data sent on demand by the live kernel (never saved in a notebook: the
 * widget asks for it with `liveSliceCode` and reads the reply off the kernel's IOPub channel).
 */
export const MIME_SCRUBBER_SLICE = "application/vnd.floatscope.scrubber-slice.v1+json";

/** The MIME types the JupyterLab extension renders. */
export const FLOATSCOPE_MIME_TYPES = [MIME_SCRUBBER, MIME_FIGURE] as const;

/**
 * Default cap on the encoded size of one payload (characters of JSON). 8 MiB holds the head-mean
 * received attention of 1024 tokens × 32 layers × 64 steps (2.8 MB) plus a few full maps; beyond
 * it builders subsample and say so in `subsampled`.
 */
export const DEFAULT_PAYLOAD_CAP_BYTES = 8 * 1024 * 1024;

// ------------------------------------------------------------------------------------------------
// Encoded arrays

export type PayloadDType = "uint8" | "uint16" | "int32" | "float16" | "float32";

/**
 * A row-major tensor, base64 of its little-endian bytes.
 * For uint8/uint16 with `scale`: value = offset + scale · code; the code `missing` (if set) means
 * "no value" and decodes to NaN (e.g. keys an ARM had not generated yet at that step).
 * int32 is exact (token ids, step indices). float16/float32 decode as they are (NaN allowed).
 */
export interface EncodedArray {
  dtype: PayloadDType;
  shape: number[];
  scale?: number;
  offset?: number;
  missing?: number;
  b64: string;
}

/** One thing a builder dropped to stay under the cap, e.g. {axis: "step", kept: 32, of: 128, how: "every 4th"}. */
export interface SubsampleNote {
  /** What was reduced: an axis word ("step", "layer", "head", "key") or a field name ("pattern"). */
  axis: string;
  kept: number;
  of: number;
  how: string;
}

/** Fields every payload has. */
export interface PayloadBase {
  /** Format version inside the MIME major version (additive changes only). */
  version: 1;
  title?: string;
  /** Empty when nothing was dropped. */
  subsampled: SubsampleNote[];
  /** Non-fatal remarks the view shows as "N warnings". */
  warnings?: string[];
}

// ------------------------------------------------------------------------------------------------
// Scrubber (attention over denoising steps × layers × heads)

/** One model run on one prompt. Two runs (MDM and ARM on the same prompt) render side by side. */
export interface ScrubberRun {
  /** "tiny-llada (MDM)". */
  label: string;
  family: string;
  causal: boolean;
  /** Token strings of the final sequence, [seq]. Untrusted text: views must escape it. */
  tokens: string[];
  promptLength: number;
  /** Step at which each position was unmasked/generated, −1 for prompt positions, [seq] (int32). */
  unmaskedAt: EncodedArray;
  /** The run's step index of each kept step, [step]. */
  steps: number[];
  /** Model layer index of each kept layer, [layer]. */
  layers: number[];
  /** Number of attention heads in the model. */
  numHeads: number;
  /** Model head index of each kept head in `receivedHeads`, [head]; empty when absent. */
  heads: number[];
  /** Head-mean attention received by each key (column mean over query rows), [step, layer, key]. */
  received: EncodedArray;
  /** Per-head attention received, [step, layer, head, key]; absent when not recorded or over cap. */
  receivedHeads?: EncodedArray;
  /**
   * Floating anchors, sparse: flat indices (step·L + layer)·N + key of every (step, layer, key) that
   * is an anchor under `anchorRule`, ascending, int32 [count]. Computed in the kernel from
   * full-precision values (analysis/anchors.ts), so the view never re-derives it from quantised data.
   */
  anchors: EncodedArray;
  /** Words describing the anchor rule, e.g. "c_j > mean + 3·std (population), per step and layer". */
  anchorRule: string;
  /** Full attention maps for some (step, layer) pairs, head-mean unless `head` is given. */
  maps: ScrubberMap[];
  /**
   * Per-head maps for the head view and the layers × heads grid: for some (step, layer) pairs, every
   * kept head of `headMapHeads`, [head, query, key]. Absent when `pattern` was not recorded.
   */
  headMaps?: ScrubberHeadMaps[];
  /** Model head index of each head in `headMaps`' first axis. */
  headMapHeads?: number[];
  /**
   * What this run's trace did not record that a view needs, in words that name the setting to turn
   * on (e.g. full maps → `decodeQa(…, { viewProbes: "all" })`). Shown where the view would be.
   */
  missing?: { view: "maps" | "heads" | "headMaps"; note: string }[];
  /** Named prompt spans (query, doc 3, gold…) for axis bands. Token span [start, end). */
  regions: { name: string; tokens: [number, number] }[];
  /** Model name ("tiny-llada", "SmolLM2-135M-Instruct"); absent in payloads older than the compare layout. */
  model?: string;
  /** Model tier ("tiny", "real", "real-base") when known. */
  tier?: string;
  /** "MDM" (masked diffusion) or "ARM" (autoregressive). */
  paradigm?: "MDM" | "ARM";
  /** The model's number of layers (relative depth of `layers` when runs of different depth share one control). */
  numLayers?: number;
}

/**
 * The handle a live kernel serves the rest of a payload through: every (step, layer)'s full map and
 * per-head maps, one slice at a time (`ScrubberSlice`). Only valid while the kernel that built the
 * payload still runs; a saved notebook without a kernel shows what was embedded.
 */
export interface ScrubberLive {
  /** Key of the traces in the kernel's registry. */
  key: string;
}

/** The data of one run at one (step, layer), sent by the kernel on demand. */
export interface ScrubberSlice {
  key: string;
  run: number;
  /** Indices into the run's kept steps and layers. */
  stepIndex: number;
  layerIndex: number;
  /** Head-mean map [query, key], when the trace recorded it. */
  map?: EncodedArray;
  /** Per-head maps [head, query, key] (heads: the run's `headMapHeads`), when recorded. */
  headMaps?: EncodedArray;
  /** Set when the kernel cannot serve it (restarted, key unknown): the reason, in words. */
  error?: string;
  /**
   * The following steps of the same run and layer, sent with this one (up to LIVE_BATCH_BYTES in all): each request
   * is one execution in the kernel, slow on a busy machine, so a reader stepping forward (or a test walking every
   * step) needs one request per several steps instead of one per step.
   */
  more?: ScrubberSlice[];
}

/** Characters of JSON one live reply may carry, the requested slice and the following steps' (`ScrubberSlice.more`). */
export const LIVE_BATCH_BYTES = 2 * 1024 * 1024;

/** `Symbol.for` name of the kernel-side function that serves slices (set by figures/scrubber.ts). */
export const LIVE_SLICE_GLOBAL = "floatscope.scrubber.slice";

/** Kernel code (TypeScript/JavaScript) that displays one slice as MIME_SCRUBBER_SLICE; arguments are JSON-quoted. */
export function liveSliceCode(key: string, run: number, stepIndex: number, layerIndex: number): string {
  const args = [JSON.stringify(key), run | 0, stepIndex | 0, layerIndex | 0].join(", ");
  return `(globalThis as any)[Symbol.for(${JSON.stringify(LIVE_SLICE_GLOBAL)})]?.(${args}) ?? console.error("floatscope: no live scrubber data in this kernel (re-run the cell)")`;
}

/** One full map P[query, key] (query rows × key columns). */
export interface ScrubberMap {
  /** Index into the run's kept `steps` (not the raw step number). */
  stepIndex: number;
  /** Index into the run's kept `layers`. */
  layerIndex: number;
  /** Model head index, or absent for the mean over heads. */
  head?: number;
  /** [query, key]. */
  data: EncodedArray;
}

export interface ScrubberHeadMaps {
  /** Index into the run's kept `steps`. */
  stepIndex: number;
  /** Index into the run's kept `layers`. */
  layerIndex: number;
  /** [head, query, key]. */
  data: EncodedArray;
}

export interface ScrubberPayload extends PayloadBase {
  kind: "scrubber";
  /** The prompt text (untrusted). */
  prompt: string;
  runs: ScrubberRun[];
  /** Present when a live kernel can serve every (step, layer) on demand (figures/scrubber.ts). */
  live?: ScrubberLive;
}

export type FloatscopePayload = ScrubberPayload;

// ------------------------------------------------------------------------------------------------
// Errors (plain class: this leaf cannot import util/errors)

export class PayloadError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(field === undefined ? message : `${message} (field: ${field})`);
    this.name = "PayloadError";
  }
}

// ------------------------------------------------------------------------------------------------
// base64 (RFC 4648, with padding)

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_INDEX = (() => {
  const t = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) t[B64.charCodeAt(i)] = i;
  return t;
})();

export function bytesToBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  const chunk = 3 * 4096;
  for (let start = 0; start < bytes.length; start += chunk) {
    const end = Math.min(bytes.length, start + chunk);
    let s = "";
    let i = start;
    for (; i + 2 < end; i += 3) {
      const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      s += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
    }
    if (end - i === 1) {
      const n = bytes[i] << 16;
      s += B64[n >> 18] + B64[(n >> 12) & 63] + "==";
    } else if (end - i === 2) {
      const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
      s += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + "=";
    }
    parts.push(s);
  }
  return parts.join("");
}

export function base64ToBytes(b64: string): Uint8Array {
  const clean = b64.replace(/[\s]/g, "");
  if (clean.length % 4 !== 0) throw new PayloadError(`base64 length ${clean.length} is not a multiple of 4`, "b64");
  const pad = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  const out = new Uint8Array((clean.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < clean.length; i += 4) {
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const c = clean.charCodeAt(i + k);
      const v = c === 61 /* = */ ? 0 : c < 128 ? B64_INDEX[c] : -1;
      if (v < 0) throw new PayloadError(`invalid base64 character at ${i + k}`, "b64");
      n = (n << 6) | v;
    }
    if (o < out.length) out[o++] = (n >> 16) & 255;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// float16 (IEEE 754 binary16), round to nearest even

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function float32ToFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // Inf / NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow → Inf
  if (e <= 0) {
    if (e < -10) return sign; // underflow → ±0
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++; // may carry into the exponent: still correct
  return sign | half;
}

export function float16BitsToFloat32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// ------------------------------------------------------------------------------------------------
// Encode / decode

export interface EncodeOptions {
  dtype?: PayloadDType;
  /** Fixed value range for uint8/uint16 quantisation (default: finite min/max of the data). */
  range?: [number, number];
}

function product(shape: number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * Encode `values` (row-major over `shape`). Default dtype uint8: 8-bit quantisation, max error
 * (max − min)/508. NaN is kept as the `missing` code 255 (uint8) / 65535 (uint16).
 */
export function encodeArray(values: ArrayLike<number>, shape: number[], options: EncodeOptions = {}): EncodedArray {
  const dtype = options.dtype ?? "uint8";
  const n = product(shape);
  if (values.length !== n) {
    throw new PayloadError(`array has ${values.length} values but shape [${shape.join(", ")}] needs ${n}`, "shape");
  }
  let bytes: Uint8Array;
  const out: EncodedArray = { dtype, shape: [...shape], b64: "" };
  if (dtype === "float32") {
    const a = Float32Array.from(values);
    bytes = new Uint8Array(a.buffer);
  } else if (dtype === "int32") {
    const a = Int32Array.from(values);
    bytes = new Uint8Array(a.buffer);
  } else if (dtype === "float16") {
    const a = new Uint16Array(n);
    for (let i = 0; i < n; i++) a[i] = float32ToFloat16Bits(values[i]);
    bytes = new Uint8Array(a.buffer);
  } else {
    const top = dtype === "uint8" ? 255 : 65535;
    let lo = Infinity;
    let hi = -Infinity;
    let anyMissing = false;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (Number.isNaN(v)) anyMissing = true;
      else if (Number.isFinite(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    if (options.range) [lo, hi] = options.range;
    if (!(lo <= hi)) [lo, hi] = [0, 0];
    const levels = anyMissing ? top - 1 : top;
    const scale = hi > lo ? (hi - lo) / levels : 1;
    const a = dtype === "uint8" ? new Uint8Array(n) : new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (Number.isNaN(v)) a[i] = top;
      else a[i] = Math.max(0, Math.min(levels, Math.round((v - lo) / scale)));
    }
    bytes = new Uint8Array(a.buffer);
    out.scale = scale;
    out.offset = lo;
    if (anyMissing) out.missing = top;
  }
  out.b64 = bytesToBase64(bytes);
  return out;
}

function checkEncoded(e: EncodedArray, field: string): number {
  if (!e || typeof e.b64 !== "string" || !Array.isArray(e.shape)) {
    throw new PayloadError("expected an encoded array {dtype, shape, b64}", field);
  }
  return product(e.shape);
}

const WIDTH: Record<PayloadDType, number> = { uint8: 1, uint16: 2, int32: 4, float16: 2, float32: 4 };

/** Raw bytes of an encoded array, checked against its shape and dtype. */
function rawBytes(e: EncodedArray, field: string): { bytes: Uint8Array; n: number } {
  const n = checkEncoded(e, field);
  const width = WIDTH[e.dtype];
  if (width === undefined) throw new PayloadError(`unknown dtype ${JSON.stringify(e.dtype)}`, field);
  const decoded = base64ToBytes(e.b64);
  if (decoded.length !== n * width) {
    throw new PayloadError(`holds ${decoded.length} bytes, but ${e.dtype} shape [${e.shape.join(", ")}] needs ${n * width}`, field);
  }
  // Copy into a fresh, aligned buffer so typed views of width 2/4 are legal.
  const bytes = new Uint8Array(decoded.length);
  bytes.set(decoded);
  return { bytes, n };
}

/** Decode to float32 values (quantised codes → offset + scale·code; `missing` → NaN). */
export function decodeArray(e: EncodedArray, field = "array"): Float32Array {
  const { bytes, n } = rawBytes(e, field);
  const out = new Float32Array(n);
  const buf = bytes.buffer;
  switch (e.dtype) {
    case "float32":
      out.set(new Float32Array(buf));
      break;
    case "int32":
      out.set(new Int32Array(buf));
      break;
    case "float16": {
      const a = new Uint16Array(buf);
      for (let i = 0; i < n; i++) out[i] = float16BitsToFloat32(a[i]);
      break;
    }
    default: {
      const a = e.dtype === "uint8" ? bytes : new Uint16Array(buf);
      const scale = e.scale ?? 1;
      const offset = e.offset ?? 0;
      const missing = e.missing ?? -1;
      for (let i = 0; i < n; i++) out[i] = a[i] === missing ? NaN : offset + scale * a[i];
    }
  }
  return out;
}

/** Decode an int32 array exactly. */
export function decodeInt32(e: EncodedArray, field = "array"): Int32Array {
  if (e.dtype !== "int32") throw new PayloadError(`expected dtype int32, found ${e.dtype}`, field);
  const { bytes } = rawBytes(e, field);
  return new Int32Array(bytes.buffer);
}

/**
 * Raw quantisation codes of a uint8 array, without scaling (views that colour-map 0..255 directly
 * skip a float pass). `scale`/`offset`/`missing` still describe the meaning.
 */
export function decodeUint8Codes(e: EncodedArray, field = "array"): Uint8Array {
  if (e.dtype !== "uint8") throw new PayloadError(`expected dtype uint8, found ${e.dtype}`, field);
  return rawBytes(e, field).bytes;
}

/** Number of characters this payload adds to a notebook (its JSON length). */
export function payloadSize(payload: unknown): number {
  return JSON.stringify(payload).length;
}

/** One line for the view and for text/plain: "subsampled: step 32 of 128 (every 4th); …". */
export function describeSubsampling(notes: SubsampleNote[]): string {
  if (notes.length === 0) return "";
  return "subsampled: " + notes.map((s) => `${s.axis} ${s.kept} of ${s.of} (${s.how})`).join("; ");
}

/**
 * Plain words for what a saved output leaves out (the view's note): e.g. "This output holds full
 * maps for 2 of 32 steps. While the notebook's kernel runs, the other steps load on demand; in a
 * saved notebook they need the cell run again."
 */
export function describeOmitted(notes: SubsampleNote[], live: boolean): string {
  if (notes.length === 0) return "";
  const words: Record<string, (k: number, of: number) => string> = {
    step: (k, of) => `${k} of ${of} steps`,
    layer: (k, of) => `${k} of ${of} layers`,
    head: (k, of) => `per-head received attention for ${k} of ${of} heads`,
    "map step": (k, of) => `full maps at ${k} of ${of} steps`,
    "head-map step": (k, of) => `per-head maps (the head view) at ${k} of ${of} steps`,
  };
  // one phrase per kind (several runs: the smallest share kept)
  const byAxis = new Map<string, SubsampleNote>();
  for (const n of notes) {
    const had = byAxis.get(n.axis);
    if (!had || n.kept / Math.max(1, n.of) < had.kept / Math.max(1, had.of)) byAxis.set(n.axis, n);
  }
  const parts = [...byAxis.values()].map((n) => (words[n.axis] ?? ((k: number, of: number) => `${n.axis}: ${k} of ${of}`))(n.kept, n.of));
  const maps = [...byAxis.keys()].filter((a) => a === "map step" || a === "head-map step");
  const rest = [...byAxis.keys()].filter((a) => a !== "map step" && a !== "head-map step");
  const out = [`To stay small, this output holds ${parts.join(", ")}.`];
  if (maps.length)
    out.push(
      live
        ? "The maps of the other steps load from the kernel when you move to them, while the notebook's kernel runs; a saved copy without a kernel shows only what is held here (run the cell to see every step)."
        : "Run the cell with a larger maxBytes to keep more maps.",
    );
  if (rest.length) out.push("The steps, layers or heads left out need a larger maxBytes.");
  return out.join(" ");
}

/** Evenly spaced indices 0..of−1, `kept` of them, always including the first and last. */
export function evenIndices(of: number, kept: number): number[] {
  if (kept >= of) return Array.from({ length: of }, (_, i) => i);
  if (kept <= 1) return of > 0 ? [of - 1] : [];
  const out: number[] = [];
  for (let i = 0; i < kept; i++) {
    const v = Math.round((i * (of - 1)) / (kept - 1));
    if (out.length === 0 || out[out.length - 1] !== v) out.push(v);
  }
  return out;
}
