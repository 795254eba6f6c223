/**
 * Family detection and `resolveModelSpec(checkpoint)`. A checkpoint is matched by
 * `architectures[0]` in config.json, else by `model_type`; anything else is an
 * `UnsupportedArchitectureError` that lists the supported families (the registry, src/families/).
 */
import * as path from "node:path";
import { UnsupportedArchitectureError } from "../../util/errors.js";
import type { Checkpoint } from "../../checkpoint/types.js";
import { ADAPTERS, type Family, type FamilyAdapter } from "../../families/index.js";
import type { ModelSpec } from "../spec.js";
import { specFromAdapter } from "./resolve.js";

export type { FamilyAdapter, BlockNames } from "../../families/index.js";
export { ADAPTERS } from "../../families/index.js";
export { LIMITS } from "./resolve.js";

function supportedList(): string {
  return Object.values(ADAPTERS)
    .map((a) => `${a.family} (architectures ${a.architectures.join("/")}, model_type ${a.modelTypes.join("/")})`)
    .join("; ");
}

/** Which adapter reads this config, and the architecture string to report. */
export function detectFamily(
  config: Record<string, unknown>,
  configFile = "config.json",
): { adapter: FamilyAdapter<Family>; architecture: string } {
  const archs = config.architectures;
  const arch = Array.isArray(archs) && typeof archs[0] === "string" ? archs[0] : undefined;
  const modelType = typeof config.model_type === "string" ? config.model_type : undefined;
  const adapters = Object.values(ADAPTERS);
  if (arch !== undefined) {
    const byArch = adapters.find((a) => a.architectures.includes(arch));
    if (byArch) return { adapter: byArch, architecture: arch };
  }
  if (modelType !== undefined) {
    const mt = modelType.toLowerCase();
    const byType = adapters.find((a) => a.modelTypes.includes(mt));
    if (byType) return { adapter: byType, architecture: arch ?? modelType };
  }
  throw new UnsupportedArchitectureError("Unsupported model architecture", {
    file: configFile,
    field: arch !== undefined ? "architectures[0]" : "model_type",
    expected: `one of the supported families: ${supportedList()}`,
    found: arch ?? modelType ?? "neither architectures nor model_type",
  });
}

/**
 * Read a checkpoint's config and tensor index into a `ModelSpec`, checking that every tensor the
 * family needs is present with the right shape.
 * @example
 *   const spec = resolveModelSpec(openCheckpoint("models/tiny-llada"));
 *   spec.causal // false
 */
export function resolveModelSpec(checkpoint: Checkpoint): ModelSpec {
  const { adapter, architecture } = detectFamily(checkpoint.config, checkpoint.configFile ?? path.join(checkpoint.dir, "config.json"));
  return specFromAdapter(adapter, checkpoint, architecture);
}

/** Every tensor name a spec reads (embedding, blocks, final norm, head), without duplicates. */
export function specTensorNames(spec: ModelSpec): string[] {
  const names = new Set<string>([spec.weights.embed]);
  for (const b of spec.weights.blocks) {
    for (const n of [b.attnNorm, b.q, b.qBias, b.k, b.kBias, b.v, b.vBias, b.o, b.mlpNorm, b.gate, b.up, b.down]) {
      if (n !== undefined) names.add(n);
    }
  }
  names.add(spec.weights.finalNorm);
  names.add(spec.weights.lmHead);
  return [...names];
}
