/**
 * The claims table (CLAIMS.md): each claim of the paper, what the paper reports, what the executed
 * notebooks measured per model and tier, and a verdict — built only from the notebooks' findings
 * outputs (findings.ts `readFindings`), never from typed numbers. The paper's side is typed here,
 * with where in the paper it comes from.
 *
 * Verdicts are mechanical, per tier, from one quantity per claim (RULES) and its 95 % intervals:
 *   groups     one paradigm's value should be higher than the other's (absorption: ARM > MDM);
 *              every (ARM, MDM) pair of models is compared;
 *   threshold  each model's value should be above a bound (angle share > 50 %);
 *   within     per model, quantity a should exceed quantity b (shallow band vs deep band).
 * A comparison supports the claim when the intervals are separated the right way (or, for a count
 * without an interval, the values are), contradicts it when separated the wrong way, and is
 * unclear otherwise. All supporting → "reproduced"; contradicting and none supporting → "not
 * reproduced"; anything else → "inconclusive at this n". No finding → "not measured".
 */
import { paradigmOf, type Paradigm } from "../families/index.js";
import { escapeMarkdown, markdownCode } from "./escape.js";
import { CLAIM_IDS, readFindings, type ClaimId, type Finding } from "./findings.js";

type Rule =
  | { kind: "groups"; quantity: RegExp; higher: Paradigm; reads: string }
  | { kind: "threshold"; quantity: RegExp; above: number; only?: Paradigm; reads: string }
  | { kind: "within"; a: RegExp; b: RegExp; reads: string }
  | { kind: "manual"; reads: string };

export interface ClaimText {
  title: string;
  /** What the paper reports, with the place in the paper. */
  paper: string;
  rule: Rule;
}

/** The paper's side of each claim (arXiv 2601.07894; figure readings are approximate). */
export const CLAIMS: Record<ClaimId, ClaimText> = {
  "sink-fixed-arm": {
    title: "ARMs keep one fixed attention sink (the first token) across layers",
    paper: "qualitative (paper Fig. 1: one fixed sink column across layers in the ARM panel)",
    rule: { kind: "manual", reads: "no automatic test: read the numbers" },
  },
  "anchors-float-mdm": {
    title: "MDMs' anchors float across denoising steps and layers",
    paper: "qualitative (paper Fig. 2, LLaDA-8B: several anchors and a moving front in layer 0, one dominant column in layer 31)",
    rule: {
      kind: "threshold",
      quantity: /^distinct anchor positions/,
      above: 1,
      only: "MDM",
      reads: "distinct anchor positions over the steps > 1, per MDM",
    },
  },
  "absorption-arm-vs-mdm": {
    title: "ARMs absorb more attention into their sink than MDMs into their anchors",
    paper: "paper Fig. 3 (read off the plot, per layer): Llama ≈ 52–91 %, Qwen ≈ 12–83 %, LLaDA ≈ 9–32 %, Dream ≈ 4–55 %",
    rule: { kind: "groups", quantity: /rule upstream/, higher: "ARM", reads: "absorption with the paper's rule (upstream), ARM > MDM" },
  },
  "shallow-structural-deep-content": {
    title: "Shallow layers anchor structural tokens, deep layers content tokens",
    paper: "qualitative (paper, RQ2)",
    rule: { kind: "within", a: /shallow band/, b: /deep band/, reads: "structural share of anchors, shallow band > deep band, per model" },
  },
  "angle-vs-norm": {
    title: "Floating keys win by direction (cos θ) more than by norm",
    paper: "qualitative (paper Fig. 4, LLaDA-8B: shallow layers win on both cos θ and norm, deep layers mostly on cos θ)",
    rule: {
      kind: "threshold",
      quantity: /^angle share/,
      above: 50,
      reads: "angle share of the anchors' score advantage > 50 %, per model",
    },
  },
  "retrieval-heads-deep": {
    title: "Retrieval heads sit in deep layers",
    paper: "paper Fig. 5: high retrieval scores in LLaDA-8B layers 16–31 and Dream-7B layers 14–27",
    rule: {
      kind: "threshold",
      quantity: /deep half minus shallow half/,
      above: 0,
      only: "MDM",
      reads: "retrieval score, deep half minus shallow half > 0, per MDM",
    },
  },
  "rag-gain-mdm-vs-arm": {
    title: "MDMs gain more from retrieved passages than ARMs",
    paper: "paper Table 1, average gain with RAG: Llama +7.37, Qwen +9.64, Dream +13.23, LLaDA +25.68 points",
    rule: { kind: "groups", quantity: /RAG gain/, higher: "MDM", reads: "RAG gain, MDM > ARM" },
  },
  "robust-distractors": {
    title: "MDMs degrade less as distractors are added",
    paper: "qualitative (paper Fig. 6, contextual noise)",
    rule: { kind: "groups", quantity: /^accuracy drop/, higher: "ARM", reads: "accuracy drop from 0 to the most distractors, ARM > MDM" },
  },
  "robust-position": {
    title: "MDMs depend less on the gold passage's position",
    paper: "qualitative (paper Fig. 6, positional bias)",
    rule: {
      kind: "groups",
      quantity: /spread over gold positions/,
      higher: "ARM",
      reads: "accuracy spread over gold positions, ARM > MDM",
    },
  },
};

export type Verdict = "reproduced" | "not reproduced" | "inconclusive at this n" | "not measured";

export interface SourcedFinding extends Finding {
  /** The notebook file the finding was read from. */
  source: string;
}

export interface ClaimResult {
  claim: ClaimId;
  findings: SourcedFinding[];
  /** Verdict per tier present (tiny, real, user…). */
  verdicts: { tier: string; verdict: Verdict; why: string }[];
}

/** Numbers in CLAIMS.md: 3 significant digits (at least one decimal for |x| ≥ 100), as the test re-derives them. */
export function formatClaimNumber(x: number): string {
  if (Number.isInteger(x)) return String(x);
  const a = Math.abs(x);
  if (a >= 100) return x.toFixed(1);
  if (a >= 1) return x.toPrecision(3);
  if (a === 0) return "0";
  return x.toPrecision(3);
}

/** Every finding of the given executed notebooks, with its source file. */
export function collectFindings(notebooks: readonly { file: string; json: unknown }[]): SourcedFinding[] {
  return notebooks.flatMap(({ file, json }) =>
    readFindings(json, file).flatMap((rec) => rec.findings.map((f) => ({ ...f, source: file }))),
  );
}

type Cmp = "supports" | "contradicts" | "unclear";

function lo(f: Finding): number {
  return f.ci95 ? f.ci95[0] : f.value;
}
function hi(f: Finding): number {
  return f.ci95 ? f.ci95[1] : f.value;
}
/** Is a above b, below it, or neither (intervals overlap)? */
function compare(a: Finding, b: Finding): Cmp {
  if (lo(a) > hi(b)) return "supports";
  if (hi(a) < lo(b)) return "contradicts";
  return "unclear";
}

function judge(rule: Rule, fs: readonly Finding[]): { verdict: Verdict; why: string } {
  if (rule.kind === "manual") return { verdict: "inconclusive at this n", why: rule.reads };
  const cmps: Cmp[] = [];
  if (rule.kind === "groups") {
    const of = (p: Paradigm) => fs.filter((f) => rule.quantity.test(f.quantity) && paradigmOf(f.family) === p);
    const high = of(rule.higher),
      low = of(rule.higher === "ARM" ? "MDM" : "ARM");
    if (high.length === 0 || low.length === 0)
      return { verdict: "inconclusive at this n", why: `${rule.reads}: needs both ARMs and MDMs with this quantity` };
    for (const h of high) for (const l of low) cmps.push(compare(h, l));
  } else if (rule.kind === "threshold") {
    const xs = fs.filter((f) => rule.quantity.test(f.quantity) && (rule.only === undefined || paradigmOf(f.family) === rule.only));
    if (xs.length === 0) return { verdict: "inconclusive at this n", why: `${rule.reads}: no such number was reported` };
    for (const f of xs) cmps.push(lo(f) > rule.above ? "supports" : hi(f) <= rule.above ? "contradicts" : "unclear");
  } else {
    const models = [...new Set(fs.map((f) => f.model))];
    for (const m of models) {
      const a = fs.filter((f) => f.model === m && rule.a.test(f.quantity));
      const b = fs.filter((f) => f.model === m && rule.b.test(f.quantity));
      for (const x of a) for (const y of b) cmps.push(compare(x, y));
    }
    if (cmps.length === 0) return { verdict: "inconclusive at this n", why: `${rule.reads}: no model reported both numbers` };
  }
  // Words, not counts: every number in CLAIMS.md is a notebook's (or the paper's, or a rule's bound).
  const all = (c: Cmp) => cmps.every((x) => x === c);
  const any = (c: Cmp) => cmps.some((x) => x === c);
  if (all("supports")) return { verdict: "reproduced", why: `${rule.reads}: every comparison is separated the paper's way` };
  if (any("contradicts") && !any("supports"))
    return {
      verdict: "not reproduced",
      why: `${rule.reads}: ${all("contradicts") ? "every comparison is" : "comparisons are"} separated the other way${all("contradicts") ? "" : ", the rest overlap"}`,
    };
  return { verdict: "inconclusive at this n", why: `${rule.reads}: ${any("contradicts") ? "the models disagree" : "intervals overlap"}` };
}

/** Per claim: its findings and a verdict per tier. */
export function judgeClaims(findingsIn: readonly SourcedFinding[]): ClaimResult[] {
  return CLAIM_IDS.map((claim) => {
    const fs = findingsIn.filter((f) => f.claim === claim);
    const tiers = [...new Set(fs.map((f) => f.tier))];
    const verdicts =
      tiers.length === 0
        ? [{ tier: "—", verdict: "not measured" as Verdict, why: "no executed notebook reported a number for this claim" }]
        : tiers.map((tier) => ({
            tier,
            ...judge(
              CLAIMS[claim].rule,
              fs.filter((f) => f.tier === tier),
            ),
          }));
    return { claim, findings: fs, verdicts };
  });
}

/** A table cell of our own text (the CLAIMS constants): only the pipe and line breaks matter. */
function cell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** CLAIMS.md from executed notebooks (parsed .ipynb JSON, with their file names). */
export function buildClaims(notebooks: readonly { file: string; json: unknown }[]): { markdown: string; results: ClaimResult[] } {
  const results = judgeClaims(collectFindings(notebooks));
  const out: string[] = [
    "# Claims of the paper, and what floatscope measured",
    "",
    "Built by `npm run reproduce` from the findings outputs of the executed notebooks " +
      `(${notebooks.map((n) => markdownCode(n.file)).join(", ") || "none"}); every number under "ours" is read from them. ` +
      "Verdicts compare 95 % intervals (see src/display/claims.ts): *reproduced* when every comparison is separated the way the paper says, " +
      "*not reproduced* when some are separated the other way and none the paper's way, *inconclusive at this n* otherwise, " +
      "*not measured* when no notebook reported a number.",
    "",
    "| claim | paper | verdict |",
    "|---|---|---|",
    ...results.map(
      (r) =>
        `| ${cell(CLAIMS[r.claim].title)} | ${cell(CLAIMS[r.claim].paper)} | ${r.verdicts.map((v) => (v.tier === "—" ? v.verdict : `${escapeMarkdown(v.tier)}: ${v.verdict}`)).join("; ")} |`,
    ),
    "",
  ];
  for (const r of results) {
    const t = CLAIMS[r.claim];
    out.push(`## ${t.title}`, "", `\`${r.claim}\` · **paper:** ${t.paper}`, "");
    for (const v of r.verdicts) out.push(`- **${v.tier === "—" ? "" : `${escapeMarkdown(v.tier)} tier: `}${v.verdict}** — ${v.why}`);
    out.push("");
    if (r.findings.length === 0) continue;
    out.push("| model | family | tier | quantity | ours | 95 % interval | n | notebook |", "|---|---|---|---|---|---|---|---|");
    for (const f of r.findings) {
      out.push(
        // The findings' strings come from the notebooks (model folder names, quantities): user text, escaped.
        `| ${escapeMarkdown(f.model)} | ${escapeMarkdown(f.family)} | ${escapeMarkdown(f.tier)} | ${escapeMarkdown(f.quantity)} | ${formatClaimNumber(f.value)} | ${f.ci95 ? `[${formatClaimNumber(f.ci95[0])}, ${formatClaimNumber(f.ci95[1])}]` : "—"} | ${f.n} | ${escapeMarkdown(f.source)} |`,
      );
    }
    out.push("");
  }
  return { markdown: out.join("\n"), results };
}
