/**
 * The RAG gain of the paper's Table 1 (claim `rag-gain-mdm-vs-arm`), per question: one model's scores
 * closed-book and with retrieval, paired by question, and each question's gain — the mean of its accuracy
 * gain and its F1 gain, in points (the paper's "Avg." column is a mean over its cells; notebook 06).
 * Pure functions over result rows (the runner's `EvalResult`, or a merged grid table's rows), used by the NQ
 * table (scripts/lib/nq-table1.ts) and by a grid's findings (src/cli/grid-findings.ts).
 *
 * Every number is over the *paired* questions: those with a successful row in both settings (a question
 * that failed in one setting is left out of both, and counted).
 */

/** The fields of a result row the pairing reads (an `EvalResult`, or a merged grid row). */
export interface ScoredRow {
  model: string;
  setting: string;
  id: string;
  accuracy?: number | null;
  f1?: number | null;
  error?: string | null;
}

export interface PairedScores {
  /** Question ids with a successful row in both settings, in the closed-book rows' order. */
  ids: string[];
  closed: { accuracy: number[]; f1: number[] };
  rag: { accuracy: number[]; f1: number[] };
  /** Questions with a row in either setting that are not paired (failed, or missing in the other). */
  unpaired: number;
}

const ok = (r: ScoredRow) => (r.error === undefined || r.error === null) && typeof r.accuracy === "number" && typeof r.f1 === "number";

/** One model's scores in two settings, paired by question id (the last row of an id wins, as in a results file). */
export function pairScores(rows: readonly ScoredRow[], model: string, closedSetting: string, ragSetting: string): PairedScores {
  const of = (setting: string) => {
    const m = new Map<string, ScoredRow>();
    for (const r of rows) if (r.model === model && r.setting === setting) m.set(r.id, r);
    return m;
  };
  const closed = of(closedSetting);
  const rag = of(ragSetting);
  const ids = [...closed.keys()].filter((id) => ok(closed.get(id)!) && rag.has(id) && ok(rag.get(id)!));
  const all = new Set([...closed.keys(), ...rag.keys()]);
  const pick = (m: Map<string, ScoredRow>, k: "accuracy" | "f1") => ids.map((id) => m.get(id)![k] as number);
  return {
    ids,
    closed: { accuracy: pick(closed, "accuracy"), f1: pick(closed, "f1") },
    rag: { accuracy: pick(rag, "accuracy"), f1: pick(rag, "f1") },
    unpaired: all.size - ids.length,
  };
}

/** Per paired question, in points: (accuracy gain + F1 gain) / 2, each gain = 100 · (with retrieval − closed-book). */
export function ragGains(p: PairedScores): number[] {
  return p.ids.map((_, i) => (100 * (p.rag.accuracy[i] - p.closed.accuracy[i]) + 100 * (p.rag.f1[i] - p.closed.f1[i])) / 2);
}
