/**
 * Findings: the machine-readable numbers a figure notebook reports, emitted as one output so that
 * the claims table (CLAIMS.md) is built from executed notebooks, never typed by hand.
 *
 * A notebook ends with `show(findings("02-absorption", rows))`. The output carries
 * `application/vnd.floatscope.findings.v1+json` (read back by `readFindings`) and a plain-text
 * list for readers without our widgets.
 */
import { FloatscopeError } from "../util/errors.js";
import type { Displayable, MimeBundle } from "./mime.js";

export const MIME_FINDINGS = "application/vnd.floatscope.findings.v1+json";

/**
 * The paper's claims, one id each. A finding names the claim it is evidence for.
 * - `sink-fixed-arm`: ARMs put their sink on one fixed position (the first token) across layers.
 * - `anchors-float-mdm`: MDMs' anchors move across denoising steps and layers.
 * - `absorption-arm-vs-mdm`: the share of attention absorbed by anchors, ARM vs MDM (Fig. 3).
 * - `shallow-structural-deep-content`: shallow layers anchor structural tokens, deep layers content (RQ2).
 * - `angle-vs-norm`: floating keys win by direction (cos θ) more than by norm (Fig. 4).
 * - `retrieval-heads-deep`: retrieval heads sit in deep layers (Fig. 5).
 * - `rag-gain-mdm-vs-arm`: MDMs gain more from retrieved passages than ARMs (Table 1).
 * - `robust-distractors`: MDMs degrade less as distractors are added (Fig. 6).
 * - `robust-position`: MDMs depend less on the gold passage's position (Fig. 6).
 */
export const CLAIM_IDS = [
  "sink-fixed-arm",
  "anchors-float-mdm",
  "absorption-arm-vs-mdm",
  "shallow-structural-deep-content",
  "angle-vs-norm",
  "retrieval-heads-deep",
  "rag-gain-mdm-vs-arm",
  "robust-distractors",
  "robust-position",
] as const;
export type ClaimId = (typeof CLAIM_IDS)[number];

/** One measured number. */
export interface Finding {
  claim: ClaimId;
  /** Model folder name (e.g. "tiny-llada"). */
  model: string;
  /** Model family ("llama", "qwen2", "llada", "dream"). */
  family: string;
  /** "tiny", "real" or "user". */
  tier: string;
  /** What the number is, in words, with its unit ("absorption rate, mean over layers"). */
  quantity: string;
  value: number;
  /** 95 % interval where the value is a statistic over samples; null otherwise. */
  ci95: [number, number] | null;
  /** Samples behind the value. */
  n: number;
}

export interface FindingsRecord {
  notebook: string;
  findings: Finding[];
}

class Findings implements Displayable {
  constructor(readonly record: FindingsRecord) {}
  toMimeBundle(): MimeBundle {
    const lines = this.record.findings.map(
      (f) => `${f.claim} · ${f.model}: ${f.quantity} = ${f.value}` + (f.ci95 ? ` [${f.ci95[0]}, ${f.ci95[1]}]` : "") + ` (n=${f.n})`,
    );
    return {
      "text/plain": [`findings of ${this.record.notebook}:`, ...lines].join("\n"),
      [MIME_FINDINGS]: this.record,
    };
  }
}

/** Build the findings output of a notebook (validated: a bad finding fails the cell that made it). */
export function findings(notebook: string, rows: Finding[]): Displayable {
  rows.forEach((f, i) => checkFinding(f, `${notebook} findings[${i}]`));
  return new Findings({ notebook, findings: rows.map((f) => ({ ...f })) });
}

/**
 * Every findings record in a parsed .ipynb (nbformat 4): the `data[MIME_FINDINGS]` of its outputs,
 * in cell order. `file` names the notebook in errors.
 */
export function readFindings(notebook: unknown, file: string): FindingsRecord[] {
  const cells = (notebook as { cells?: unknown })?.cells;
  if (!Array.isArray(cells)) {
    throw new FloatscopeError("not a notebook", { file, field: "cells", expected: "an array of cells (nbformat 4)" });
  }
  const out: FindingsRecord[] = [];
  for (const cell of cells) {
    const outputs = (cell as { outputs?: unknown }).outputs;
    if (!Array.isArray(outputs)) continue;
    for (const o of outputs) {
      const rec = (o as { data?: Record<string, unknown> }).data?.[MIME_FINDINGS] as FindingsRecord | undefined;
      if (rec === undefined) continue;
      if (typeof rec.notebook !== "string" || !Array.isArray(rec.findings)) {
        throw new FloatscopeError("malformed findings output", { file, field: MIME_FINDINGS, expected: "{ notebook, findings[] }" });
      }
      rec.findings.forEach((f, i) => checkFinding(f, `${file} findings[${i}]`));
      out.push(rec);
    }
  }
  return out;
}

function checkFinding(f: Finding, where: string): void {
  const bad = (field: string, expected: string, found: unknown) =>
    new FloatscopeError("invalid finding", { file: where, field, expected, found: String(found) });
  if (!(CLAIM_IDS as readonly string[]).includes(f.claim)) throw bad("claim", `one of ${CLAIM_IDS.join(", ")}`, f.claim);
  for (const k of ["model", "family", "tier", "quantity"] as const) {
    if (typeof f[k] !== "string" || f[k] === "") throw bad(k, "a non-empty string", f[k]);
  }
  if (typeof f.value !== "number" || !Number.isFinite(f.value)) throw bad("value", "a finite number", f.value);
  if (!Number.isInteger(f.n) || f.n < 1) throw bad("n", "a positive integer", f.n);
  if (f.ci95 !== null) {
    const ok = Array.isArray(f.ci95) && f.ci95.length === 2 && f.ci95.every(Number.isFinite) && f.ci95[0] <= f.ci95[1];
    if (!ok) throw bad("ci95", "null or [low, high] with low ≤ high", JSON.stringify(f.ci95));
  }
}
