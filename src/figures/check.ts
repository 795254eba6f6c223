/**
 * Shape check of a `FigureDescription` that did not come from a figure module (hand-written,
 * loaded from JSON): a malformed one fails with a DisplayError naming the field, not deep in draw.ts.
 */
import type { FigureDescription } from "../protocol/figure.js";
import { DisplayError } from "../util/errors.js";

export function checkDescription(d: unknown): FigureDescription {
  const f = d as Partial<FigureDescription>;
  const bad = (field: string, expected: string, found: unknown) =>
    new DisplayError("Malformed figure description", { field, expected, found: found === undefined ? "missing" : typeof found });
  if (typeof f?.title !== "string") throw bad("title", "a string", f?.title);
  if (!Array.isArray(f.panels) || f.panels.length === 0) throw bad("panels", "a non-empty array of panels", f.panels);
  type Loose = { type?: unknown; values?: unknown; rows?: number; cols?: number; scale?: { domain?: unknown } };
  for (const [i, p] of (f.panels as Loose[]).entries()) {
    if (p?.type === "heat") {
      const n = Number(p.rows) * Number(p.cols);
      if (!Array.isArray(p.values) || p.values.length !== n) throw bad(`panels[${i}].values`, `rows × cols = ${n} cells`, p.values);
      if (!p.scale || !Array.isArray(p.scale.domain)) throw bad(`panels[${i}].scale`, "{ colormap, domain }", p.scale);
    } else if (p?.type !== "lines" && p?.type !== "bars") throw bad(`panels[${i}].type`, '"heat", "lines" or "bars"', p?.type);
  }
  for (const key of ["subtitle", "legend", "notes", "warnings"] as const) {
    if (!Array.isArray(f[key])) throw bad(key, "an array", f[key]);
  }
  return { columns: f.panels.length, exportName: { figure: f.figure ?? "figure" }, text: f.title, ...f } as FigureDescription;
}
