/**
 * What a reader of an executed notebook sees as token text, for the check that no byte-level BPE
 * marker ("Ġ" space, "Ċ" newline) reaches them: the HTML and SVG of every display (tables, static
 * figures, the scrubber's image), display text/plain, and the labels of every figure description
 * (axes, series, legend) that the widget draws. Stream output (logs) is not a label and is left out.
 */
import { join1, outputsOf, type Notebook } from "./nb-outputs.js";

const MIME_FIGURE = "application/vnd.floatscope.figure.v1+json";
export const BPE_MARKERS = /[ĠĊ]/;

interface FigureLabels {
  panels?: { x?: { labels?: string[] }; y?: { labels?: string[] }; series?: { name: string }[]; stacks?: { name: string }[] }[];
  legend?: { label: string }[];
}

/** Every label-like text of the notebook's outputs, each tagged with where it came from. */
export function shownTexts(nb: Notebook): { where: string; text: string }[] {
  const out: { where: string; text: string }[] = [];
  outputsOf(nb).forEach((o, i) => {
    if (!o.data) return;
    for (const mime of ["text/html", "image/svg+xml", "text/plain", "text/markdown"]) {
      const t = join1(o.data[mime]);
      if (t) out.push({ where: `output ${i} ${mime}`, text: t });
    }
    const d = o.data[MIME_FIGURE] as FigureLabels | undefined;
    if (d) {
      for (const [k, p] of (d.panels ?? []).entries()) {
        for (const l of [...(p.x?.labels ?? []), ...(p.y?.labels ?? [])]) out.push({ where: `output ${i} figure panel ${k} axis`, text: l });
        for (const s of [...(p.series ?? []), ...(p.stacks ?? [])]) out.push({ where: `output ${i} figure panel ${k} series`, text: s.name });
      }
      for (const e of d.legend ?? []) out.push({ where: `output ${i} figure legend`, text: e.label });
    }
  });
  return out;
}

/** The shown texts that carry a byte-level BPE marker (empty when the notebook reads clean). */
export function bpeMarkersShown(nb: Notebook): string[] {
  return shownTexts(nb)
    .filter((s) => BPE_MARKERS.test(s.text))
    .map((s) => `${s.where}: …${s.text.slice(Math.max(0, s.text.search(BPE_MARKERS) - 30), s.text.search(BPE_MARKERS) + 30)}…`);
}
