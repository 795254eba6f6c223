/**
 * Evaluation settings: which passages a question is asked with, and where the gold one goes.
 *
 *   closed-book   no passage (the paper's "w/o RAG"; the paper-style prompts then carry their dummy
 *                 passage, see prompts.ts)
 *   oracle        the gold passage only
 *   distractors   the gold passage among k distractors, at 0-based position p ∈ [0, k]
 *   all-golds     every gold passage, in file order (the long-answer oracle: a long answer's facts are
 *                 spread over 1–3 gold passages; training/real/decode.py `long_passages(…, "oracle")`)
 *   all-ctxs      every ctx as stored (the long-answer file stores the golds first, then the
 *                 distractors; decode.py `long_passages(…, "full")`)
 *
 * Distractors come from one of two sources:
 *   "record"  the record's own non-gold ctxs, in file order (Lost-in-the-Middle's multi-document
 *             files; the synthetic world's held-out set, whose distractors are about other held-out people
 *             and state the same relation half the time),
 *   "pool"    other questions' gold passages (for the NQ oracle file, which has one passage per
 *             question). A candidate is skipped when its normalised text contains a normalised answer
 *             of the question, or equals the question's own gold text, so no distractor answers it.
 *
 * Everything random is seeded by (seed, record id), so a question gets the same distractors and gold
 * position whatever else is evaluated with it (limits, resumes, batch order).
 */
import { createHash } from "node:crypto";
import { Rng } from "../util/rng.js";
import { SettingsError } from "../util/errors.js";
import { DatasetError, goldPassageIndex, type QaPassage, type QaRecord } from "./datasets.js";
import { normalizeAnswer } from "./metrics.js";

/** Where the gold passage goes: a fixed 0-based index, `row mod (k+1)` ("cycle"), or seeded ("random"). */
export type GoldPosition = number | "cycle" | "random";
export type DistractorSource = "record" | "pool";

export type EvalSetting =
  | { kind: "closed-book" }
  | { kind: "oracle" }
  | { kind: "all-golds" }
  | { kind: "all-ctxs" }
  | { kind: "distractors"; k: number; goldPosition: GoldPosition; source: DistractorSource; seed?: number };

export interface BuiltContext {
  passages: QaPassage[];
  /** Index of the gold passage in `passages` (the first one where there are several); null in closed-book. */
  goldIndex: number | null;
}

/** Canonical label of a setting, used in result rows and summary tables: "closed-book", "oracle", "gold@2/k4". */
export function settingLabel(s: EvalSetting): string {
  if (s.kind !== "distractors") return s.kind;
  const pos = typeof s.goldPosition === "number" ? String(s.goldPosition) : s.goldPosition;
  return `gold@${pos}/k${s.k}${s.source === "pool" ? "/pool" : ""}`;
}

export function validateSetting(s: EvalSetting): EvalSetting {
  const where = { file: "settings", field: "setting" };
  if (s.kind === "closed-book" || s.kind === "oracle" || s.kind === "all-golds" || s.kind === "all-ctxs") return s;
  if (s.kind !== "distractors")
    throw new SettingsError("Unknown evaluation setting", {
      ...where,
      expected: "closed-book | oracle | all-golds | all-ctxs | distractors",
      found: JSON.stringify((s as { kind: unknown }).kind),
    });
  if (!Number.isInteger(s.k) || s.k < 0)
    throw new SettingsError("Bad distractor count", { ...where, field: "k", expected: "an integer ≥ 0", found: String(s.k) });
  const p = s.goldPosition;
  if (typeof p === "number" ? !(Number.isInteger(p) && p >= 0 && p <= s.k) : p !== "cycle" && p !== "random") {
    throw new SettingsError("Bad gold position", {
      ...where,
      field: "goldPosition",
      expected: `an integer in [0, ${s.k}] (0-based), "cycle" or "random"`,
      found: JSON.stringify(p),
    });
  }
  if (s.source !== "record" && s.source !== "pool")
    throw new SettingsError("Bad distractor source", {
      ...where,
      field: "source",
      expected: '"record" or "pool"',
      found: JSON.stringify(s.source),
    });
  return s;
}

function streamOf(id: string): number {
  return createHash("sha256").update(id).digest().readUInt32LE(0);
}

function goldOf(record: QaRecord, file: string): QaPassage {
  const g = goldPassageIndex(record);
  if (g === undefined) {
    throw new DatasetError("Record has no gold passage", {
      file,
      field: `line ${record.line}: ctxs[*].isgold`,
      expected: "one ctx with isgold: true (oracle / distractor settings)",
    });
  }
  return record.ctxs[g];
}

/** Other questions' gold passages, for the "pool" source. Build once per file (all records, not just the evaluated ones). */
export class DistractorPool {
  readonly passages: QaPassage[];
  /** Pool index of each record's own gold passage (by record id). */
  private readonly own = new Map<string, number>();
  /** Normalised passage texts, padded with spaces, computed on first use. */
  private readonly normalized: (string | undefined)[] = [];

  constructor(records: readonly QaRecord[]) {
    this.passages = [];
    for (const r of records) {
      const g = goldPassageIndex(r);
      if (g === undefined) continue;
      this.own.set(r.id, this.passages.length);
      this.passages.push(r.ctxs[g]);
    }
  }

  /** k distinct passages for `record`, none of which is its own gold or contains one of its answers. */
  draw(record: QaRecord, k: number, rng: Rng, file: string): QaPassage[] {
    const own = this.own.get(record.id);
    const goldText = record.ctxs[goldPassageIndex(record) ?? -1]?.text;
    const answers = record.answers.map(normalizeAnswer).filter((a) => a !== "");
    const chosen = new Set<number>();
    const out: QaPassage[] = [];
    const n = this.passages.length;
    for (let tries = 0; out.length < k && tries < 50 * (k + 1) + n; tries++) {
      const i = Math.floor(rng.uniform() * n);
      if (i === own || chosen.has(i)) continue;
      chosen.add(i);
      const p = this.passages[i];
      if (p.text === goldText) continue;
      // Token-bounded (as Lost-in-the-Middle's `hasanswer`): a character test would reject every
      // passage for one-letter answers such as "S".
      const t = (this.normalized[i] ??= ` ${normalizeAnswer(p.text)} `);
      if (answers.some((a) => t.includes(` ${a} `))) continue;
      out.push(p);
    }
    if (out.length < k) {
      throw new DatasetError("Not enough distractor passages in the pool", {
        file,
        field: `line ${record.line}`,
        expected: `${k} passages without the answer`,
        found: String(out.length),
      });
    }
    return out;
  }
}

/**
 * The passages of one question in one setting.
 * @param pool needed for `source: "pool"` (build it from the whole file).
 */
export function buildContext(record: QaRecord, setting: EvalSetting, opts: { file?: string; pool?: DistractorPool } = {}): BuiltContext {
  const file = opts.file ?? "dataset";
  if (setting.kind === "closed-book") return { passages: [], goldIndex: null };
  const gold = goldOf(record, file);
  if (setting.kind === "oracle") return { passages: [gold], goldIndex: 0 };
  if (setting.kind === "all-golds") return { passages: record.ctxs.filter((c) => c.isgold === true), goldIndex: 0 };
  if (setting.kind === "all-ctxs") return { passages: [...record.ctxs], goldIndex: record.ctxs.indexOf(gold) };
  const { k } = setting;
  const rng = new Rng(setting.seed ?? 0, streamOf(record.id));
  let distractors: QaPassage[];
  if (setting.source === "record") {
    distractors = record.ctxs.filter((c) => c !== gold && c.isgold !== true).slice(0, k);
    if (distractors.length < k) {
      throw new DatasetError("Record has too few distractor passages", {
        file,
        field: `line ${record.line}: ctxs`,
        expected: `≥ ${k} non-gold ctxs (or source "pool")`,
        found: String(distractors.length),
      });
    }
  } else {
    if (!opts.pool)
      throw new SettingsError("Pool distractors need a DistractorPool", { field: "pool", expected: "new DistractorPool(allRecords)" });
    distractors = opts.pool.draw(record, k, rng, file);
  }
  const p = setting.goldPosition;
  const pos = p === "cycle" ? record.row % (k + 1) : p === "random" ? Math.floor(rng.uniform() * (k + 1)) : p;
  const passages = [...distractors.slice(0, pos), gold, ...distractors.slice(pos)];
  return { passages, goldIndex: pos };
}

/**
 * The settings of a gold-position sweep: the gold passage at every position 0..k among k distractors
 * (the Lost-in-the-Middle curve; the paper's rollout figures use positions 0, 4 and 9 of k = 9).
 * @example goldPositionSweep(9, "pool", { positions: [0, 4, 9] })
 */
export function goldPositionSweep(
  k: number,
  source: DistractorSource,
  options: { positions?: number[]; seed?: number } = {},
): EvalSetting[] {
  const positions = options.positions ?? Array.from({ length: k + 1 }, (_, i) => i);
  return positions.map((p) => validateSetting({ kind: "distractors", k, goldPosition: p, source, seed: options.seed }));
}
