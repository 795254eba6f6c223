/**
 * What each trace record must contain, checked field by field when a trace is loaded. Every
 * failure is a `TraceFormatError` naming the file, the record and the field.
 */
import { TraceFormatError } from "../util/errors.js";
import {
  PROBE_AXES,
  PROBES,
  REQUEST_KEYS,
  parseProbeName,
  probeInfo,
  records,
  type Axis,
  type ProbeRequest,
  type ProbeTensor,
} from "../util/probes.js";
import type { RawTensor, RecordPlace } from "./codec.js";
import type { TraceModelInfo } from "./types.js";

export class Check {
  constructor(readonly place: RecordPlace) {}

  fail(field: string, expected: string, found: unknown): never {
    const f = typeof found === "string" ? found : (JSON.stringify(found)?.slice(0, 80) ?? String(found));
    throw new TraceFormatError("Trace record does not match the trace schema", {
      file: this.place.file,
      field: `record ${this.place.index} (byte ${this.place.offset}): ${field}`,
      expected,
      found: f,
    });
  }

  int(o: Record<string, unknown>, key: string, min = 0): number {
    const v = o[key];
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) this.fail(key, `an integer ≥ ${min}`, v);
    return v;
  }

  str(o: Record<string, unknown>, key: string): string {
    const v = o[key];
    if (typeof v !== "string") this.fail(key, "a string", v);
    return v;
  }

  obj(o: Record<string, unknown>, key: string): Record<string, unknown> {
    const v = o[key];
    if (v === null || typeof v !== "object" || Array.isArray(v)) this.fail(key, "an object", v);
    return v as Record<string, unknown>;
  }

  strings(o: Record<string, unknown>, key: string, length?: number): string[] {
    const v = o[key];
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) this.fail(key, "an array of strings", v);
    if (length !== undefined && v.length !== length) this.fail(key, `${length} strings`, `${v.length}`);
    return v;
  }

  ints(o: Record<string, unknown>, key: string, length?: number): number[] {
    const v = o[key];
    if (!Array.isArray(v) || !v.every((x) => Number.isSafeInteger(x))) this.fail(key, "an array of integers", v);
    if (length !== undefined && v.length !== length) this.fail(key, `${length} integers`, `${v.length}`);
    return v;
  }

  spans(o: Record<string, unknown>, key: string, length: number): [number, number][] {
    const v = o[key];
    const ok =
      Array.isArray(v) &&
      v.every((s) => Array.isArray(s) && s.length === 2 && s.every((x) => Number.isSafeInteger(x) && x >= 0) && s[0] <= s[1]);
    if (!ok) this.fail(key, "an array of [start, end] spans with 0 ≤ start ≤ end", v);
    if (v.length !== length) this.fail(key, `${length} spans`, `${v.length}`);
    return v as [number, number][];
  }

  /** A required tensor with the given dtype and shape. */
  tensor(tensors: Map<string, RawTensor>, name: string, dtype: "I32" | "F32", shape: number[]): RawTensor {
    const t = tensors.get(name);
    if (!t) this.fail(name, `a ${dtype}[${shape.join(",")}] tensor`, "missing");
    if (t.dtype !== dtype) this.fail(`${name}.dtype`, dtype, t.dtype);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i]))
      this.fail(`${name}.shape`, `[${shape.join(",")}]`, `[${t.shape.join(",")}]`);
    return t;
  }
}

/**
 * The largest sizes a meta record may claim. Nothing in the meta is backed by bytes of its own (a
 * meta-only file is a valid partial trace), so a claim is bounded by these limits — far above any
 * model (Llama-3.1-405B: 126 layers, 128 heads of 128) or run (contexts of 10^6 tokens) — before
 * anything sizes an array, a loop or a message from it. The records' own sizes need no limit: each
 * tensor is checked against the bytes its record holds.
 */
export const META_SIZE_LIMITS = {
  "model.numLayers": 1 << 16,
  "model.numHeads": 1 << 16,
  "model.numKvHeads": 1 << 16,
  "model.headDim": 1 << 16,
  "settings.genLength": 1 << 24,
  "settings.steps": 1 << 24,
  "settings.blockLength": 1 << 24,
} as const;

/**
 * Refuse meta sizes beyond `META_SIZE_LIMITS` (2^31 heads, genLength 2^40, 10^12 steps), naming
 * the field, the limit and the file's size. Settings are the run's config verbatim: a size there
 * that is not a number is left alone (hand-built traces), a number must be a whole count in range.
 */
export function checkMetaSizes(c: Check, model: TraceModelInfo, settings: unknown): void {
  const size = c.place.fileSize;
  const inFile = size === undefined ? "" : ` in a file of ${size} bytes`;
  const check = (field: keyof typeof META_SIZE_LIMITS, v: unknown) => {
    if (typeof v !== "number") return;
    const max = META_SIZE_LIMITS[field];
    if (!Number.isSafeInteger(v) || v < 0 || v > max)
      c.fail(field, `≤ ${max} (the trace format's limit${size === undefined ? "" : `; the file holds ${size} bytes`})`, `${v}${inFile}`);
  };
  for (const k of ["numLayers", "numHeads", "numKvHeads", "headDim"] as const) check(`model.${k}`, model[k]);
  if (settings !== null && typeof settings === "object") {
    const s = settings as Record<string, unknown>;
    for (const k of ["genLength", "steps", "blockLength"] as const) check(`settings.${k}`, s[k]);
  }
}

/**
 * Validate and collect the probe tensors of a step or final record: every listed probe is present,
 * has a canonical name, the axes of its kind (batch removed), F32 (I32 for argmax_key), and
 * sizes that agree with the model and the sequence length `seq`.
 */
export function readProbes(
  c: Check,
  axesByName: Record<string, unknown>,
  tensors: Map<string, RawTensor>,
  model: TraceModelInfo,
  seq: number,
  reserved: Set<string>,
): Map<string, ProbeTensor> {
  const out = new Map<string, ProbeTensor>();
  for (const name of tensors.keys()) {
    if (!reserved.has(name) && !Object.hasOwn(axesByName, name)) c.fail(name, "a tensor listed under json.probes", "an unlisted tensor");
  }
  for (const [name, axesV] of Object.entries(axesByName)) {
    const parsed = parseProbeName(name);
    // hasOwn: "blocks.0.attn.constructor" must not pass as a probe kind.
    if (!parsed || !Object.hasOwn(PROBE_AXES, parsed.kind)) c.fail(`probes.${name}`, "a canonical probe name blocks.{l}.attn.<kind>", name);
    if (parsed.layer >= model.numLayers) c.fail(`probes.${name}`, `layer < ${model.numLayers}`, String(parsed.layer));
    const want = PROBE_AXES[parsed.kind].filter((a) => a !== "batch");
    if (!Array.isArray(axesV) || axesV.length !== want.length || axesV.some((a, i) => a !== want[i])) {
      c.fail(`probes.${name}.axes`, JSON.stringify(want), axesV);
    }
    const t = tensors.get(name);
    if (!t) c.fail(name, "the probe tensor listed under json.probes", "missing");
    const dtype = probeInfo(parsed.kind)?.dtype === "int32" ? "I32" : "F32";
    if (t.dtype !== dtype) c.fail(`${name}.dtype`, dtype, t.dtype);
    if (t.shape.length !== want.length) c.fail(`${name}.shape`, `${want.length} dims (${want.join(", ")})`, `[${t.shape.join(",")}]`);
    want.forEach((axis, i) => {
      // `pattern` may hold a chosen subset of heads.
      const size = parsed.kind === "pattern" && axis === "head" ? undefined : axisSize(axis, model, seq);
      if (size !== undefined && t.shape[i] !== size) c.fail(`${name}.shape[${i}] (${axis})`, String(size), String(t.shape[i]));
    });
    out.set(name, { name, axes: want, dims: t.shape, data: t.data });
  }
  return out;
}

function axisSize(axis: Axis, m: TraceModelInfo, seq: number): number | undefined {
  switch (axis) {
    case "query":
    case "key":
      return seq;
    case "head":
      return m.numHeads;
    case "kvHead":
      return m.numKvHeads;
    case "dHead":
      return m.headDim;
    default:
      return undefined; // region counts are checked against each other by analyses
  }
}

function rangeText(layers: number[]): string {
  if (layers.length === 0) return "none";
  const sorted = [...layers].sort((a, b) => a - b);
  const contiguous = sorted.every((l, i) => l === sorted[0] + i);
  return contiguous ? `layers ${sorted[0]}…${sorted[sorted.length - 1]}` : `layers ${sorted.join(", ")}`;
}

/**
 * Cross-check a record's probes against the meta record (rules from the probe table, util/probes.ts):
 * a kind recorded for every layer must be there for exactly layers 0…numLayers−1 (a meta claiming 99
 * layers over records of 2 is caught here), and, with `request` (step records), what the meta's probe
 * request promises must be present: an every-layer request at least one of its kinds (argmax_key
 * stands for the argmax pair), a chosen-layer request each kind at each of its layers.
 */
export function checkProbeCoverage(
  c: Check,
  probes: Map<string, ProbeTensor>,
  model: TraceModelInfo,
  request?: Record<string, unknown>,
): void {
  const layersOf = new Map<string, number[]>();
  for (const name of probes.keys()) {
    const p = parseProbeName(name);
    if (p) layersOf.set(p.kind, [...(layersOf.get(p.kind) ?? []), p.layer]);
  }
  for (const info of PROBES) {
    if (info.layers !== "all") continue;
    const have = layersOf.get(info.kind);
    if (!have) continue;
    if (have.length !== model.numLayers) {
      c.fail(`blocks.*.attn.${info.kind}`, `layers 0…${model.numLayers - 1} (meta model.numLayers ${model.numLayers})`, rangeText(have));
    }
  }
  if (!request) return;
  for (const key of REQUEST_KEYS) {
    const v = request[key];
    if (v === undefined || v === false || v === null) continue;
    const infos = PROBES.filter((p) => p.request === key);
    if (infos[0].layers === "all") {
      if (!infos.some((p) => probes.has(`blocks.0.attn.${p.kind}`))) {
        c.fail(`blocks.0.attn.${infos[0].kind}`, `the probe the meta's request promises (probes.${key})`, "missing");
      }
      continue;
    }
    // The request is the trace's own JSON: check its shape before the table's rule reads it.
    const layers = (v as { layers?: unknown }).layers;
    if (!Array.isArray(layers)) c.fail(`meta probes.${key}.layers`, "an array of layer indices", layers);
    for (const l of layers) {
      if (!Number.isSafeInteger(l) || l < 0 || l >= model.numLayers)
        c.fail(`meta probes.${key}.layers`, `layers in [0, ${model.numLayers})`, String(l));
      for (const info of infos) {
        const name = `blocks.${l}.attn.${info.kind}`;
        if (records(request as ProbeRequest, info, l) && !probes.has(name))
          c.fail(name, `the probe the meta's request promises (probes.${key}.layers)`, "missing");
      }
    }
  }
}
