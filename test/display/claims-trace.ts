/**
 * The check that every number in CLAIMS.md comes from a notebook: each number token of the file must
 * be (a) a number of a findings output of the notebooks it was built from (value, interval bounds,
 * n, or inside a quantity / model / notebook file name), formatted as CLAIMS.md formats it, or (b) in the
 * paper's side or a rule's bound (the CLAIMS constants, typed with their place in the paper), or (c)
 * the "95" of "95 %". Used on fixture notebooks and on the executed notebooks of `npm run reproduce`.
 */
import { CLAIMS, collectFindings, formatClaimNumber } from "../../src/display/claims.js";

const NUMBER = /[-+]?\d+(?:\.\d+)?/g;

export function untracedNumbers(markdown: string, notebooks: readonly { file: string; json: unknown }[]): string[] {
  const allowed = new Set<string>(["95"]);
  const addText = (s: string) => {
    for (const m of s.match(NUMBER) ?? []) allowed.add(m.replace(/^[-+]/, ""));
  };
  for (const nb of notebooks) addText(nb.file); // the header names the notebooks it read
  for (const f of collectFindings(notebooks)) {
    for (const x of [f.value, ...(f.ci95 ?? []), f.n]) allowed.add(formatClaimNumber(x).replace(/^-/, ""));
    for (const s of [f.quantity, f.model, f.family, f.tier, f.source]) addText(s);
  }
  for (const c of Object.values(CLAIMS)) addText(c.paper + " " + c.title + " " + c.rule.reads);
  return (markdown.match(NUMBER) ?? []).map((m) => m.replace(/^[-+]/, "")).filter((m) => !allowed.has(m));
}
