/**
 * The key/value cache of a causal graph (`BuildOptions.kvCache`): the graph runs S new tokens after
 * P tokens it has already run, whose keys (after RoPE) and values come in as inputs, and hands every
 * key and value back for the next run. Autoregressive decoding then costs one forward over the
 * prompt (P = 0: an ordinary forward) and one single-row forward per generated token, instead of a
 * forward over the whole prefix per token.
 *
 * Per layer l: inputs `past.<l>.key` and `past.<l>.value` [batch, past, kvHead, headDim] (past may be
 * 0), outputs `present.<l>.key` / `present.<l>.value` = concat(past, new) along the sequence axis.
 * `attention_mask` then covers all P + S keys and `position_ids` are the new tokens' positions, so
 * RoPE needs nothing else. New row i (absolute column P + i) sees key k when k ≤ P + i and k is real.
 *
 * Only for probe-free, intervention-free causal graphs: a probe reads a whole [query, key] attention
 * map (or the query rows of every earlier token), which a cached run does not compute.
 */
import { SettingsError } from "../../util/errors.js";
import type { GraphBuilder } from "../onnx/builder.js";
import { probeOutputs } from "../probes.js";
import type { ModelSpec } from "../spec.js";
import type { ProbeRequest } from "../../util/probes.js";

/** The cache's graph input and output names of layer l. */
export const KV_CACHE_NAMES = {
  pastKey: (l: number) => `past.${l}.key`,
  pastValue: (l: number) => `past.${l}.value`,
  presentKey: (l: number) => `present.${l}.key`,
  presentValue: (l: number) => `present.${l}.value`,
} as const;

/** What a cached graph cannot have, as a SettingsError naming the option (undefined: none). */
export function kvCacheConflict(spec: ModelSpec, o: { probes?: ProbeRequest; interventions?: boolean }): SettingsError | undefined {
  const found = !spec.causal
    ? `a bidirectional ${spec.family} model (every query reads every later key)`
    : probeOutputs(spec, o.probes ?? {}).length > 0
      ? `probes ${JSON.stringify(o.probes)} (a cached run computes only the new tokens' attention rows)`
      : o.interventions
        ? "interventions: true (a policy changes the attention of earlier tokens too)"
        : undefined;
  if (found === undefined) return undefined;
  return new SettingsError("A key/value cache needs a causal model without probes or interventions", {
    field: "kvCache",
    expected: "kvCache only for a causal (autoregressive) model, with no probes and no interventions",
    found,
    hint: "leave kvCache unset (it is on wherever it applies) or set it to false",
  });
}

export interface KvCache {
  /** P: keys held per batch row before this run, int64 [1]. */
  past: string;
  /** P + S, int64 [1]: every key this run's rows read. */
  keys: string;
  /** The past inputs, in graph input order. */
  inputs: string[];
  /** bool [S, P + S]: key k comes after new row i (k > P + i). */
  future(): string;
  /**
   * Layer l's keys and values for this run: its past concatenated with the new rows' (keys after RoPE,
   * [B, S, KV, hd]), which are also exposed as the layer's present outputs. Both [B, P + S, KV, hd].
   */
  append(l: number, kRot: string, v: string): { keys: string; values: string };
}

/**
 * Declare the past inputs of every layer on `g` (dtype `ct`, the compute type) and return the cache's
 * shared values. `T` is the run's new-token count (int64 [1]).
 */
export function kvCacheInputs(g: GraphBuilder, spec: ModelSpec, ct: number, T: string): KvCache {
  const { numLayers: L, numKvHeads: KV, headDim: hd } = spec;
  const inputs: string[] = [];
  for (let l = 0; l < L; l++) {
    inputs.push(g.input(KV_CACHE_NAMES.pastKey(l), ct, ["batch", "past", KV, hd]));
    inputs.push(g.input(KV_CACHE_NAMES.pastValue(l), ct, ["batch", "past", KV, hd]));
  }
  const past = g.slice(g.shape(inputs[0]), 1, 2, 0);
  const keys = g.add(past, T);
  let future: string | undefined;
  const scalar = (x: string) => g.reshape(x, g.constI64([], [0]));
  return {
    past,
    keys,
    inputs,
    future: () => {
      if (future) return future;
      const zero = g.constI64([0], []),
        one = g.constI64([1], []);
      const rows = g.add(g.range(zero, scalar(T), one), scalar(past)); // absolute columns P … P + S − 1
      const cols = g.range(zero, scalar(keys), one);
      future = g.greater(g.unsqueeze(cols, [0]), g.unsqueeze(rows, [1])); // [S, K]: k > P + i
      return future;
    },
    append: (l, kRot, v) => {
      const keysAll = g.concat([inputs[2 * l], kRot], 1);
      const valuesAll = g.concat([inputs[2 * l + 1], v], 1);
      // exposed in place (the Concat's output is renamed): later nodes read the outputs' names
      g.output(keysAll, KV_CACHE_NAMES.presentKey(l), ct, ["batch", "keys", KV, hd]);
      g.output(valuesAll, KV_CACHE_NAMES.presentValue(l), ct, ["batch", "keys", KV, hd]);
      return { keys: KV_CACHE_NAMES.presentKey(l), values: KV_CACHE_NAMES.presentValue(l) };
    },
  };
}
