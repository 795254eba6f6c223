/**
 * File names for figure exports (PNG/SVG from a widget): they say what the file shows — figure
 * kind, model(s), layer, head, step — so a folder of exports stays readable and one export does
 * not overwrite another. Compiled by the widget bundle as it is.
 */

export interface ExportName {
  /** Figure kind, e.g. "absorption", "qk", "scrubber". */
  figure: string;
  /** Model names (deduplicated, in order). */
  models?: string[];
  /** Layer shown, or several. */
  layer?: number | number[];
  head?: number;
  step?: number;
}

/** One file-name-safe part: letters, digits, ".", "+", "-" (other runs become "-"). */
function part(s: string): string {
  return s.replace(/[^A-Za-z0-9.+-]+/g, "-").replace(/^-+|-+$/g, "");
}

/** "floatscope_<figure>_<models>_layer<L>_head<H>_step<S>" (missing parts left out), no extension. */
export function exportStem(n: ExportName): string {
  const models = [...new Set(n.models ?? [])].map(part).filter(Boolean);
  const layers = n.layer === undefined ? [] : Array.isArray(n.layer) ? n.layer : [n.layer];
  const parts = [
    "floatscope",
    part(n.figure),
    models.length ? models.join("+") : "",
    layers.length ? `layer${layers.join("-")}` : "",
    n.head === undefined ? "" : `head${n.head}`,
    n.step === undefined ? "" : `step${n.step}`,
  ];
  return parts.filter(Boolean).join("_");
}

/** The model names a payload or spec names, wherever its kind keeps them (`model`, `series[].model`, `models[].model`). */
export function modelsOf(payload: object): string[] {
  const p = payload as { model?: unknown; series?: unknown; models?: unknown };
  const out: string[] = [];
  if (typeof p.model === "string") out.push(p.model);
  for (const list of [p.series, p.models]) {
    if (!Array.isArray(list)) continue;
    for (const x of list) if (x && typeof (x as { model?: unknown }).model === "string") out.push((x as { model: string }).model);
  }
  return out;
}
