/**
 * `--probes received,argmax,pattern … [--layers 0,5] [--heads 1,2] [--regions 0-4,4-10]` →
 * ProbeRequest. Words are the probe kinds of util/probes.ts (the part after `blocks.{l}.attn.`),
 * so the CLI, the ONNX output names and the trace keys share one vocabulary.
 */
import type { ProbeRequest } from "../util/probes.js";
import { intList, UsageError } from "./args.js";

export const PROBE_WORDS = ["received", "received_heads", "self", "argmax", "region_sum", "pattern", "pattern_mean", "q_rot", "k_rot", "q", "k", "none"] as const;

/** Token ranges "0-4,4-10" ([start, end)) → one-hot [batch, seq, region] (tokens outside every range: all zero). */
export function regionOneHot(command: string, spec: string, batch: number, seq: number): { regions: number; oneHot: Float32Array } {
  const ranges = spec.split(",").map((r) => {
    const m = /^\s*(\d+)-(\d+)\s*$/.exec(r);
    const [a, b] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
    if (!m || !(a < b) || b > seq) {
      throw new UsageError(`Bad --regions for \`floatscope ${command}\``, { field: "--regions", expected: `comma-separated token ranges start-end with start < end ≤ ${seq}`, found: JSON.stringify(r) });
    }
    return [a, b] as const;
  });
  const R = ranges.length;
  const oneHot = new Float32Array(batch * seq * R);
  for (let b = 0; b < batch; b++) ranges.forEach(([s, e], r) => {
    for (let t = s; t < e; t++) oneHot[(b * seq + t) * R + r] = 1;
  });
  return { regions: R, oneHot };
}

export function probeRequestFromFlags(command: string, o: { probes?: string; layers?: string; heads?: string; regions?: number }, numLayers: number): ProbeRequest {
  const words = (o.probes ?? "received").split(",").map((w) => w.trim()).filter(Boolean);
  for (const w of words) {
    if (!(PROBE_WORDS as readonly string[]).includes(w)) {
      throw new UsageError(`Unknown probe for \`floatscope ${command}\``, { field: "--probes", expected: `comma-separated words from: ${PROBE_WORDS.join(", ")}`, found: JSON.stringify(w) });
    }
  }
  const has = (w: string) => words.includes(w);
  const layers = o.layers ? intList(command, "layers", o.layers) : Array.from({ length: numLayers }, (_, l) => l);
  const req: ProbeRequest = {};
  if (has("received")) req.received = true;
  if (has("received_heads")) req.receivedHeads = true;
  if (has("self")) req.self = true;
  if (has("argmax")) req.argmax = true;
  if (has("region_sum")) {
    if (!o.regions) throw new UsageError("The region_sum probe needs --regions", { field: "--regions", expected: "token ranges such as 0-4,4-10" });
    req.regionSum = { regions: o.regions };
  }
  if (has("pattern")) req.pattern = { layers, ...(o.heads ? { heads: intList(command, "heads", o.heads) } : {}) };
  if (has("pattern_mean")) req.patternMean = { layers };
  const post = has("q_rot") || has("k_rot"), pre = has("q") || has("k");
  if (post || pre) req.qk = { layers, postRope: post, preRope: pre };
  return req;
}
