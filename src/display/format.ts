/**
 * `x` → MIME bundle, by type. Order: user-registered formatters, the `toMimeBundle()` protocol,
 * figure specs (by `kind`), arquero tables, then plain text for strings/numbers/booleans/bigints.
 * Anything else is a DisplayError that names the type — silently printing `[object Object]`
 * would hide a mistake such as showing a Trace instead of a figure made from it.
 */
import { DisplayError } from "../util/errors.js";
import { figureBundle, figureKind, figureKinds } from "./figures.js";
import { isDisplayable, validateBundle, type MimeBundle } from "./mime.js";
import { isTableLike, tableBundle } from "./table.js";

/** A custom formatter: `test` picks values, `format` turns one into a bundle. */
export interface Formatter {
  name: string;
  test(x: unknown): boolean;
  format(x: unknown): MimeBundle;
}

const custom: Formatter[] = [];

/**
 * Teach `show()` a new type. Later registrations win over earlier ones and over the built-ins.
 * Returns a function that unregisters it.
 */
export function registerFormatter(formatter: Formatter): () => void {
  if (!formatter || typeof formatter.test !== "function" || typeof formatter.format !== "function") {
    throw new DisplayError("registerFormatter() needs { name, test(x), format(x) }", {
      field: "formatter",
      expected: "an object with test and format functions",
      found: typeof formatter,
    });
  }
  custom.unshift(formatter);
  return () => {
    const i = custom.indexOf(formatter);
    if (i >= 0) custom.splice(i, 1);
  };
}

/** The bundle `show(x)` would send. Throws DisplayError for values it cannot show. */
export function mimeBundleOf(x: unknown): MimeBundle {
  for (const f of custom) {
    if (f.test(x)) return validateBundle(f.format(x), `formatter ${f.name}`);
  }
  if (isDisplayable(x)) return validateBundle(x.toMimeBundle(), `${describeValue(x)}.toMimeBundle()`);
  if (figureKind(x) !== null) return figureBundle(x as { kind: string });
  if (isTableLike(x)) return tableBundle(x);
  if (typeof x === "string") return { "text/plain": x };
  if (typeof x === "number" || typeof x === "boolean" || typeof x === "bigint") return { "text/plain": String(x) };
  throw unsupported(x);
}

function unsupported(x: unknown): DisplayError {
  const what = describeValue(x);
  let hint = "pass a figure spec (e.g. heatmap({...})), an arquero table, a string, or an object with toMimeBundle()";
  if (x instanceof Promise || (typeof x === "object" && x !== null && typeof (x as { then?: unknown }).then === "function")) {
    hint = "this is a Promise — did you forget `await`?";
  } else if (typeof x === "object" && x !== null && typeof (x as { kind?: unknown }).kind === "string") {
    hint = `figure kind ${JSON.stringify((x as { kind: string }).kind)} is unknown; known kinds: ${figureKinds().join(", ")}`;
  } else if (x === undefined) {
    hint = "the value is undefined — did the previous step return nothing?";
  }
  return new DisplayError(`show() cannot display ${what}`, {
    field: "value",
    expected: "a figure spec, an arquero table, text, or an object with toMimeBundle()",
    found: what,
    hint,
  });
}

/** Short human name of a value's type for error messages: "a Float32Array(12)", "a Map", "undefined". */
export function describeValue(x: unknown): string {
  if (x === null) return "null";
  if (x === undefined) return "undefined";
  if (typeof x === "function") return `a function${x.name ? ` (${x.name})` : ""}`;
  if (typeof x === "symbol") return `a symbol (${String(x.description)})`;
  if (typeof x !== "object") return `a ${typeof x}`;
  if (Array.isArray(x)) return `an Array(${x.length})`;
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name}(${(x as unknown as ArrayLike<unknown>).length ?? x.byteLength})`;
  const ctor = (x as { constructor?: { name?: unknown } }).constructor;
  const name = typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : "Object";
  if (name === "Object") {
    const keys = Object.keys(x);
    const shown = keys.slice(0, 4).join(", ") + (keys.length > 4 ? ", …" : "");
    return keys.length ? `a plain object with keys {${shown}}` : "an empty object";
  }
  return `${/^[AEIOU]/.test(name) ? "an" : "a"} ${name}`;
}
