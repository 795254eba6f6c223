/**
 * `--probes received,argmax,pattern … [--layers 0,5] [--heads 1,2] [--regions 0-4,4-10]` →
 * ProbeRequest. Words are the probe kinds of util/probes.ts (the part after `blocks.{l}.attn.`),
 * so the CLI, the ONNX output names and the trace keys share one vocabulary.
 */
import { PROBES, REQUEST_KEYS, type ProbeRequest, type RequestKey } from "../util/probes.js";
import { intList, UsageError } from "./args.js";

/** The `--probes` words: the probe table's CLI column, plus `none`. */
export const PROBE_WORDS: readonly string[] = [...new Set(PROBES.map((p) => p.cli)), "none"];

/** Token ranges "0-4,4-10" ([start, end)) → one-hot [batch, seq, region] (tokens outside every range: all zero). */
export function regionOneHot(command: string, spec: string, batch: number, seq: number): { regions: number; oneHot: Float32Array } {
  const ranges = spec.split(",").map((r) => {
    const m = /^\s*(\d+)-(\d+)\s*$/.exec(r);
    const [a, b] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
    if (!m || !(a < b) || b > seq) {
      throw new UsageError(`Bad --regions for \`floatscope ${command}\``, {
        field: "--regions",
        expected: `comma-separated token ranges start-end with start < end ≤ ${seq}`,
        found: JSON.stringify(r),
      });
    }
    return [a, b] as const;
  });
  const R = ranges.length;
  const oneHot = new Float32Array(batch * seq * R);
  for (let b = 0; b < batch; b++)
    ranges.forEach(([s, e], r) => {
      for (let t = s; t < e; t++) oneHot[(b * seq + t) * R + r] = 1;
    });
  return { regions: R, oneHot };
}

export function probeRequestFromFlags(
  command: string,
  o: { probes?: string; layers?: string; heads?: string; regions?: number },
  numLayers: number,
): ProbeRequest {
  const words = (o.probes ?? "received")
    .split(",")
    .map((w) => w.trim())
    .filter(Boolean);
  for (const w of words) {
    if (!(PROBE_WORDS as readonly string[]).includes(w)) {
      throw new UsageError(`Unknown probe for \`floatscope ${command}\``, {
        field: "--probes",
        expected: `comma-separated words from: ${PROBE_WORDS.join(", ")}`,
        found: JSON.stringify(w),
      });
    }
  }
  const layers = o.layers ? intList(command, "layers", o.layers) : Array.from({ length: numLayers }, (_, l) => l);
  const given = (key: RequestKey) => PROBES.some((p) => p.request === key && words.includes(p.cli));
  // A field that is a flag is on when one of its words is given; a field with settings has its
  // entry here (the compiler asks for one per such field of ProbeRequest).
  const settings: { [K in RequestKey as NonNullable<ProbeRequest[K]> extends boolean ? never : K]: () => ProbeRequest[K] } = {
    regionSum: () => {
      if (!o.regions)
        throw new UsageError("The region_sum probe needs --regions", { field: "--regions", expected: "token ranges such as 0-4,4-10" });
      return { regions: o.regions };
    },
    pattern: () => ({ layers, ...(o.heads ? { heads: intList(command, "heads", o.heads) } : {}) }),
    patternMean: () => ({ layers }),
    qk: () => {
      const has = (...clis: string[]) => clis.some((w) => words.includes(w));
      return { layers, postRope: has("q_rot", "k_rot"), preRope: has("q", "k") };
    },
  };
  const req: Record<string, unknown> = {};
  for (const key of REQUEST_KEYS) {
    if (!given(key)) continue;
    req[key] = key in settings ? settings[key as keyof typeof settings]() : true;
  }
  return req as ProbeRequest;
}
