/**
 * The check that every number in CLAIMS.md comes from a notebook: each number token of the file must
 * be (a) a number of a findings output of the notebooks it was built from (value, interval bounds,
 * n, or inside a quantity / model / notebook file name), formatted as CLAIMS.md formats it, or (b) in the
 * paper's side or a rule's bound (the CLAIMS constants, typed with their place in the paper), or (c)
 * the "95" of "95 %", or (d) an "inconclusive" verdict's needed n, re-derived here from the findings with
 * the formula docs/claims.md states (written out again below, not imported), for every pair of findings
 * of one claim and tier and every finding against every bound. Used on fixture notebooks and on the
 * executed notebooks of `npm run reproduce`.
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
  const found = collectFindings(notebooks);
  const bounds = Object.values(CLAIMS).flatMap((c) => (c.rule.kind === "threshold" ? [c.rule.above] : []));
  for (const a of found) {
    for (const b of found) if (a !== b && a.claim === b.claim && a.tier === b.tier) addNeeded(allowed, a, b);
    for (const x of bounds) addNeeded(allowed, a, { value: x, ci95: null, n: 1 });
  }
  return (markdown.match(NUMBER) ?? []).map((m) => m.replace(/^[-+]/, "")).filter((m) => !allowed.has(m));
}

/** n* = ⌊((h_a√n_a + h_b√n_b)/|a − b|)²⌋ + 1 with the half-widths that face each other (docs/claims.md). */
function addNeeded(allowed: Set<string>, a: Estimate, b: Estimate): void {
  const lowA = a.ci95?.[0] ?? a.value,
    highA = a.ci95?.[1] ?? a.value;
  const lowB = b.ci95?.[0] ?? b.value,
    highB = b.ci95?.[1] ?? b.value;
  const [ha, hb] = a.value > b.value ? [a.value - lowA, highB - b.value] : [highA - a.value, b.value - lowB];
  const d = Math.abs(a.value - b.value);
  const s = ha * Math.sqrt(a.n) + hb * Math.sqrt(b.n);
  if (d > 0 && s > 0) allowed.add(String(Math.floor((s / d) ** 2 + 1e-9) + 1));
}

interface Estimate {
  value: number;
  ci95: [number, number] | null;
  n: number;
}
