/**
 * The claims table (CLAIMS.md): each claim of the paper, what the paper reports, what the executed
 * notebooks measured per model and tier, and a verdict — built only from the notebooks' findings
 * outputs (findings.ts `readFindings`), never from typed numbers. The paper's side is typed here,
 * with where in the paper it comes from. docs/claims.md explains each claim's quantity and rule.
 *
 * Verdicts are mechanical, per tier, from one quantity per claim (the `rule` of each claim) and its
 * 95 % intervals:
 *   groups     one paradigm's value should be higher than the other's (absorption: ARM > MDM);
 *              every (ARM, MDM) pair of models is compared;
 *   threshold  each model's value should be above a bound (angle share > 50 %);
 *   within     per model, quantity a should exceed quantity b (shallow band vs deep band).
 * A comparison supports the claim when the intervals are separated the paper's way (or, for a count
 * without an interval, the values are), contradicts it when separated the other way, and is unclear
 * when they overlap. Per tier:
 *   reproduced             every comparison supports;
 *   models disagree        some support and some contradict (the verdict names which, and which way);
 *   not reproduced         some contradict and none supports (one counter-example refutes a claim made
 *                          of every model; the overlapping rest cannot rescue it);
 *   inconclusive at this n none contradicts and some overlap — with the n the observed differences
 *                          would need (`neededN`);
 *   not measured           the tier lacks what the rule reads (no MDM on it, or no notebook reported the
 *                          quantity there), saying which.
 */
import { paradigmOf, type Paradigm } from "../families/index.js";
import { escapeMarkdown, markdownCode } from "./escape.js";
import { CLAIM_IDS, MIME_FINDINGS, readFindings, type ClaimId, type Finding } from "./findings.js";

type Rule =
  | { kind: "groups"; quantity: RegExp; higher: Paradigm; reads: string }
  | { kind: "threshold"; quantity: RegExp; above: number; only?: Paradigm; reads: string }
  | { kind: "within"; a: RegExp; b: RegExp; names: [string, string]; reads: string };

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
    rule: {
      kind: "threshold",
      quantity: /^top-1 key at position 0/,
      above: 50,
      only: "ARM",
      reads: "share of (step, layer) cells whose most-attended key is position 0 > 50 %, per ARM",
    },
  },
  "anchors-float-mdm": {
    title: "MDMs' anchors float across denoising steps and layers",
    paper: "qualitative (paper Fig. 2, LLaDA-8B: several anchors and a moving front in layer 0, one dominant column in layer 31)",
    rule: {
      kind: "threshold",
      // The shallow layer only: the paper's own deep layer shows one dominant column (a count of 1 there is its picture).
      quantity: /^distinct anchor positions \(shallow/,
      above: 1,
      only: "MDM",
      reads: "distinct anchor positions over the steps at the shallow layer > 1, per MDM",
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
    rule: {
      kind: "within",
      a: /shallow band/,
      b: /deep band/,
      names: ["shallow band", "deep band"],
      reads: "structural share of anchors, shallow band > deep band, per model",
    },
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

export const VERDICTS = ["reproduced", "not reproduced", "models disagree", "inconclusive at this n", "not measured"] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface SourcedFinding extends Finding {
  /** The notebook file the finding was read from. */
  source: string;
}

/** One tier's verdict on one claim. */
export interface TierVerdict {
  tier: string;
  verdict: Verdict;
  /** Why, in words: the rule, and which models were compared which way. */
  why: string;
  /** Inconclusive: the n per model at which the observed differences would separate (null when none would). */
  neededN?: number | null;
  /** The smallest and largest n of the findings the rule read (absent when it read none). */
  n?: [number, number];
}

export interface ClaimResult {
  claim: ClaimId;
  findings: SourcedFinding[];
  /** Verdict per tier present (tiny, real, user…). */
  verdicts: TierVerdict[];
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

/**
 * Every finding of the given sources, with its source file. A source is an executed notebook (parsed .ipynb)
 * or a findings file: one findings record `{ notebook, findings[] }` as a script writes it (e.g. a large run's
 * merged findings, scripts/measure-sink.ts). Both go through the same checks (`readFindings`).
 */
export function collectFindings(notebooks: readonly { file: string; json: unknown }[]): SourcedFinding[] {
  return notebooks.flatMap(({ file, json }) => {
    const cells = (json as { cells?: unknown } | null)?.cells;
    const record = cells === undefined && Array.isArray((json as { findings?: unknown } | null)?.findings);
    // A findings file is read as a notebook with one output holding it, so it meets exactly the notebook's checks.
    const nb = record ? { cells: [{ outputs: [{ data: { [MIME_FINDINGS]: json } }] }] } : json;
    return readFindings(nb, file).flatMap((rec) => rec.findings.map((f) => ({ ...f, source: file })));
  });
}

/** A value with its 95 % interval (null: a count or single measurement) and the samples behind it. */
export type Estimate = Pick<Finding, "value" | "ci95" | "n">;

function lo(f: Estimate): number {
  return f.ci95 ? f.ci95[0] : f.value;
}
function hi(f: Estimate): number {
  return f.ci95 ? f.ci95[1] : f.value;
}

export type Separation = "supports" | "contradicts" | "unclear";

/** Is `a` above `b` (a finding or a bound), below it, or neither (intervals overlap)? A bound is met only strictly above. */
export function separation(a: Estimate, b: Estimate | number): Separation {
  if (typeof b === "number") return lo(a) > b ? "supports" : hi(a) <= b ? "contradicts" : "unclear";
  if (lo(a) > hi(b)) return "supports";
  if (hi(a) < lo(b)) return "contradicts";
  return "unclear";
}

/**
 * The n (per model) at which the observed difference between `a` and `b` would separate their 95 %
 * intervals, if the effect stays what it is and each interval narrows as 1/√n (as a bootstrap interval
 * of a mean does): with d = |a − b| and h_a, h_b the half-widths that face each other (a's lower half
 * and b's upper half when a > b, the other halves when a < b; 0 for a bound or a value without an
 * interval), at a common n the facing halves are h_a·√(n_a/n) and h_b·√(n_b/n), and the intervals
 * separate once their sum is below d, i.e. once n > x with
 *
 *   x = ((h_a·√n_a + h_b·√n_b) / d)²,   n* = ⌊x⌋ + 1   (the smallest integer above x).
 *
 * e.g. a = 47.5 [34.17, 59.58] (n 60) vs b = 62.9 [49.58, 75] (n 60): d = 15.4, h_a = 12.08, h_b = 13.32,
 * x = 60·(25.4/15.4)² = 163.2, n* = 164. Null when d = 0 or neither side has an interval: no n would
 * separate them.
 */
export function neededN(a: Estimate, b: Estimate | number): number | null {
  const B: Estimate = typeof b === "number" ? { value: b, ci95: null, n: 1 } : b;
  const d = Math.abs(a.value - B.value);
  const up = a.value > B.value;
  const ha = up ? a.value - lo(a) : hi(a) - a.value;
  const hb = up ? hi(B) - B.value : B.value - lo(B);
  const spread = ha * Math.sqrt(a.n) + hb * Math.sqrt(B.n);
  if (!(d > 0) || !(spread > 0)) return null;
  // The tolerance counts an x that rounding put just below an integer (15.9999999) as that integer.
  return Math.floor((spread / d) ** 2 + 1e-9) + 1;
}

/** One comparison a rule makes: which models (in words), which way it came out, and what it would need. */
export interface Comparison {
  /** e.g. "tiny-llama above tiny-llada" — the way the values lie, named. */
  observed: string;
  /** e.g. "tiny-llama vs tiny-llada" */
  pair: string;
  outcome: Separation;
  neededN: number | null;
  /** Which way the observed difference points (said of overlapping intervals). */
  direction: "the paper's way" | "the other way" | "neither way";
}

/** Compare finding `a` (expected higher) with finding or bound `b`, naming them `aName` and `bName`. */
export function comparison(a: Estimate, b: Estimate | number, aName: string, bName: string): Comparison {
  const bv = typeof b === "number" ? b : b.value;
  const word =
    typeof b === "number" ? (a.value > bv ? "above" : "at or below") : a.value > bv ? "above" : a.value < bv ? "below" : "equal to";
  return {
    observed: `${aName} ${word} ${bName}`,
    pair: `${aName} vs ${bName}`,
    outcome: separation(a, b),
    neededN: neededN(a, b),
    direction: a.value > bv ? "the paper's way" : a.value < bv ? "the other way" : "neither way",
  };
}

const other = (p: Paradigm): Paradigm => (p === "ARM" ? "MDM" : "ARM");

/** A finding's name in a verdict: its model, and its quantity too when the model has several findings the rule reads. */
function nameIn(f: Finding, read: readonly Finding[]): string {
  return read.filter((x) => x.model === f.model).length > 1 ? `${f.model} (${f.quantity})` : f.model;
}

/**
 * The comparisons a rule makes on one tier's findings of one claim, or why there are none ("not
 * measured"). `paradigms` are the paradigms of every model on the tier (from any claim's findings), so a
 * tier without an MDM says so instead of "no such number".
 */
function comparisons(
  rule: Rule,
  fs: readonly Finding[],
  paradigms: ReadonlySet<Paradigm>,
): { cmps: Comparison[]; read: Finding[] } | string {
  if (rule.kind === "groups") {
    const lowP = other(rule.higher);
    for (const p of [rule.higher, lowP]) if (!paradigms.has(p)) return `this tier has no ${p}`;
    const of = (p: Paradigm) => fs.filter((f) => rule.quantity.test(f.quantity) && paradigmOf(f.family) === p);
    const high = of(rule.higher),
      low = of(lowP);
    for (const [p, xs] of [
      [rule.higher, high],
      [lowP, low],
    ] as const)
      if (xs.length === 0) return `no ${p} on this tier reported this quantity`;
    const read = [...high, ...low];
    return { cmps: high.flatMap((h) => low.map((l) => comparison(h, l, nameIn(h, read), nameIn(l, read)))), read };
  }
  if (rule.kind === "threshold") {
    if (rule.only && !paradigms.has(rule.only)) return `this tier has no ${rule.only}`;
    const xs = fs.filter((f) => rule.quantity.test(f.quantity) && (rule.only === undefined || paradigmOf(f.family) === rule.only));
    if (xs.length === 0) return `no ${rule.only ?? "model"} on this tier reported this quantity`;
    return { cmps: xs.map((f) => comparison(f, rule.above, nameIn(f, xs), "the bound")), read: xs };
  }
  const cmps: Comparison[] = [];
  const read: Finding[] = [];
  for (const m of new Set(fs.map((f) => f.model))) {
    const a = fs.filter((f) => f.model === m && rule.a.test(f.quantity));
    const b = fs.filter((f) => f.model === m && rule.b.test(f.quantity));
    for (const x of a) for (const y of b) cmps.push(comparison(x, y, `${m}: ${rule.names[0]}`, rule.names[1]));
    if (a.length && b.length) read.push(...a, ...b);
  }
  return cmps.length ? { cmps, read } : "no model on this tier reported both numbers";
}

/**
 * The verdict from a rule's comparisons (the pure decision; see the module comment). Model names in
 * `why` are plain text: the Markdown renderer escapes the whole sentence.
 */
export function decide(reads: string, cmps: readonly Comparison[]): Omit<TierVerdict, "tier" | "n"> {
  const by = (o: Separation) => cmps.filter((c) => c.outcome === o);
  const list = (cs: Comparison[], key: "observed" | "pair") => cs.map((c) => c[key]).join(", ");
  const sup = by("supports"),
    con = by("contradicts"),
    unc = by("unclear");
  const rest = unc.length ? `; overlapping: ${list(unc, "pair")}` : "";
  if (sup.length === cmps.length) return { verdict: "reproduced", why: `${reads}: every comparison is separated the paper's way` };
  if (sup.length && con.length)
    return {
      verdict: "models disagree",
      why: `${reads}: separated the paper's way: ${list(sup, "observed")}; separated the other way: ${list(con, "observed")}${rest}`,
    };
  if (con.length) return { verdict: "not reproduced", why: `${reads}: separated the other way: ${list(con, "observed")}${rest}` };
  // Only overlaps (and perhaps some separated the paper's way): the largest n any overlap needs decides them all.
  const needs = unc.map((c) => c.neededN);
  const n = needs.some((x) => x === null) ? null : Math.max(...(needs as number[]));
  const ways = [...new Set(unc.map((c) => c.direction))].join(" or ");
  const decided = sup.length ? `; already separated the paper's way: ${list(sup, "observed")}` : "";
  return {
    verdict: "inconclusive at this n",
    neededN: n,
    why:
      `${reads}: intervals overlap for ${list(unc, "pair")} (the observed difference points ${ways})${decided}; ` +
      (n === null
        ? "no n would separate them at the observed values (a zero difference, or no interval to extrapolate from)"
        : `at the observed differences and spread they would separate at about n = ${n} per model`),
  };
}

/** The tiers' reading order: smallest models first; a data variant ("real · NQ-open") after its tier. */
const TIER_ORDER = ["tiny", "user", "real", "real-base"];
function tierRank(tier: string): [number, number] {
  const [base, ...variant] = tier.split(" · ");
  const i = TIER_ORDER.indexOf(base);
  return [i < 0 ? TIER_ORDER.length : i, variant.length > 0 ? 1 : 0];
}

/** Per claim: its findings and a verdict for every tier that any finding names, tiers in `TIER_ORDER`. */
export function judgeClaims(findingsIn: readonly SourcedFinding[]): ClaimResult[] {
  // sort is stable: tiers of equal rank (unknown ones) keep the order the findings give
  const tiers = [...new Set(findingsIn.map((f) => f.tier))].sort((a, b) => {
    const [x, y] = [tierRank(a), tierRank(b)];
    return x[0] - y[0] || x[1] - y[1];
  });
  const paradigmsOf = new Map(
    tiers.map((t) => [
      t,
      new Set(
        findingsIn
          .filter((f) => f.tier === t)
          .map((f) => paradigmOf(f.family))
          .filter((p): p is Paradigm => p !== undefined),
      ),
    ]),
  );
  return CLAIM_IDS.map((claim) => {
    const fs = findingsIn.filter((f) => f.claim === claim);
    const rule = CLAIMS[claim].rule;
    const verdicts: TierVerdict[] =
      tiers.length === 0
        ? [{ tier: "—", verdict: "not measured", why: "no executed notebook reported a number for this claim" }]
        : tiers.map((tier) => {
            const r = comparisons(
              rule,
              fs.filter((f) => f.tier === tier),
              paradigmsOf.get(tier)!,
            );
            if (typeof r === "string") return { tier, verdict: "not measured", why: `${rule.reads}: ${r}` };
            const ns = r.read.map((f) => f.n);
            return { tier, ...decide(rule.reads, r.cmps), n: [Math.min(...ns), Math.max(...ns)] as [number, number] };
          });
    return { claim, findings: fs, verdicts };
  });
}

/** A tier's verdict in the summary table: "real: inconclusive at this n (needs n = 164)". */
function summaryVerdict(v: TierVerdict): string {
  const needs = typeof v.neededN === "number" ? ` (needs n = ${v.neededN})` : "";
  return (v.tier === "—" ? "" : `${escapeMarkdown(v.tier)}: `) + v.verdict + needs;
}

/** A table cell of our own text (the CLAIMS constants): only the pipe and line breaks matter. */
function cell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** CLAIMS.md from executed notebooks (parsed .ipynb JSON) and findings files (`collectFindings`), with their file names. */
export function buildClaims(notebooks: readonly { file: string; json: unknown }[]): { markdown: string; results: ClaimResult[] } {
  const results = judgeClaims(collectFindings(notebooks));
  const out: string[] = [
    "# Claims of the paper, and what floatscope measured",
    "",
    "Built by `npm run reproduce` (notebook 10) or `scripts/render-claims.ts` from the findings of the executed notebooks and findings files " +
      `(${notebooks.map((n) => markdownCode(n.file)).join(", ") || "none"}); every number under "ours" is read from them. ` +
      "Verdicts compare 95 % intervals, per tier (docs/claims.md has each claim's quantity and rule): *reproduced* when every comparison is separated the way the paper says, " +
      "*models disagree* when some are separated the paper's way and some the other way (named below), " +
      "*not reproduced* when some are separated the other way and none the paper's way, " +
      "*inconclusive at this n* when the intervals overlap (with the n per model at which the observed differences would separate), " +
      "*not measured* when the tier lacks what the rule reads (saying what).",
    "",
    "| claim | paper | verdict |",
    "|---|---|---|",
    ...results.map(
      (r) => `| ${cell(CLAIMS[r.claim].title)} | ${cell(CLAIMS[r.claim].paper)} | ${r.verdicts.map(summaryVerdict).join("; ")} |`,
    ),
    "",
  ];
  for (const r of results) {
    const t = CLAIMS[r.claim];
    out.push(`## ${t.title}`, "", `\`${r.claim}\` · **paper:** ${t.paper}`, "");
    for (const v of r.verdicts) {
      const n = v.n ? ` (n = ${v.n[0] === v.n[1] ? v.n[0] : `${v.n[0]}–${v.n[1]}`})` : "";
      // `why` names models (user text): escaped as a whole, our words have no Markdown in them.
      out.push(`- **${v.tier === "—" ? "" : `${escapeMarkdown(v.tier)} tier: `}${v.verdict}**${n} — ${escapeMarkdown(v.why)}`);
    }
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

/** A tier's verdict with the n its findings had: "tiny: reproduced (n = 100)", "real: not measured". */
function verdictWithN(v: TierVerdict): string {
  const n = v.n ? [`n = ${v.n[0] === v.n[1] ? v.n[0] : `${v.n[0]}–${v.n[1]}`}`] : [];
  if (typeof v.neededN === "number") n.push(`needs n = ${v.neededN}`);
  return (v.tier === "—" ? "" : `${escapeMarkdown(v.tier)}: `) + v.verdict + (n.length ? ` (${n.join("; ")})` : "");
}

/**
 * Two sets of verdicts side by side, one row per claim: e.g. the claims notebook's own (its small
 * default n) and a committed large run's (findings/*.findings.json), each cell every tier's verdict with
 * the n it rests on. `headers` name the two columns. A claim missing from one side reads "—".
 */
export function verdictsSideBySide(left: readonly ClaimResult[], right: readonly ClaimResult[], headers: [string, string]): string {
  const side = (rs: readonly ClaimResult[], claim: ClaimId) => {
    const r = rs.find((x) => x.claim === claim);
    return r ? r.verdicts.map(verdictWithN).join("; ") : "—";
  };
  return [
    `| claim | ${escapeMarkdown(headers[0])} | ${escapeMarkdown(headers[1])} |`,
    "|---|---|---|",
    ...CLAIM_IDS.map((c) => `| ${cell(CLAIMS[c].title)} | ${side(left, c)} | ${side(right, c)} |`),
  ].join("\n");
}

/**
 * One findings file named with its provenance, as a Markdown list item: what the file records of the run
 * (a measurement script's commit, date and wall time, or a grid's fingerprint and floatscope version), the
 * n of its findings, and `committed`: the commit that last changed it, e.g. "91ffb05 on 2026-12-07" from
 * `git log` (a grid's findings file records no commit or date of its own: it is the same bytes wherever and
 * whenever its shards ran); null when git has no commit of it, undefined when unknown (said nothing of).
 * `json` is the parsed file; its findings are checked as `collectFindings` does.
 */
export function findingsFileLine(file: string, json: unknown, committed?: string | null): string {
  const fs = collectFindings([{ file, json }]);
  const p = (json as { provenance?: unknown }).provenance;
  const prov = (p !== null && typeof p === "object" ? p : {}) as Record<string, unknown>;
  const str = (k: string) => (typeof prov[k] === "string" ? (prov[k] as string) : undefined);
  const parts: string[] = [];
  const commit = str("commit");
  if (commit) parts.push(`run at commit ${markdownCode(commit.slice(0, 12))}${prov.dirty === true ? " (with uncommitted changes)" : ""}`);
  const date = str("date");
  if (date) parts.push(`on ${escapeMarkdown(date.slice(0, 10))}`);
  const wall = prov.wallSeconds;
  if (typeof wall === "number")
    parts.push(`wall time ${wall < 3600 ? `${formatClaimNumber(wall / 60)} min` : `${formatClaimNumber(wall / 3600)} h`}`);
  const grid = str("grid");
  if (grid)
    parts.push(
      `grid ${markdownCode(grid)}${str("fingerprint") ? ` (fingerprint ${markdownCode(str("fingerprint")!.slice(0, 19))}…)` : ""}`,
    );
  if (str("floatscope")) parts.push(`floatscope ${escapeMarkdown(str("floatscope"))}`);
  if (!commit && !date && !grid) parts.push("no provenance recorded in the file");
  const ns = fs.map((f) => f.n);
  const n = ns.length ? `, n = ${Math.min(...ns) === Math.max(...ns) ? ns[0] : `${Math.min(...ns)}–${Math.max(...ns)}`}` : "";
  const added = committed === undefined ? "" : committed === null ? "; not committed" : `; committed in ${escapeMarkdown(committed)}`;
  return `- ${markdownCode(file)}: ${fs.length} finding${fs.length === 1 ? "" : "s"}${n}; ${parts.join(", ")}${added}`;
}
