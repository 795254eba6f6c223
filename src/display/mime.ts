/**
 * The kernel → frontend contract: MIME bundles.
 *
 * A bundle maps MIME types to values. Our own types are versioned `application/vnd.floatscope.*`
 * names ending in `+json` (nbformat stores a JSON object only under `application/…+json` keys);
 * every bundle we emit also carries `text/plain` and, for figures, a static image, so that
 * GitHub, nbviewer and nbconvert (which drop unknown types) still show something.
 * The widgets in `widgets/` render the `vnd.floatscope` types; they import only these names and
 * the figure-spec types.
 */
import { DisplayError } from "../util/errors.js";
import { MIME_FIGURE, MIME_SCRUBBER } from "../protocol/payloads.js";

/**
 * Our vendor MIME types by name (declared in protocol/payloads.ts, shared with the widgets): every
 * figure but the scrubber is a figure description; `heatmap` is kept for notebooks that look it up.
 */
export const FLOATSCOPE_MIME = {
  figure: MIME_FIGURE,
  heatmap: MIME_FIGURE,
  scrubber: MIME_SCRUBBER,
} as const;

/** Standard MIME types we emit alongside ours. */
export const STANDARD_MIME = {
  plain: "text/plain",
  html: "text/html",
  svg: "image/svg+xml",
  png: "image/png",
} as const;

/** A MIME bundle. `text/plain` is always present: it is what a terminal or log shows. */
export interface MimeBundle {
  "text/plain": string;
  [mimeType: string]: unknown;
}

/**
 * Display protocol: any object with a `toMimeBundle()` method can be passed to `show()`.
 * Result classes of analyses implement it; they are then shown with every fallback they choose.
 *
 * @example
 *   class Summary { toMimeBundle() { return { "text/plain": "3 anchors", "text/html": "<b>3</b> anchors" }; } }
 *   show(new Summary());
 */
export interface Displayable {
  toMimeBundle(): MimeBundle;
}

/** True if `x` implements the display protocol. */
export function isDisplayable(x: unknown): x is Displayable {
  return typeof x === "object" && x !== null && typeof (x as { toMimeBundle?: unknown }).toMimeBundle === "function";
}

const JSON_MIME = /^application\/(.*\+)?json$/;
const MIME_SHAPE = /^[a-z]+\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/;

/**
 * Check a bundle before it leaves the kernel, so a bad one fails in the cell that made it
 * instead of producing an unsaveable notebook: every key a MIME type, `text/plain` a string,
 * JSON objects only under `application/…json` keys, everything else a string.
 */
export function validateBundle(bundle: unknown, source: string): MimeBundle {
  if (bundle === null || typeof bundle !== "object" || Array.isArray(bundle)) {
    throw new DisplayError("A MIME bundle must be an object", {
      file: source,
      expected: "{ 'text/plain': string, … }",
      found: typeof bundle,
    });
  }
  const b = bundle as Record<string, unknown>;
  if (typeof b["text/plain"] !== "string") {
    throw new DisplayError("A MIME bundle needs a text/plain string", {
      file: source,
      field: "text/plain",
      expected: "a one-line text summary",
      found: b["text/plain"] === undefined ? "missing" : typeof b["text/plain"],
    });
  }
  for (const [key, value] of Object.entries(b)) {
    if (!MIME_SHAPE.test(key)) {
      throw new DisplayError("Not a MIME type", {
        file: source,
        field: key,
        expected: "type/subtype, e.g. image/svg+xml",
        found: JSON.stringify(key),
      });
    }
    if (typeof value !== "string" && !JSON_MIME.test(key)) {
      throw new DisplayError("Only application/…+json MIME types may carry non-string values", {
        file: source,
        field: key,
        expected: "a string (or rename the type to application/vnd.….v1+json)",
        found: value === null ? "null" : typeof value,
      });
    }
  }
  return b as MimeBundle;
}
