/**
 * The intervention fields of a trace, as JSON: the policy in the meta record and, per pass, what
 * it did, in the step/final record's json field `intervention` (docs/trace-format.md). They live in
 * the json, not in tensors, so readers that predate them read intervened traces (they ignore
 * unknown json fields) and see an ordinary run.
 */
import type { Check } from "./schema.js";
import type { PassIntervention, TraceIntervention } from "./types.js";

/** The json form of a pass's intervention (fields in a fixed order). */
export function passInterventionJson(p: PassIntervention): Record<string, unknown> {
  return { hidden: p.hidden, bias: p.bias, selfOnly: p.selfOnly, firstPass: p.firstPass };
}

function tuples(c: Check, v: unknown, field: string, width: number, L: number, H: number, T: number): number[][] {
  if (!Array.isArray(v)) c.fail(field, `an array of [layer, head, key${width > 3 ? ", value" : ""}]`, JSON.stringify(v)?.slice(0, 60));
  return v.map((t: unknown, i: number) => {
    const at = `${field}[${i}]`;
    if (!Array.isArray(t) || t.length !== width || !t.every((x) => typeof x === "number" && Number.isFinite(x))) {
      c.fail(at, `${width} finite numbers`, JSON.stringify(t)?.slice(0, 60));
    }
    const [l, h, k] = t as number[];
    if (!(Number.isInteger(l) && l >= 0 && l < L)) c.fail(at, `a layer in [0, ${L})`, String(l));
    if (!(Number.isInteger(h) && h >= -1 && h < H)) c.fail(at, `a head in [-1, ${H})`, String(h));
    if (!(Number.isInteger(k) && k >= 0 && k < T)) c.fail(at, `a key position in [0, ${T})`, String(k));
    return t as number[];
  });
}

/** Read and check a record's `intervention` json (undefined when absent). */
export function readPassIntervention(c: Check, j: Record<string, unknown>, L: number, H: number, T: number): PassIntervention | undefined {
  if (j.intervention === undefined) return undefined;
  const o = c.obj(j, "intervention");
  const selfOnly = c.ints(o, "selfOnly");
  for (const q of selfOnly) if (q < 0 || q >= T) c.fail("intervention.selfOnly", `positions in [0, ${T})`, String(q));
  if (typeof o.firstPass !== "boolean") c.fail("intervention.firstPass", "true or false", JSON.stringify(o.firstPass));
  return {
    hidden: tuples(c, o.hidden, "intervention.hidden", 3, L, H, T) as [number, number, number][],
    bias: tuples(c, o.bias, "intervention.bias", 4, L, H, T) as [number, number, number, number][],
    selfOnly,
    firstPass: o.firstPass as boolean,
  };
}

/** Read and check the meta record's `intervention` (undefined when absent). */
export function readTraceIntervention(c: Check, j: Record<string, unknown>): TraceIntervention | undefined {
  if (j.intervention === undefined) return undefined;
  const o = c.obj(j, "intervention");
  return { policy: c.str(o, "policy"), params: c.obj(o, "params") };
}
