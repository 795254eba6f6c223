/**
 * Intervention policies: what the sampler hides from attention at each step, decided step by step
 * while denoising (or decoding), applied through the graph's intervention inputs
 * (src/graph/interventions.ts) and recorded in the trace (docs/trace-format.md).
 *
 * Policies (`--intervene <policy>` on the CLI; the same spellings in the library):
 * - `none` — no intervention (the run and its trace are exactly those of a plain run).
 * - `anchors` / `anchors:previous` — hide this step's anchors from every query, per layer. The
 *   anchors are those of the *previous* step's pass (the anchor detector of src/analysis/anchors.ts
 *   on each layer's `received` probe), so the step costs one forward pass. A key hidden at the
 *   previous step received (almost) no attention there; it is scored with the attention it had
 *   when last visible, so a hidden anchor stays hidden while it would still rank as one instead of
 *   flickering back every other step. Step 0 has no previous step: one un-intervened first pass
 *   detects its anchors (one extra forward per run).
 * - `anchors:first-pass` — detect this step's anchors from an un-intervened first pass at this
 *   step, then run the intervened pass: exact, at two forward passes per step.
 * - `first` — hide position 0 (the BOS / first token, an ARM's fixed sink) from every query.
 * - `random` / `random:<k>` — the control: hide k keys per layer drawn uniformly (seeded) among
 *   the keys that are not anchors (detected as for `anchors`; `random` alone draws as many keys as
 *   there are anchors in that layer at that step, a count-matched control).
 * - `sink` / `sink:<token id>` — a dedicated sink: one extra token before the prompt that attends
 *   only to itself and is visible to every query (default token: the model's BOS id, else its
 *   padding id, else its first EOS id). It is a real position: the prompt's positions (and RoPE
 *   angles) shift by one, exactly as if one token were prepended, and the trace's prompt starts
 *   with it (promptLength + 1, regions shifted by one token).
 * A query always keeps its own key (the graph's rule), so "hidden from every query" means every
 * other query.
 *
 * Random draws come from their own RNG (seed, stream = prompt index + 2^31), so the sampler's own
 * draws are those of the plain run.
 */
import { describeRule, detectAnchors, resolveRule, type AnchorOptions, type ResolvedRule } from "../analysis/anchors.js";
import type { ModelSpec } from "../graph/spec.js";
import type { AttentionIntervention } from "../runtime/types.js";
import type { PassIntervention, TraceIntervention } from "../trace/types.js";
import { SettingsError } from "../util/errors.js";
import { probeName, type ProbeRequest, type ProbeTensor } from "../util/probes.js";
import { Rng } from "../util/rng.js";

export const POLICY_KINDS = ["none", "anchors", "first", "random", "sink"] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

/** A built-in policy, as a user writes it. */
export interface InterventionPolicy {
  kind: PolicyKind;
  /** anchors, random: where this step's anchors come from (default "previous"). */
  detect?: "previous" | "first-pass";
  /** anchors, random: the anchor detector (default mean+ksigma, k 3, no fallback — the drift rule). */
  rule?: AnchorOptions;
  /** random: keys hidden per layer; omitted: as many as that layer's anchors (count-matched). */
  k?: number;
  /** random: seed of the control's RNG (default: the run's seed). */
  seed?: number;
  /** Layers intervened on (default: all). */
  layers?: number[];
  /** Query heads intervened on (default: all). */
  heads?: number[];
  /** sink: the sink's token id. */
  tokenId?: number;
}

/** What a custom policy sees at each pass (unpadded positions). */
export interface PolicyPass {
  /** Step index; equals the run's step count for the final pass. */
  step: number;
  canvas: Int32Array;
  promptLength: number;
  /** This prompt's probes of the previous pass (undefined at step 0). */
  previous?: Map<string, ProbeTensor>;
}

/** A policy written in code: any hidden keys, biases and self-only rows per pass. */
export interface CustomPolicy {
  kind: "custom";
  /** Recorded as the policy name. */
  name: string;
  plan(pass: PolicyPass): Partial<Omit<PassIntervention, "firstPass">>;
}

export type PolicyInput = string | InterventionPolicy | CustomPolicy;

const where = (field = "intervene") => ({ file: "settings", field });

/** Parse a CLI spelling: `none`, `anchors[:previous|first-pass]`, `first`, `random[:k]`, `sink[:token id]`. */
export function parsePolicy(text: string): InterventionPolicy {
  const [name, arg, extra] = text.trim().split(":");
  const expected = "none, anchors, anchors:previous, anchors:first-pass, first, random, random:<k>, sink or sink:<token id>";
  const fail = (): never => {
    throw new SettingsError("Unknown intervention policy", { ...where(), expected, found: JSON.stringify(text) });
  };
  if (extra !== undefined || !(POLICY_KINDS as readonly string[]).includes(name)) fail();
  const kind = name as PolicyKind;
  if (arg === undefined) return { kind };
  if (kind === "anchors" && (arg === "previous" || arg === "first-pass")) return { kind, detect: arg };
  if ((kind === "random" || kind === "sink") && /^\d+$/.test(arg))
    return kind === "random" ? { kind, k: Number(arg) } : { kind, tokenId: Number(arg) };
  return fail();
}

/** A built-in policy with every parameter filled in and checked against the model. */
export interface ResolvedPolicy {
  kind: PolicyKind;
  /** Canonical spelling (recorded, and the QA tables' `intervention` column). */
  name: string;
  detect: "previous" | "first-pass";
  rule: ResolvedRule;
  k: number | null;
  seed: number;
  layers: number[];
  heads: number[] | null;
  tokenId?: number;
}

function intList(v: unknown, field: string, n: number): number[] {
  if (!Array.isArray(v) || v.length === 0 || !v.every((x) => Number.isInteger(x) && x >= 0 && x < n)) {
    throw new SettingsError(`Invalid ${field}`, {
      ...where(`intervene.${field}`),
      expected: `a non-empty list of integers in [0, ${n})`,
      found: JSON.stringify(v),
    });
  }
  return [...new Set(v as number[])].sort((a, b) => a - b);
}

/** Check a policy against the model and the probes the engine records; fill defaults. */
export function resolvePolicy(
  input: string | InterventionPolicy,
  spec: ModelSpec,
  run: { seed: number; probes: ProbeRequest },
): ResolvedPolicy {
  const p = typeof input === "string" ? parsePolicy(input) : input;
  if (!(POLICY_KINDS as readonly string[]).includes(p.kind)) {
    throw new SettingsError("Unknown intervention policy", {
      ...where("intervene.kind"),
      expected: POLICY_KINDS.join(", "),
      found: JSON.stringify(p.kind),
    });
  }
  const detect = p.detect ?? "previous";
  if (detect !== "previous" && detect !== "first-pass") {
    throw new SettingsError("Invalid anchor detection", {
      ...where("intervene.detect"),
      expected: '"previous" or "first-pass"',
      found: JSON.stringify(p.detect),
    });
  }
  const k = p.k ?? null;
  if (k !== null && !(Number.isInteger(k) && k >= 1))
    throw new SettingsError("Invalid k", { ...where("intervene.k"), expected: "an integer ≥ 1", found: JSON.stringify(k) });
  const seed = p.seed ?? run.seed;
  if (!(Number.isInteger(seed) && seed >= 0))
    throw new SettingsError("Invalid seed", { ...where("intervene.seed"), expected: "an integer ≥ 0", found: JSON.stringify(seed) });
  const layers = p.layers === undefined ? Array.from({ length: spec.numLayers }, (_, l) => l) : intList(p.layers, "layers", spec.numLayers);
  const heads = p.heads === undefined ? null : intList(p.heads, "heads", spec.numHeads);
  if ((p.kind === "anchors" || p.kind === "random") && !run.probes.received) {
    throw new SettingsError(`The ${p.kind} policy detects anchors from the received probe`, {
      ...where(),
      expected: "an engine recording `received`",
      found: JSON.stringify(run.probes),
      hint: "create the engine with probes: { received: true, … }",
    });
  }
  const r: ResolvedPolicy = {
    kind: p.kind,
    name: canonicalName(p),
    detect,
    rule: resolveRule(p.rule ?? {}, "drift", spec.causal),
    k,
    seed,
    layers,
    heads,
  };
  if (p.kind === "sink") {
    const id = p.tokenId ?? spec.bosTokenId ?? spec.padTokenId ?? spec.eosTokenIds[0];
    if (!(Number.isInteger(id) && id! >= 0 && id! < spec.vocabSize)) {
      throw new SettingsError("Invalid sink token", {
        ...where("intervene.tokenId"),
        expected: `a token id in [0, ${spec.vocabSize})`,
        found: JSON.stringify(id),
      });
    }
    r.tokenId = id;
  }
  return r;
}

/** The probes an engine must record for a policy to run (anchor detection reads `received`). */
export function policyProbes(p: InterventionPolicy): ProbeRequest {
  return p.kind === "anchors" || p.kind === "random" ? { received: true } : {};
}

/**
 * The canonical spelling of a policy: the CLI form (`anchors`, `anchors:first-pass`, `random:4`,
 * `sink:5`…), plus `[rule]` when a detector rule was given and `@layers=…`/`@heads=…` for subsets,
 * so that runs that differ get different names in the QA tables.
 */
export function canonicalName(p: InterventionPolicy): string {
  let name: string = p.kind;
  const firstPass = p.detect === "first-pass";
  if (p.kind === "anchors" && firstPass) name = "anchors:first-pass";
  if (p.kind === "random") name = (p.k === undefined ? "random" : `random:${p.k}`) + (firstPass ? ":first-pass" : "");
  if (p.kind === "sink" && p.tokenId !== undefined) name = `sink:${p.tokenId}`;
  if ((p.kind === "anchors" || p.kind === "random") && p.rule) name += `[${describeRule(resolveRule(p.rule, "drift"))}]`;
  if (p.kind === "random" && p.seed !== undefined) name += `@seed=${p.seed}`;
  if (p.layers) name += `@layers=${p.layers.join(",")}`;
  if (p.heads) name += `@heads=${p.heads.join(",")}`;
  return name;
}

/** The name a policy input records under (QA tables' `intervention` column); "none" without one. */
export function policyLabel(p: PolicyInput | undefined): string {
  if (p === undefined) return "none";
  if (typeof p === "object" && p.kind === "custom") return `custom:${p.name}`;
  return canonicalName(typeof p === "string" ? parsePolicy(p) : p);
}

/** Row identity the intervener keys its state on (a subset of the loop's RowState). */
export interface PolicyRow {
  index: number;
  promptLength: number;
}

/**
 * One run's policy state: decides each pass's intervention per prompt, remembers what it needs
 * from the passes it saw. The step loop drives it (loop.ts).
 */
export class Intervener {
  private readonly memory = new Map<number, Float64Array[]>(); // prompt → per listed layer, last-visible received
  private readonly previous = new Map<number, Map<string, ProbeTensor>>();
  private readonly rngs = new Map<number, Rng>();
  private pass = new Map<number, number>();

  constructor(
    readonly spec: ModelSpec,
    readonly policy: ResolvedPolicy | CustomPolicy,
  ) {}

  /** The same policy with fresh state (one per batch of prompts). */
  fork(): Intervener {
    return new Intervener(this.spec, this.policy);
  }

  /** The meta record's `intervention`. */
  get record(): TraceIntervention {
    const p = this.policy;
    if (p.kind === "custom") return { policy: `custom:${p.name}`, params: {} };
    const params: Record<string, unknown> = { layers: p.layers, heads: p.heads };
    if (p.kind === "anchors" || p.kind === "random") Object.assign(params, { detect: p.detect, rule: p.rule });
    if (p.kind === "random") Object.assign(params, { k: p.k, seed: p.seed, rngStream: "prompt index + 2^31" });
    if (p.kind === "sink")
      Object.assign(params, {
        tokenId: p.tokenId,
        position: 0,
        positionIds: "the sink takes position 0; the prompt's positions shift by one",
      });
    return { policy: p.name, params };
  }

  /** Token ids placed before every prompt (the dedicated sink), or none. */
  get prefix(): number[] {
    return this.policy.kind === "sink" ? [this.policy.tokenId!] : [];
  }

  private detects(): boolean {
    return this.policy.kind === "anchors" || this.policy.kind === "random";
  }

  /** Whether this pass needs an un-intervened first pass for some of these rows. */
  needsFirstPass(rows: PolicyRow[]): boolean {
    if (!this.detects()) return false;
    const p = this.policy as ResolvedPolicy;
    return p.detect === "first-pass" || rows.some((r) => !this.memory.has(r.index));
  }

  /**
   * This row's intervention for the pass about to run over `canvas`.
   * @param firstPass the row's probes from an un-intervened pass over the same canvas, when one ran
   */
  plan(row: PolicyRow, canvas: Int32Array, firstPass?: Map<string, ProbeTensor>): PassIntervention {
    const step = this.pass.get(row.index) ?? 0;
    this.pass.set(row.index, step + 1);
    const out: PassIntervention = { hidden: [], bias: [], selfOnly: [], firstPass: firstPass !== undefined };
    const p = this.policy;
    if (p.kind === "custom") {
      const got = p.plan({ step, canvas, promptLength: row.promptLength, previous: this.previous.get(row.index) });
      return checkPlan(
        { hidden: got.hidden ?? [], bias: got.bias ?? [], selfOnly: got.selfOnly ?? [], firstPass: false },
        this.spec,
        canvas.length,
        p.name,
      );
    }
    const T = canvas.length;
    const heads = p.heads ?? [-1];
    const hide = (l: number, keys: ArrayLike<number>) => {
      for (const key of Array.from(keys)) for (const h of heads) out.hidden.push([l, h, key]);
    };
    if (p.kind === "first") for (const l of p.layers) hide(l, [0]);
    if (p.kind === "sink") out.selfOnly.push(0);
    if (this.detects()) {
      if (firstPass) this.remember(row.index, firstPass, undefined);
      const mem = this.memory.get(row.index)!;
      const ctx = {
        ids: canvas,
        causal: this.spec.causal,
        bosTokenId: this.spec.bosTokenId,
        maskTokenId: this.spec.maskTokenId,
        eosTokenIds: this.spec.eosTokenIds,
        padTokenId: this.spec.padTokenId,
      };
      p.layers.forEach((l, i) => {
        const scores = new Float64Array(T).fill(NaN); // keys never seen (an ARM's new position) are no anchors
        scores.set(mem[i].subarray(0, Math.min(T, mem[i].length)));
        const anchors = detectAnchors(scores, p.rule, ctx);
        if (p.kind === "anchors") hide(l, anchors);
        else hide(l, this.draw(row.index, T, anchors, p.k ?? anchors.length));
      });
    }
    return out;
  }

  /** After the pass: this row's probes (what the next step's detection reads). */
  observe(row: PolicyRow, plan: PassIntervention, probes: Map<string, ProbeTensor>): void {
    this.previous.set(row.index, probes);
    if (this.detects()) this.remember(row.index, probes, plan);
  }

  /** Update the last-visible received per layer; keys hidden from every head in `plan` keep their old score. */
  private remember(index: number, probes: Map<string, ProbeTensor>, plan: PassIntervention | undefined): void {
    const p = this.policy as ResolvedPolicy;
    const old = this.memory.get(index);
    this.memory.set(
      index,
      p.layers.map((l, i) => {
        const rec = probes.get(probeName.received(l));
        if (!rec) throw new Error(`internal: the ${p.name} policy needs ${probeName.received(l)}`);
        const next = Float64Array.from(rec.data);
        if (plan && old) {
          for (const [layer, head, key] of plan.hidden) {
            if (layer === l && head === -1 && key < next.length) next[key] = key < old[i].length ? old[i][key] : NaN;
          }
        }
        return next;
      }),
    );
  }

  /** k distinct keys in [0, T) that are not anchors, ascending (partial Fisher–Yates on the control's RNG). */
  private draw(index: number, T: number, anchors: Int32Array, k: number): number[] {
    let rng = this.rngs.get(index);
    if (!rng) {
      rng = new Rng((this.policy as ResolvedPolicy).seed, (index + 2 ** 31) % 2 ** 32);
      this.rngs.set(index, rng);
    }
    const banned = new Set(anchors);
    const pool: number[] = [];
    for (let j = 0; j < T; j++) if (!banned.has(j)) pool.push(j);
    const n = Math.min(k, pool.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(rng.uniform() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    return pool.slice(0, n).sort((a, b) => a - b);
  }
}

/** A custom policy's plan, checked: layers, heads and positions in range, finite biases. */
function checkPlan(p: PassIntervention, spec: ModelSpec, T: number, name: string): PassIntervention {
  const bad = (field: string, expected: string, found: unknown): never => {
    throw new SettingsError(`Custom policy ${name} returned an invalid plan`, {
      ...where(`intervene.${field}`),
      expected,
      found: JSON.stringify(found),
    });
  };
  const entry = (e: number[], field: string, width: number) => {
    if (!Array.isArray(e) || e.length !== width) bad(field, `[layer, head, key${width > 3 ? ", value" : ""}]`, e);
    const [l, h, k] = e;
    if (!(Number.isInteger(l) && l >= 0 && l < spec.numLayers)) bad(field, `a layer in [0, ${spec.numLayers})`, l);
    if (!(Number.isInteger(h) && h >= -1 && h < spec.numHeads)) bad(field, `a head in [-1, ${spec.numHeads})`, h);
    if (!(Number.isInteger(k) && k >= 0 && k < T)) bad(field, `a key in [0, ${T})`, k);
    if (width === 4 && !Number.isFinite(e[3])) bad(field, "a finite bias", e[3]);
  };
  p.hidden.forEach((e) => entry(e, "hidden", 3));
  p.bias.forEach((e) => entry(e, "bias", 4));
  for (const q of p.selfOnly) if (!(Number.isInteger(q) && q >= 0 && q < T)) bad("selfOnly", `positions in [0, ${T})`, q);
  return p;
}

/** Resolve any policy input; undefined for `none` (a plain run). */
export function makeIntervener(
  input: PolicyInput | undefined,
  spec: ModelSpec,
  run: { seed: number; probes: ProbeRequest },
): Intervener | undefined {
  if (input === undefined) return undefined;
  if (typeof input === "object" && input.kind === "custom") {
    if (typeof input.plan !== "function" || typeof input.name !== "string") {
      throw new SettingsError("Invalid custom policy", { ...where(), expected: '{ kind: "custom", name: string, plan(pass) }' });
    }
    return new Intervener(spec, input);
  }
  const p = resolvePolicy(input as string | InterventionPolicy, spec, run);
  return p.kind === "none" ? undefined : new Intervener(spec, p);
}

/**
 * The batched engine input for one pass: each row's plan placed at its left padding.
 * @param plans per batch row (unpadded positions); heads −1 = all heads
 */
export function batchIntervention(plans: PassIntervention[], pads: number[], seq: number, spec: ModelSpec): AttentionIntervention {
  const B = plans.length,
    L = spec.numLayers,
    H = spec.numHeads;
  const keyHidden = new Uint8Array(B * L * H * seq);
  const keyBias = new Float32Array(B * L * H * seq);
  const selfOnly = new Uint8Array(B * seq);
  const heads = (h: number) => (h === -1 ? Array.from({ length: H }, (_, i) => i) : [h]);
  plans.forEach((p, b) => {
    const at = (l: number, h: number, k: number) => ((b * L + l) * H + h) * seq + pads[b] + k;
    for (const [l, h, k] of p.hidden) for (const hh of heads(h)) keyHidden[at(l, hh, k)] = 1;
    for (const [l, h, k, v] of p.bias) for (const hh of heads(h)) keyBias[at(l, hh, k)] += v;
    for (const q of p.selfOnly) selfOnly[b * seq + pads[b] + q] = 1;
  });
  return { keyHidden, keyBias, selfOnly };
}
