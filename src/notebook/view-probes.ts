/**
 * What the attention scrubber needs recorded, added to a notebook's probe request when the memory
 * estimate says it is affordable: per-head received attention (`receivedHeads`, O(H·T) a layer),
 * head-mean full maps (`patternMean`, O(T²)) for the row/column profiles and the full-map view, and
 * per-head maps (`pattern`, O(H·T²)) for the head view and the layers × heads grid.
 *
 * "Affordable" is decided by two estimates, before any compute:
 * - the extra trace bytes every trace of the call will hold in memory (trace/size.ts, summed over the
 *   prompts and contexts), against `budgetBytes` (default VIEW_PROBE_BUDGET_BYTES);
 * - one forward pass with the extra probes (runtime/memory.ts), against the headroom the run leaves
 *   under the engine's memory budget.
 * Map probes are tried for every layer first, then for fewer, evenly spaced layers (first and last
 * kept), then dropped; `note` then says what was left out and names the setting that records it
 * (`viewProbes: "all"`), so the figure never silently lacks a view.
 */
import type { ModelSpec } from "../graph/spec.js";
import { defaultMemoryBudget, estimateMemory, formatBytes } from "../runtime/memory.js";
import { estimateTraceBytes } from "../trace/size.js";
import type { ProbeRequest } from "../util/probes.js";

/** Default extra trace bytes the view probes may add to one `decodeQa` call (all its traces). */
export const VIEW_PROBE_BUDGET_BYTES = 64 * 2 ** 20;

/** `"auto"`: add what fits the budgets; `"all"`: every view probe for every layer; `"none"`: the request as given. */
export type ViewProbesSetting = "auto" | "all" | "none";

export interface ViewProbeRun {
  /** Forward-pass batch (prompts decoded together). */
  batch: number;
  /** Traces the call keeps (prompts × contexts). */
  traces: number;
  /** Longest canvas (prompt + generated tokens). */
  seq: number;
  /** Denoising (or decoding) steps per trace. */
  steps: number;
}

export interface ViewProbeDecision {
  probes: ProbeRequest;
  /** What was added, in words ("per-head received, full maps (6 layers), per-head maps (6 layers)"). */
  added: string[];
  /** Set when something the scrubber can show was left out: why, and the setting that records it. */
  note?: string;
}

/** `k` evenly spaced layers of `n`, first and last included. */
function spaced(n: number, k: number): number[] {
  if (k >= n) return Array.from({ length: n }, (_, i) => i);
  if (k <= 1) return [n - 1];
  return [...new Set(Array.from({ length: k }, (_, i) => Math.round((i * (n - 1)) / (k - 1))))];
}

/** Merge the view probes into `base` (never removing what the caller asked for). */
function merged(base: ProbeRequest, heads: boolean, meanLayers: number[], headLayers: number[]): ProbeRequest {
  const out: ProbeRequest = { ...base };
  if (heads) out.receivedHeads = true;
  const union = (a: number[] | undefined, b: number[]) => [...new Set([...(a ?? []), ...b])].sort((x, y) => x - y);
  if (meanLayers.length) out.patternMean = { layers: union(base.patternMean?.layers, meanLayers) };
  if (headLayers.length) out.pattern = { ...base.pattern, layers: union(base.pattern?.layers, headLayers) };
  return out;
}

/**
 * The probe request to record for a scrubber-ready run: `base` plus the view probes that fit.
 * @example
 *   viewProbes({ received: true }, spec, { batch: 1, traces: 1, seq: 51, steps: 16 }).probes
 *   // → { received: true, receivedHeads: true, patternMean: { layers: [0…5] }, pattern: { layers: [0…5] } }
 */
export function viewProbes(
  base: ProbeRequest,
  spec: ModelSpec,
  run: ViewProbeRun,
  o: { setting?: ViewProbesSetting; budgetBytes?: number; memoryBudgetBytes?: number } = {},
): ViewProbeDecision {
  const setting = o.setting ?? "auto";
  const L = spec.numLayers;
  const all = Array.from({ length: L }, (_, i) => i);
  if (setting === "none") return { probes: base, added: [] };
  if (setting === "all") return { probes: merged(base, true, all, all), added: describe(true, all, all, L) };
  const budget = o.budgetBytes ?? VIEW_PROBE_BUDGET_BYTES;
  const memory = o.memoryBudgetBytes ?? defaultMemoryBudget();
  const dims = {
    numLayers: L,
    numHeads: spec.numHeads,
    numKvHeads: spec.numKvHeads,
    headDim: spec.headDim,
    seq: run.seq,
    steps: run.steps,
  };
  const baseBytes = estimateTraceBytes(base, dims);
  const extra = (p: ProbeRequest) => (estimateTraceBytes(p, dims) - baseBytes) * run.traces;
  // One pass: the extra probe outputs must fit the headroom the run leaves (at least a tenth of the
  // budget, for a run whose weights alone exceed it here because it will run on another device).
  const pass = (p: ProbeRequest) => estimateMemory(spec, { batch: run.batch, seq: run.seq, probes: p });
  const basePass = pass(base);
  const headroom = Math.max(memory - basePass.total, 0.1 * memory);
  const fits = (p: ProbeRequest) => extra(p) <= budget && pass(p).probes - basePass.probes <= headroom;
  const heads = fits(merged(base, true, [], []));
  // The most evenly spaced layers (down to 2: a shallow and a deep one) whose maps fit, or none.
  const widest = (with_: (layers: number[]) => ProbeRequest): number[] => {
    for (let k = L; k >= Math.min(2, L); k = k > 8 ? Math.floor(k / 2) : k - 1) {
      const layers = spaced(L, k);
      if (fits(with_(layers))) return layers;
    }
    return [];
  };
  const meanLayers = widest((ls) => merged(base, heads, ls, []));
  const headLayers = meanLayers.length ? widest((ls) => merged(base, heads, meanLayers, ls)) : [];
  const probes = merged(base, heads, meanLayers, headLayers);
  const added = describe(heads, meanLayers, headLayers, L);
  const missing: string[] = [];
  if (!heads) missing.push("per-head received attention");
  if (meanLayers.length < L) missing.push(`full maps for ${L - meanLayers.length} of ${L} layers`);
  if (headLayers.length < L) missing.push(`per-head maps for ${L - headLayers.length} of ${L} layers`);
  if (missing.length === 0) return { probes, added };
  const full = extra(merged(base, true, all, all));
  const note =
    `not recorded by default: ${missing.join(", ")} (all view probes would add ${formatBytes(full)} over ${run.traces} trace(s); ` +
    `budget ${formatBytes(budget)}). Record them with decodeQa(…, { viewProbes: "all" }) — or fewer prompts / a shorter context.`;
  return { probes, added, note };
}

function describe(heads: boolean, meanLayers: number[], headLayers: number[], L: number): string[] {
  const n = (ls: number[]) => (ls.length === L ? `all ${L} layers` : `layers ${ls.join(", ")}`);
  return [
    ...(heads ? ["per-head received"] : []),
    ...(meanLayers.length ? [`full maps (${n(meanLayers)})`] : []),
    ...(headLayers.length ? [`per-head maps (${n(headLayers)})`] : []),
  ];
}
