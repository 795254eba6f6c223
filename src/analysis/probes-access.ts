/**
 * Getting a probe out of a Trace, with the one "missing probe" error every analysis raises.
 *
 * Serves every analysis (paper §5–§9): they all read `blocks.{l}.attn.<kind>` tensors from either the
 * forward pass over the final sequence (what the paper's figures use) or one denoising step.
 * Definition: `getProbe(trace, pass, kind, layer)` returns the tensor with the batch axis removed and
 * its dims checked against `PROBE_AXES`, or throws `ProbeMissingError` naming the probe and the
 * `probes: {…}` request that records it.
 * Upstream has no equivalent: its scripts fail with a KeyError on a missing npz key.
 */
import { describePartial } from "../trace/partial.js";
import type { ProbeTensor, Trace } from "../trace/types.js";
import { ProbeMissingError, SettingsError } from "../util/errors.js";
import { PROBE_AXES, parseProbeName, probeInfo } from "../util/probes.js";

/** Which forward pass to read: the final-sequence pass, or a step index into `trace.steps`. */
export type PassRef = "final" | number;

/** How to record a probe kind (the text after "record it with"), from the probe table. */
function recordHint(kind: string, layer: number): string {
  return probeInfo(kind)?.hint(layer) ?? "a probe request that includes it";
}

/** Human label of a pass, for messages. */
export function passLabel(pass: PassRef): string {
  return pass === "final" ? "the final-sequence pass" : `step ${pass}`;
}

/** The probe map of one pass. Throws SettingsError for a step index outside the trace. */
export function probesOf(trace: Trace, pass: PassRef): Map<string, ProbeTensor> {
  if (pass === "final") return trace.final.probes;
  if (!Number.isInteger(pass) || pass < 0 || pass >= trace.steps.length) {
    throw new SettingsError("step index out of range", {
      field: "pass",
      expected: `"final" or an integer in [0, ${trace.steps.length})`,
      found: String(pass),
    });
  }
  return trace.steps[pass].probes;
}

/**
 * One probe tensor of one pass, batch axis removed, dims checked.
 * `label` names the trace in messages (a file path when the caller knows it).
 */
export function getProbe(trace: Trace, pass: PassRef, kind: string, layer: number, label = "trace"): ProbeTensor {
  const name = `blocks.${layer}.attn.${kind}`;
  const axes = PROBE_AXES[kind];
  if (axes === undefined)
    throw new SettingsError("unknown probe kind", { field: "kind", expected: Object.keys(PROBE_AXES).join(", "), found: kind });
  const t = probesOf(trace, pass).get(name);
  const partial = describePartial(trace);
  if (t === undefined && pass === "final" && partial && partial.missing.includes("the final-sequence pass")) {
    // Say first that the run never finished: "no probe" alone would send the user to the probe request.
    throw new ProbeMissingError(`${partial.summary}; this analysis reads ${name} in the final-sequence pass`, {
      file: trace.source?.file ?? label,
      field: name,
      expected: "a complete trace (with its final-sequence pass)",
      found: "a partial trace",
      hint: trace.steps.length
        ? `re-run generate to completion, or read the recorded steps (pass: 0…${trace.steps.length - 1}; \`analyze drift\` does)`
        : "re-run generate to completion: this trace holds no step either",
    });
  }
  if (t === undefined) {
    throw new ProbeMissingError(`${label} has no ${name} in ${passLabel(pass)}`, {
      file: label,
      field: name,
      expected: `${name} [${axes.filter((a) => a !== "batch").join(", ")}]`,
      found: "no such probe",
      hint:
        pass === "final" && trace.partial
          ? `this trace is partial (the run was interrupted before the final pass); read a step instead (pass: 0…${trace.steps.length - 1})`
          : `record it with ${recordHint(kind, layer)}`,
    });
  }
  const want = axes.length - 1; // the trace drops the batch axis
  if (t.dims.length === want) return t;
  if (t.dims.length === want + 1 && t.dims[0] === 1) {
    return { name: t.name, axes: t.axes.filter((a) => a !== "batch"), dims: t.dims.slice(1), data: t.data };
  }
  throw new ProbeMissingError(`${label} has ${name} with the wrong rank`, {
    file: label,
    field: name,
    expected: `dims [${axes.filter((a) => a !== "batch").join(", ")}]`,
    found: `[${t.dims.join(", ")}]`,
  });
}

/**
 * One warning per partial trace (what it lacks, `describePartial`): every analysis adds these to its
 * `spec.warnings`, so a result computed from an unfinished run always says so.
 */
export function partialWarnings(traces: readonly Trace[]): string[] {
  return traces.flatMap((t) => {
    const d = describePartial(t);
    return d ? [d.summary] : [];
  });
}

/** Layers (ascending) for which `pass` holds a probe of `kind`. */
export function probeLayers(trace: Trace, pass: PassRef, kind: string): number[] {
  const layers: number[] = [];
  for (const name of probesOf(trace, pass).keys()) {
    const p = parseProbeName(name);
    if (p !== undefined && p.kind === kind) layers.push(p.layer);
  }
  return layers.sort((a, b) => a - b);
}

/**
 * The layers an analysis will read: the requested ones (checked) or all that carry the probe.
 * Throws ProbeMissingError when none do, naming layer 0's probe.
 */
export function resolveLayers(trace: Trace, pass: PassRef, kind: string, layers: number[] | "all" | undefined, label = "trace"): number[] {
  if (layers === undefined || layers === "all") {
    const found = probeLayers(trace, pass, kind);
    if (found.length === 0) getProbe(trace, pass, kind, 0, label); // throws the canonical message
    return found;
  }
  for (const l of layers) {
    if (!Number.isInteger(l) || l < 0 || l >= trace.model.numLayers) {
      throw new SettingsError("layer out of range", {
        field: "layers",
        expected: `integers in [0, ${trace.model.numLayers})`,
        found: String(l),
      });
    }
    getProbe(trace, pass, kind, l, label);
  }
  return [...layers];
}

/** The token ids of the sequence a pass saw: the step's canvas, or the final sequence. */
export function sequenceOf(trace: Trace, pass: PassRef): Int32Array {
  return pass === "final" ? trace.final.sequence : trace.steps[pass].canvas;
}

/**
 * Throws `ProbeMissingError` when a trace holds no per-step records (only a final forward pass), for
 * the analyses that read the denoising steps: `probe` is the attention probe each step must carry,
 * `hint` how to record such a run.
 */
export function requireSteps(trace: Trace, label: string, probe: string, hint: string): void {
  if (trace.steps.length > 0) return;
  throw new ProbeMissingError(`${label} has no per-step records`, {
    file: label,
    field: "steps",
    expected: `one TraceStep per denoising step with blocks.{l}.attn.${probe}`,
    found: "0 steps",
    hint,
  });
}
