/**
 * Figure specs → MIME bundles, through the one registry of kinds (`src/figures/registry.ts`):
 * our vendor type (a `FigureDescription` for the widget, or the scrubber payload), the same
 * picture as SVG drawn here, and a one-line text/plain. How to add a kind: docs/figures.md.
 */
import { DisplayError, FloatscopeError } from "../util/errors.js";
import { PayloadError } from "../protocol/payloads.js";
import { FIGURE_KINDS, figureKindOf, kindBundle } from "../figures/registry.js";
import type { MimeBundle } from "./mime.js";

/** The `kind` of a figure spec we know how to show, or null. */
export function figureKind(x: unknown): string | null {
  return figureKindOf(x);
}

/** The names of the registered kinds (for error messages). */
export function figureKinds(): string[] {
  return Object.keys(FIGURE_KINDS);
}

/**
 * Bundle for any known figure spec (call `figureKind` first). A malformed spec (hand-written JSON,
 * a truncated result) fails here, in the cell that showed it, with a DisplayError naming the kind.
 */
export function figureBundle(spec: { kind: string }): MimeBundle {
  try {
    return kindBundle(spec);
  } catch (e) {
    if (e instanceof FloatscopeError) throw e;
    throw new DisplayError(`Malformed ${spec.kind} figure input`, {
      field: e instanceof PayloadError && e.field ? e.field : "spec",
      expected: `a ${spec.kind} result as built by floatscope (see docs/figures.md)`,
      found: e instanceof Error ? e.message : String(e),
    });
  }
}
